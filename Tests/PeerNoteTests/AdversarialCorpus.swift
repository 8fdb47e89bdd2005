import Foundation
@testable import PeerNote

/// Legal but pathological histories, built through the op log, each family parameterised by a
/// size `n`: the shapes that made a command do quadratic work or run out of memory on a small
/// file (issue 47, items 3 to 5). `AdversarialCorpusTests` runs them at small sizes in `swift
/// test`; `make stress` writes them at four doubling sizes (`PEERNOTE_STRESS_DIR`) and times
/// the release tools on them (scripts/stress.sh, docs/ROBUSTNESS.md).
///
/// Every family is built in time linear in `n` (no merge per replica), and every file it gives
/// is one the library loads: `document(_:size:)` saves and reloads it.
enum AdversarialCorpus {
    enum Family: String, CaseIterable, Sendable {
        /// One replica's n changes, none depending on its own previous one: all n stay heads.
        /// (2n changes: each hangs off a chain of another replica's.)
        case manyHeads
        /// n notes, each deleted by its own replica, while one replica retitles every note.
        case manyDeleters
        /// n concurrent writes of one note's title, then n writes each naming one of them.
        case registerPreds
        /// n adds of one tag, then n removes, each naming one add.
        case tagStorm
        /// A note deleted concurrently by n replicas and moved n times.
        case moves
        /// A note deleted by one replica while another types n keystrokes into its body, one
        /// change each.
        case deleteVersusEdit
        /// n replicas retitle the notebook concurrently.
        case retitles
        /// n replicas each tag a note concurrently, and one change merges them all.
        case branches
        /// n replicas each type one character at one place in a note ("a|b") concurrently,
        /// appended in descending order of replica; the canonical order (a compact save, and the
        /// load of one) is ascending, where each insert goes after every earlier one.
        case samePlace
        /// 8 devices each type n/8 characters backwards at one place in a note ("a|b"): each
        /// character before the one the device typed last (the cursor kept in front of what it
        /// types), one change each, concurrently; appended device by device, so the canonical
        /// order interleaves them.
        case typingBackwards
        /// One device types n characters backwards at one place in a note ("a|b"), one change
        /// each, while n others, the k-th having seen the first k of them, each type one
        /// character at the cursor it saw (right before the k-th), with replica ids that sort
        /// before the typing device's. The file holds the typing in one block and the others'
        /// inserts appended in a second (in order of k), as a copy that had the typing saves what
        /// it takes in: a load replays that order (skipping the chain, one step a character, was
        /// quadratic there) before the canonical order.
        case chainSkipping
    }

    /// A history under construction: changes appended in a causal order, ops into the last one.
    struct Builder {
        var log = OpLog()
        let genesisReplica = ReplicaID(high: 0x0100_0000_0000_0000, low: 0)
        var time: Int64 = 1_700_000_000

        /// Replica number `r`'s id (distinct, ordered as the numbers are).
        static func replica(_ r: Int) -> ReplicaID { ReplicaID(high: 0x0100_0000_0000_0000 + UInt64(r), low: UInt64(r)) }

        /// Opens a change by replica `r` on top of `deps` (change indices); returns its index.
        @discardableResult
        mutating func change(by r: Int, deps: [Int], tick: Bool = true) -> Int {
            let agent = log.agent(for: Self.replica(r))
            if tick { time += 1 }
            return log.beginChange(agent: agent, deps: deps[...], time: time, author: "r\(r)", message: "", extra: [])
        }

        /// Appends an op to the open change; returns its first unit's id.
        @discardableResult
        mutating func op(_ body: OpBody, length: Int = 1, text: [Unicode.Scalar] = []) -> LocalID {
            let id = log.nextID
            log.append(body, length: length, scalars: text)
            return id
        }

