#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Histories no honest writer makes but a file can hold, for tests and fuzzing: inserts and
/// moves whose origins are any two elements their author's copy held (not the two around one
/// place), deletes of any element, register writes and tag removes naming any entries. Each is
/// a legal history (every op names only what is in its change's causal past), so every copy of
/// it loads, and copies must read alike whatever order they are merged in
/// (`DocState.canonical`).
@_spi(Diagnostics) public enum ArbitraryHistory {
    /// `count` replicas of one new notebook, with fixed ids (so that a seed gives one history).
    public static func replicas(_ count: Int) -> [Document] {
        let base = Document(title: "T", author: "r0", id: UUID(uuid: (1, 2, 3, 4, 5, 6, 0x47, 8, 0x89, 10, 11, 12, 13, 14, 15, 16)),
                            replica: ReplicaID(high: 0x1000, low: 0), time: Date(timeIntervalSince1970: 1_700_000_000))
        return (0 ..< count).map { k in
            Document(id: base.id, genesis: base.genesis, log: base.log, state: base.state,
                     replica: ReplicaID(high: 0x1001 + UInt64(k), low: UInt64(k + 1) &* 0x9E37_79B9), author: "r\(k + 1)")
        }
    }

    /// Appends one change by `doc`'s replica on top of its heads: one to four ops whose
    /// references are drawn from what the copy holds, with no regard for adjacency; then
    /// rebuilds the state (the change comes last in the canonical order).
    public static func craftChange<G: RandomNumberGenerator>(_ doc: Document, time: Int64, using rng: inout G) throws(PeerNoteError) {
        let state = doc.state
        var slots: [LocalID] = []
        state.order.forEachElement { id, _, _ in slots.append(id) }
        let notes = state.noteStates
        _ = doc.log.beginChange(agent: doc.agent, time: time, author: doc.author, message: "")
        func pick(_ ids: [LocalID], _ rng: inout G) -> LocalID {
            let k = Int.random(in: 0 ... ids.count, using: &rng)
            return k == ids.count ? .none : ids[k]
        }
        let count = Int.random(in: 1 ... 4, using: &rng)
        for _ in 0 ..< count {
            let choice = notes.isEmpty ? 0 : Int.random(in: 0 ..< 10, using: &rng)
            let note = notes.isEmpty ? nil : notes[Int.random(in: 0 ..< notes.count, using: &rng)]
            var body: [LocalID] = []
            note?.body.forEachElement { id, _, _ in body.append(id) }
            switch (choice, note) {
            case (1 ... 4, let n?):
                let text = (0 ..< Int.random(in: 1 ... 3, using: &rng)).map { _ in Unicode.Scalar(UInt8.random(in: 97 ... 122, using: &rng)) }
                let left = pick(body, &rng), right = pick(body, &rng)
                doc.log.append(.insertText(note: n.id, originLeft: left, originRight: right, contentStart: 0), length: text.count, scalars: text)
            case (5, let n?) where !body.isEmpty:
                doc.log.append(.deleteText(note: n.id, target: body[Int.random(in: 0 ..< body.count, using: &rng)], reversed: false), length: 1)
            case (6, let n?):
                var preds: [LocalID] = []
                for e in n.title.entries where Bool.random(using: &rng) { preds.append(e.id) }
                doc.log.append(.setNoteTitle(note: n.id, "t\(Int.random(in: 0 ..< 5, using: &rng))", preds: preds), length: 1)
            case (7, let n?):
                let left = pick(slots, &rng), right = pick(slots, &rng)
                doc.log.append(.moveNote(note: n.id, originLeft: left, originRight: right, preds: n.position.entries.map(\.id)), length: 1)
            case (8, let n?):
                let tag = "g\(Int.random(in: 0 ..< 2, using: &rng))"
                if Bool.random(using: &rng) {
                    doc.log.append(.addTag(note: n.id, tag), length: 1)
                } else {
                    doc.log.append(.removeTag(note: n.id, tag, removes: n.adds(of: tag)), length: 1)
                }
            case (9, let n?):
                let preds = n.deleted.entries.map(\.id)
                doc.log.append(Bool.random(using: &rng) ? .deleteNote(note: n.id, preds: preds) : .restoreNote(note: n.id, preds: preds), length: 1)
            default:
                let left = pick(slots, &rng), right = pick(slots, &rng)
                doc.log.append(.createNote(originLeft: left, originRight: right, created: time), length: 1)
            }
        }
        do throws(ApplyFailure) { doc.state = try DocState.canonical(of: doc.log, workBudget: .max) } catch {
            throw .invalidDocument(offset: nil, message: "a crafted change does not apply: \(error.error)")
        }
    }

    /// `replicas` copies, each making crafted changes (about seven steps in ten) and otherwise
    /// merging another's copy, for `steps` steps.
    public static func simulate<G: RandomNumberGenerator>(replicas: Int, steps: Int, using rng: inout G) throws(PeerNoteError) -> [Document] {
        let copies = self.replicas(replicas)
        for step in 0 ..< steps {
            let i = Int.random(in: 0 ..< copies.count, using: &rng)
            if Int.random(in: 0 ..< 10, using: &rng) < 7 {
                try craftChange(copies[i], time: 1_700_000_000 + Int64(step), using: &rng)
            } else {
                let j = Int.random(in: 0 ..< copies.count, using: &rng)
                if j != i { try copies[i].merge(copies[j]) }
            }
        }
        return copies
    }
}

/// Random numbers drawn from bytes: each mixes the next eight bytes of the input (zeros once it
/// runs out) into a SplitMix64 state, so that a fuzz input steers `ArbitraryHistory.simulate`
/// and every input, however short, still gives numbers that vary.
@_spi(Diagnostics) public struct ByteStreamGenerator: RandomNumberGenerator {
    private let bytes: [UInt8]
    private var position = 0
    private var state: UInt64 = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public mutating func next() -> UInt64 {
        var v: UInt64 = 0
        for _ in 0 ..< 8 {
            v = v << 8 | UInt64(position < bytes.count ? bytes[position] : 0)
            position += 1
        }
        state = (state ^ v) &+ 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
