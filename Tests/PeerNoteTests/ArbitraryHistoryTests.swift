import Foundation
import Testing
@testable @_spi(Diagnostics) import PeerNote

/// Histories no honest writer makes but a file can hold: inserts and moves whose origins are any
/// two elements their author's copy held (not the two around one place), deletes of any element,
/// register writes and tag removes naming any entries. Each is a legal history (every op names
/// only what is in its change's causal past), and every copy of it must read alike whatever
/// order the copies are merged in, and keep its bytes through compaction.
@Suite("Arbitrary legal histories")
struct ArbitraryHistoryTests {
    /// A replica of the simulation: a document whose changes are crafted through the op log.
    static func replica(_ base: Document, _ k: UInt64) -> Document {
        let d = Document(id: base.id, genesis: base.genesis, log: base.log, state: base.state,
                         replica: ReplicaID(high: 0x1000 + k, low: k &* 0x9E37_79B9), author: "r\(k)")
        return d
    }

    /// Appends one change by `doc`'s replica on top of its heads: one to four ops whose references
    /// are drawn from what the copy holds, with no regard for adjacency; then rebuilds the state
    /// (the new change comes last in the canonical order).
    static func craftChange(_ doc: Document, time: Int64, rng: inout SeededRandom) throws {
        let state = doc.state
        var slots: [LocalID] = []
        state.order.forEachElement { id, _, _ in slots.append(id) }
        let notes = state.noteStates
        _ = doc.log.beginChange(agent: doc.agent, time: time, author: doc.author, message: "")
        func pick(_ ids: [LocalID]) -> LocalID {
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
                doc.log.append(.insertText(note: n.id, originLeft: pick(body), originRight: pick(body), contentStart: 0), length: text.count, scalars: text)
            case (5, let n?) where !body.isEmpty:
                doc.log.append(.deleteText(note: n.id, target: body[Int.random(in: 0 ..< body.count, using: &rng)], reversed: false), length: 1)
            case (6, let n?):
                doc.log.append(.setNoteTitle(note: n.id, "t\(Int.random(in: 0 ..< 5, using: &rng))", preds: n.title.entries.map(\.id).filter { _ in Bool.random(using: &rng) }), length: 1)
            case (7, let n?):
                doc.log.append(.moveNote(note: n.id, originLeft: pick(slots), originRight: pick(slots), preds: n.position.entries.map(\.id)), length: 1)
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
                doc.log.append(.createNote(originLeft: pick(slots), originRight: pick(slots), created: time), length: 1)
            }
        }
        doc.state = try DocState.canonical(of: doc.log, workBudget: .max)
    }

    /// Several replicas, each making crafted changes and now and then merging another's copy.
    static func simulate(seed: UInt64, replicas: Int = 4, steps: Int = 40) throws -> [Document] {
        var rng = SeededRandom(state: seed)
        let base = Document(title: "T", author: "r0", id: UUID(uuid: (1, 2, 3, 4, 5, 6, 0x47, 8, 0x89, 10, 11, 12, 13, 14, 15, 16)),
                            replica: ReplicaID(high: 0x1000, low: 0), time: Date(timeIntervalSince1970: 1_700_000_000))
        let copies = (1 ... replicas).map { replica(base, UInt64($0)) }
        for step in 0 ..< steps {
            let i = Int.random(in: 0 ..< copies.count, using: &rng)
            if Int.random(in: 0 ..< 10, using: &rng) < 7 {
                try craftChange(copies[i], time: 1_700_000_000 + Int64(step), rng: &rng)
            } else {
                let j = Int.random(in: 0 ..< copies.count, using: &rng)
                if j != i { try copies[i].merge(copies[j]) }
            }
        }
        return copies
    }

    /// Every order of `xs`.
    static func permutations<T>(_ xs: [T]) -> [[T]] {
        guard xs.count > 1 else { return [xs] }
        return xs.indices.flatMap { i in
            permutations(Array(xs[..<i] + xs[(i + 1)...])).map { [xs[i]] + $0 }
        }
    }

    @Test("Copies of an arbitrary legal history merge alike in every order and keep their bytes through compaction", arguments: 1 ... 30)
    func convergesInEveryOrder(seed: UInt64) throws {
        let copies = try Self.simulate(seed: seed)
        // Each copy as a file: refused with one clear line, or read (here every one is legal).
        var files: [[UInt8]] = []
        for copy in copies {
            let bytes = copy.save(.compact)
            do {
                let loaded = try Document.load(bytes)
                #expect(loaded.notebook == copy.notebook, "seed \(seed): a copy reads back as it was")
                files.append(bytes)
            } catch {
                #expect(!error.description.contains("\n"), "seed \(seed): one line")
                Issue.record("seed \(seed): a legal copy was refused: \(error.description)")
            }
        }
        #expect(files.count == copies.count)
        // Merged in every order, the copies show one notebook and compact to one file.
        var results: [(notebook: Notebook, bytes: [UInt8])] = []
        for order in Self.permutations(Array(files.indices)) {
            let merged = try Document.load(files[order[0]])
            for k in order.dropFirst() { try merged.merge(try Document.load(files[k])) }
            results.append((merged.notebook, merged.save(.compact)))
        }
        let first = try #require(results.first)
        #expect(results.allSatisfy { $0.notebook == first.notebook }, "seed \(seed): merge order changes the notebook")
        #expect(results.allSatisfy { $0.bytes == first.bytes }, "seed \(seed): merge order changes the compact file")
        // Pairwise, both ways, through `merged(with:)` (built from the longer history).
        for a in files.indices {
            for b in files.indices where b > a {
                let x = try Document.load(files[a]), y = try Document.load(files[b])
                let xy = try x.merged(with: y).document, yx = try y.merged(with: x).document
                #expect(xy.notebook == yx.notebook, "seed \(seed): copies \(a) and \(b) merge differently by direction")
                #expect(xy.save(.compact) == yx.save(.compact), "seed \(seed): copies \(a) and \(b) compact differently by direction")
            }
        }
        // Compact, load, compact: the same bytes, the same notebook.
        let reloaded = try Document.load(first.bytes)
        #expect(reloaded.notebook == first.notebook, "seed \(seed): the compact file reads differently")
        #expect(reloaded.save(.compact) == first.bytes, "seed \(seed): compaction changes the history's bytes")
        // Format version 3: loads, reads alike, and converts back to the same version 2 bytes.
        let v3 = reloaded.save(.compact, writeStructures: true)
        let fromV3 = try Document.load(v3)
        #expect(fromV3.notebook == first.notebook, "seed \(seed): the version 3 file reads differently")
        #expect(fromV3.save(.compact) == first.bytes, "seed \(seed): version 3 does not convert back")
        #expect(fromV3.save(.compact, writeStructures: true) == v3, "seed \(seed): version 3 compaction is not stable")
        // Appended blocks (rows out of canonical order): read as the compact file reads.
        let appended = try Document.load(files[0])
        for k in files.indices.dropFirst() {
            try appended.merge(try Document.load(files[k]))
            let bytes = appended.save(.incremental)
            let read = try Document.load(bytes)
            #expect(read.notebook == appended.notebook, "seed \(seed): a file with appended blocks reads differently")
        }
        #expect(try Document.load(appended.save(.incremental)).save(.compact) == first.bytes, "seed \(seed): appended blocks compact differently")
    }
}