        /// The document the history gives (its state applied from the ops).
        func document() throws -> Document {
            var state = DocState()
            try state.applyOps(of: log, from: 0, firstChange: 0)
            return Document(id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0x47)), genesis: ChangeID(replica: Self.replica(0), seq: 1),
                            log: log, state: state, replica: Self.replica(0), author: "reader")
        }
    }

    /// The smallest of the four doubling sizes `make stress` times each family at: the last is
    /// the size the issue reported (32,000 deleting devices, 320,000 keystrokes, 16,000
    /// branches) or beyond.
    static func stressSize(_ family: Family) -> Int {
        switch family {
        case .manyHeads, .registerPreds, .tagStorm: 16_000
        case .manyDeleters, .retitles: 4_000
        case .moves: 8_000
        case .deleteVersusEdit: 40_000
        case .branches: 2_000
        case .samePlace: 16_000
        case .typingBackwards: 16_000
        case .chainSkipping: 4_000
        }
    }

    /// The family's history at size `n`, as a document (saved and loaded back, so it is one the
    /// library reads).
    static func document(_ family: Family, size n: Int) throws -> Document {
        try Document.load(bytes(family, size: n))
    }

    /// The family's history at size `n`, as a file's bytes.
    static func bytes(_ family: Family, size n: Int) throws -> [UInt8] {
        let doc = try build(family, size: n).document()
        guard family == .chainSkipping else { return doc.save() }
        let typing = try Document.load(build(family, size: n, typingOnly: true).document().save())
        try typing.merge(doc)
        return typing.save(.incremental)
    }

    /// `typingOnly`: for `chainSkipping`, the typing device's changes alone.
    static func build(_ family: Family, size n: Int, typingOnly: Bool = false) -> Builder {
        var b = Builder()
        b.change(by: 0, deps: [])
        b.op(.setNotebookTitle("Stress: \(family.rawValue) \(n)", preds: []))
        switch family {
        case .manyHeads:
            // Replica 2 makes a chain of n changes; replica 1's change i depends on the chain's
            // change i alone (never on its own previous one, which it follows by Lamport
            // timestamp), so nothing depends on any of replica 1's changes.
            let note = b.op(.createNote(originLeft: .none, originRight: .none, created: b.time))
            var link = 0
            for i in 0 ..< n {
                link = b.change(by: 2, deps: [link])
                b.op(.addTag(note: note, "chain"))
                b.change(by: 1, deps: [link])
                b.op(.addTag(note: note, "t\(i % 16)"))
            }
        case .manyDeleters:
            var notes: [LocalID] = []
            var left = LocalID.none
            for _ in 0 ..< n {
                left = b.op(.createNote(originLeft: left, originRight: .none, created: b.time))
                notes.append(left)
            }
            for (i, note) in notes.enumerated() {
                b.change(by: 2 + i, deps: [0])
                b.op(.deleteNote(note: note, preds: []))
            }
            // One replica retitles every note, concurrently with every delete.
            b.change(by: 1, deps: [0])
            for note in notes { b.op(.setNoteTitle(note: note, "edited", preds: [])) }
        case .registerPreds:
            let note = b.op(.createNote(originLeft: .none, originRight: .none, created: b.time))
            var values: [LocalID] = []
            for i in 0 ..< n {
                b.change(by: 2 + i, deps: [0])
                values.append(b.op(.setNoteTitle(note: note, "title \(i)", preds: [])))
            }
            // One replica, on top of them all, overwrites them one at a time.
            b.change(by: 1, deps: Array(1 ... n))
            for (i, v) in values.enumerated() { b.op(.setNoteTitle(note: note, "again \(i)", preds: [v])) }
        case .tagStorm:
            let note = b.op(.createNote(originLeft: .none, originRight: .none, created: b.time))
            b.change(by: 1, deps: [0])
            let adds = (0 ..< n).map { _ in b.op(.addTag(note: note, "storm")) }
            b.change(by: 1, deps: [1])
            for a in adds { b.op(.removeTag(note: note, "storm", removes: [a])) }
        case .moves:
            let note = b.op(.createNote(originLeft: .none, originRight: .none, created: b.time))
            let other = b.op(.createNote(originLeft: note, originRight: .none, created: b.time))
            for i in 0 ..< n {
                b.change(by: 2 + i, deps: [0])
                b.op(.deleteNote(note: note, preds: []))
            }
            // One replica moves it n times to just after the other note, each move seeing the
            // one before (its place is the next element's, so nothing is scanned to place it).
            b.change(by: 1, deps: [0])
            var place = note
            var right = LocalID.none
            for _ in 0 ..< n {
                place = b.op(.moveNote(note: note, originLeft: other, originRight: right, preds: [place]))
                right = place
            }
        case .deleteVersusEdit:
            let note = b.op(.createNote(originLeft: .none, originRight: .none, created: b.time))
            b.change(by: 2, deps: [0])
            b.op(.deleteNote(note: note, preds: []))
            // Typing: one change per keystroke, each on top of the one before.
            var previous = 0
            var left = LocalID.none
            for _ in 0 ..< n {
                previous = b.change(by: 1, deps: [previous], tick: false)
                left = b.op(.insertText(note: note, originLeft: left, originRight: .none, contentStart: 0), length: 1, text: ["x"])
            }
        case .retitles:
            for i in 0 ..< n {
                b.change(by: 1 + i, deps: [0])
                b.op(.setNotebookTitle("Title \(i)", preds: []))
            }
        case .branches:
            // Each branch tags one note (creating notes at one place would time the list's
            // integration of concurrent inserts instead).
            let note = b.op(.createNote(originLeft: .none, originRight: .none, created: b.time))
            for i in 0 ..< n {
                b.change(by: 1 + i, deps: [0])
                b.op(.addTag(note: note, "b\(i)"))
            }
            b.change(by: 0, deps: Array(1 ... n))
            b.op(.setNotebookTitle("Merged \(n) branches", preds: [LocalID(agent: 0, counter: 0)]))
        case .samePlace:
            let note = b.op(.createNote(originLeft: .none, originRight: .none, created: b.time))
            let a = b.op(.insertText(note: note, originLeft: .none, originRight: .none, contentStart: 0), length: 2, text: ["a", "b"])
            for i in 0 ..< n {
                b.change(by: n - i, deps: [0], tick: false)
                b.op(.insertText(note: note, originLeft: a, originRight: a.advanced(by: 1), contentStart: 0), length: 1,
                     text: [Unicode.Scalar(UInt8(0x61 + i % 26))])
            }
        case .typingBackwards:
            let note = b.op(.createNote(originLeft: .none, originRight: .none, created: b.time))
            let a = b.op(.insertText(note: note, originLeft: .none, originRight: .none, contentStart: 0), length: 2, text: ["a", "b"])
            let devices = 8
            for d in 0 ..< devices {
                var previous = 0
                var right = a.advanced(by: 1)
                for i in 0 ..< max(n / devices, 1) {
                    previous = b.change(by: 1 + d, deps: [previous], tick: false)
                    right = b.op(.insertText(note: note, originLeft: a, originRight: right, contentStart: 0), length: 1,
                                 text: [Unicode.Scalar(UInt8(0x61 + (d + i) % 26))])
                }
            }
        case .chainSkipping:
            let note = b.op(.createNote(originLeft: .none, originRight: .none, created: b.time))
            let a = b.op(.insertText(note: note, originLeft: .none, originRight: .none, contentStart: 0), length: 2, text: ["a", "b"])
            // The typing device is replica n + 1; its k-th change is the k-th character.
            var typed: [(change: Int, id: LocalID)] = []
            var previous = 0
            var right = a.advanced(by: 1)
            for i in 0 ..< n {
                previous = b.change(by: n + 1, deps: [previous], tick: false)
                right = b.op(.insertText(note: note, originLeft: a, originRight: right, contentStart: 0), length: 1,
                             text: [Unicode.Scalar(UInt8(0x61 + i % 26))])
                typed.append((previous, right))
            }
            for (k, t) in typed.enumerated() where !typingOnly {
                b.change(by: 1 + k, deps: [t.change], tick: false)
                b.op(.insertText(note: note, originLeft: a, originRight: t.id, contentStart: 0), length: 1, text: ["-"])
            }
        }
        return b
    }
}
