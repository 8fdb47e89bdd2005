import Foundation
import Testing
@testable @_spi(Diagnostics) import PeerNote

/// A merge's state: however a merge applies the changes it brings (as they come, in their
/// canonical order after the ones the copy had, or by rebuilding), the state is the one the
/// canonical order of all the changes gives (`DocState.canonical`).
@Suite struct MergeStateTests {
    /// Everything a state shows, by note id (deleted notes too): registers with every live
    /// value, tags, visible and deleted body text, and the order of notes with each place. Ids
    /// are named by replica (`replicas`, the log's), so that copies with other agent numbers compare.
    static func contents(_ s: DocState, _ replicas: [ReplicaID]) -> [String] {
        func name(_ id: LocalID) -> String { id.isNone ? "none" : "\(id.counter)@\(replicas[Int(id.agent)])" }
        func entries<V>(_ r: MVRegister<V>, _ show: (V) -> String) -> String {
            r.sortedEntries(replicas: replicas).map { "\(name($0.id))=\(show($0.value))" }.joined(separator: ",")
        }
        var out = ["title " + entries(s.title) { $0 }]
        var order: [String] = []
        s.order.forEachElement { place, note, visible in order.append("\(name(place))>\(name(note))\(visible ? "" : "-")") }
        out.append("order " + order.joined(separator: " "))
        out.append("in order " + s.allNoteSlotsInOrder.map { name(s.noteStates[$0].id) }.joined(separator: " "))
        var notes: [String] = []
        for n in s.noteStates {
            let adds = n.tags.addsByTag
            let tags = adds.keys.sorted { $0.string < $1.string }.map { "\($0.string):\(adds[$0]?.map(name).sorted() ?? [])" }
            notes.append("\(name(n.id)) \(n.created) deleted=\(n.isDeleted) [\(entries(n.deleted) { "\($0)" })] title=[\(entries(n.title) { $0 })] "
                         + "priority=[\(entries(n.priority) { "\($0)" })] position=[\(entries(n.position, name))] tags=\(tags) "
                         + "body=\(String(String.UnicodeScalarView(n.body.visibleElements))) dead=\(String(String.UnicodeScalarView(n.body.deletedElements)))")
        }
        return out + notes.sorted()
    }

    /// How the merge of `theirs` into `mine` takes in the changes, worked out as `absorb` does:
    /// as they come, in their canonical order after the ones the copy had, or with the parts
    /// both touched rebuilt alone.
    enum Way { case asTheyCome, canonicalTail, partsRebuilt }

    /// What a merge is about to find, taken before it: `Before.way(after:)` then says how it
    /// took the changes in, and which parts it rebuilt.
    struct Before {
        let lastBefore: Int?, heads: [Int], firstChange: Int, startLV: Int

        init(_ doc: Document) {
            (lastBefore, heads, firstChange, startLV) = (doc.log.canonicallyLastHead, doc.log.heads, doc.log.changes.count, doc.log.lvCount)
        }

        /// Nil when the merge brought nothing.
        func way(after log: OpLog) -> (way: Way, rebuilt: StateParts)? {
            guard firstChange < log.changes.count else { return nil }
            let follows = (lastBefore.map { log.canonicallyBefore($0, firstChange) } ?? true)
                && log.firstOutOfCanonicalOrder(from: firstChange + 1) == nil
            if follows { return (.asTheyCome, StateParts()) }
            let clashing = log.canonicalMerge(from: firstChange, startLV: startLV, headsBefore: heads).clashing
            return (clashing.isEmpty ? .canonicalTail : .partsRebuilt, clashing)
        }
    }

    /// Counts of merges by way and, for those that rebuilt parts, by kind of part.
    struct Tally: CustomStringConvertible {
        var ways: [Way: Int] = [:]
        var notes = 0, order = 0, title = 0

        mutating func count(_ w: (way: Way, rebuilt: StateParts)?) {
            guard let (way, rebuilt) = w else { return }
            ways[way, default: 0] += 1
            if !rebuilt.notes.isEmpty { notes += 1 }
            if rebuilt.order { order += 1 }
            if rebuilt.title { title += 1 }
        }

        subscript(_ way: Way) -> Int { ways[way] ?? 0 }
        var description: String { "\(ways), rebuilt notes \(notes), order \(order), title \(title)" }
    }

    @Test("A merge's state is the canonical order's, whichever way the merge takes the changes in")
    func mergedStateIsCanonical() throws {
        var rng = SeededRandom(state: 0x5EED_50A)
        var tally = Tally()
        for round in 0 ..< 300 {
            let (mine, theirs) = try MergeBaselineTests.copies(&rng, count: Int.random(in: 1 ... 10, using: &rng), moves: round % 3 == 0)
            // Sometimes a third copy's changes, merged into theirs first, so that the changes
            // brought come from two replicas and are not in canonical order among themselves.
            if round % 4 == 1 {
                let third = try Document.load(mine.save())
                if let n = third.notes.first?.id { try third.setBody(n, "third \(round)") }
                _ = third.addNote(title: "From the third")
                try theirs.merge(third)
            }
            let before = Before(mine)
            try mine.merge(theirs)
            let log = mine.log
            let way = before.way(after: log)?.way
            tally.count(before.way(after: log))
            let canonical = try DocState.canonical(of: log, workBudget: .max)
            #expect(Self.contents(mine.state, log.replicas) == Self.contents(canonical, log.replicas), "round \(round), \(way)")
            // And a reader of its compact save (which checks its state section against the history) agrees.
            let reread = try Document.load(mine.save(.compact))
            #expect(Self.contents(reread.state, reread.log.replicas) == Self.contents(canonical, log.replicas), "round \(round), \(way)")
        }
        // Each way was taken often.
        #expect(tally[.canonicalTail] > 50 && tally[.partsRebuilt] > 10, "\(tally)")
    }

    @Test("On crafted histories (origins anywhere, not adjacent), a merge's state is the canonical order's too")
    func craftedHistoriesMergeCanonically() throws {
        var tally = Tally()
        for seed in 1 ... 72 as ClosedRange<UInt64> {
            var rng = SeededRandom(state: 0xC0FFEE + seed)
            let copies = try ArbitraryHistory.simulate(replicas: 3, steps: 30, using: &rng)
            for (a, b) in [(0, 1), (1, 2), (2, 0), (1, 0)] {
                let mine = copies[a].fork(), theirs = copies[b]
                let before = Before(mine)
                try mine.merge(theirs)
                let log = mine.log
                guard let way = before.way(after: log) else { continue }
                tally.count(way)
                #expect(Self.contents(mine.state, log.replicas) == Self.contents(try DocState.canonical(of: log, workBudget: .max), log.replicas),
                        "seed \(seed), \(way.way)")
            }
        }
        // Both ways were taken (where the order of application decides the state: these histories).
        #expect(tally[.canonicalTail] > 2 && tally[.partsRebuilt] > 20, "\(tally)")
    }

    @Test("A merge of concurrent edits of other notes takes the changes in without rebuilding")
    func concurrentEditsOfOtherNotesAreAppliedInPlace() throws {
        let base = Document(title: "Base", author: "a")
        let ids = (0 ..< 40).map { base.addNote(title: "Note \($0)", body: "body \($0)", tags: ["t"]) }
        let mine = try Document.load(base.save()), theirs = try Document.load(base.save())
        try mine.setBody(ids[5], "mine edits five")
        _ = mine.addNote(title: "Mine's new note", body: "new")
        try theirs.setNoteTitle(ids[7], "Seven")
        try theirs.addTag(ids[8], "eight")
        try theirs.deleteNote(ids[9])
        let before = Before(mine)
        try mine.merge(theirs)
        #expect(before.way(after: mine.log)?.rebuilt.isEmpty == true)
        #expect(Self.contents(mine.state, mine.log.replicas) == Self.contents(try DocState.canonical(of: mine.log, workBudget: .max), mine.log.replicas))
        #expect(mine.note(ids[7])?.title == "Seven" && mine.note(ids[9])?.isDeleted == true && mine.note(ids[5])?.body == "mine edits five")
    }

    @Test("A merge of concurrent edits of one note rebuilds that note alone")
    func concurrentEditsOfOneNoteRebuildThatNote() throws {
        let base = Document(title: "Base", author: "a")
        let ids = (0 ..< 10).map { base.addNote(title: "Note \($0)", body: "body \($0)") }
        let mine = try Document.load(base.save()), theirs = try Document.load(base.save())
        try mine.setBody(ids[3], "mine")
        try theirs.setBody(ids[3], "theirs")
        let before = Before(mine)
        try mine.merge(theirs)
        // Which of the two edits comes first in canonical order depends on the replica ids: when
        // mine's comes after theirs, the merge rebuilds that note, and nothing else.
        let rebuilt = try #require(before.way(after: mine.log)).rebuilt
        let clash = mine.log.canonicallyBefore(before.firstChange, before.firstChange - 1)
        #expect(rebuilt.notes.count == (clash ? 1 : 0) && !rebuilt.order && !rebuilt.title)
        #expect(Self.contents(mine.state, mine.log.replicas) == Self.contents(try DocState.canonical(of: mine.log, workBudget: .max), mine.log.replicas))
    }

    /// One random edit of `doc` aimed at `ids[0]` or `ids[1]` most of the time (so that two copies
    /// edit the same note, its body, tags and registers, and the order of notes, often); an edit
    /// that does not apply (of a deleted note, of a tag that is not there) is skipped.
    static func sameNoteEdit(_ doc: Document, _ ids: inout [NoteID], _ k: Int, _ rng: inout SeededRandom) {
        let id = ids[Int.random(in: 0 ..< (Int.random(in: 0 ..< 4, using: &rng) == 0 ? ids.count : 2), using: &rng)]
        let length = doc.note(id)?.body.unicodeScalars.count ?? 0
        do {
            switch Int.random(in: 0 ..< 14, using: &rng) {
            case 0 ... 3: try doc.insertText(id, at: Int.random(in: 0 ... length, using: &rng), "\(k)\(["ab", "c", "def "][Int.random(in: 0 ..< 3, using: &rng)])")
            case 4: if length > 0 {
                let from = Int.random(in: 0 ..< length, using: &rng)
                try doc.deleteText(id, range: from ..< Swift.min(length, from + Int.random(in: 1 ... 4, using: &rng)))
            }
            case 5: try doc.setBody(id, "set \(k) \(Int.random(in: 0 ..< 3, using: &rng))")
            case 6: try doc.setNoteTitle(id, "title \(k) \(Int.random(in: 0 ..< 3, using: &rng))")
            case 7: try doc.addTag(id, "tag\(Int.random(in: 0 ..< 3, using: &rng))")
            case 8: try doc.removeTag(id, "tag\(Int.random(in: 0 ..< 3, using: &rng))")
            case 9: try doc.setPriority(id, [.low, .normal, .high][Int.random(in: 0 ..< 3, using: &rng)])
            case 10: if doc.note(id)?.isDeleted ?? true { try doc.restoreNote(id) } else { try doc.deleteNote(id) }
            case 11: try doc.moveNote(id, to: Int.random(in: 0 ..< Swift.max(1, doc.notes.count), using: &rng))
            case 12: ids.append(doc.addNote(title: "added \(k)", body: "new \(k)"))
            default: doc.setTitle("notebook \(k) \(Int.random(in: 0 ..< 3, using: &rng))")
            }
        } catch {
            return
        }
    }

    /// Three copies of a new notebook of a few notes (`notes` of them, drawn), each with a title,
    /// a body and one tag, and their ids.
    static func threeCopies(notes: ClosedRange<Int>, _ rng: inout SeededRandom) throws -> (copies: [Document], ids: [NoteID]) {
        let base = Document(title: "Base", author: "a")
        let ids = (0 ..< Int.random(in: notes, using: &rng)).map { base.addNote(title: "Note \($0)", body: "body \($0)", tags: ["t"]) }
        return ([try Document.load(base.save()), try Document.load(base.save()), try Document.load(base.save())], ids)
    }

    /// A round of `sameNoteEdit`s on some of `copies` (each, two times in three, up to
    /// `maxEdits` of them), then two copies drawn to merge: `a` and another, `b`.
    static func editRound(_ copies: [Document], _ ids: inout [NoteID], maxEdits: Int, _ rng: inout SeededRandom) -> (a: Int, b: Int) {
        for (k, doc) in copies.enumerated() where Int.random(in: 0 ..< 3, using: &rng) > 0 {
            for _ in 0 ..< Int.random(in: 1 ... maxEdits, using: &rng) { Self.sameNoteEdit(doc, &ids, k, &rng) }
        }
        let a = Int.random(in: 0 ..< copies.count, using: &rng)
        return (a, (a + Int.random(in: 1 ..< copies.count, using: &rng)) % copies.count)
    }

    /// 40 steps on three replicas of an arbitrary history (`ArbitraryHistory`): six times in ten
    /// a crafted change on one of them, else `merge(i, j, step)` of one into another.
    static func craftedSteps(_ rng: inout SeededRandom, merge: ([Document], Int, Int, Int) throws -> Void) throws {
        let copies = ArbitraryHistory.replicas(3)
        for step in 0 ..< 40 {
            let i = Int.random(in: 0 ..< copies.count, using: &rng)
            if Int.random(in: 0 ..< 10, using: &rng) < 6 {
                try ArbitraryHistory.craftChange(copies[i], time: 1_700_000_000 + Int64(step), using: &rng)
                continue
            }
            try merge(copies, i, (i + Int.random(in: 1 ..< copies.count, using: &rng)) % copies.count, step)
        }
    }

    @Test("Copies that edit the same notes and sync often: each merge's state is the canonical order's")
    func sameNoteClashesMergeCanonically() throws {
        var tally = Tally()
        for round in 0 ..< 120 {
            var rng = SeededRandom(state: 0x5A3E_0000 + UInt64(round))
            let made = try Self.threeCopies(notes: 2 ... 6, &rng)
            let copies = made.copies
            var ids = made.ids
            // Rounds of edits on each copy, then a merge of one copy into another (both ways, at
            // times), so that later merges start from states earlier merges built in part.
            for step in 0 ..< 12 {
                let (a, b) = Self.editRound(copies, &ids, maxEdits: 5, &rng)
                for (mine, theirs) in step % 3 == 2 ? [(copies[a], copies[b]), (copies[b], copies[a])] : [(copies[a], copies[b])] {
                    let before = Before(mine)
                    try mine.merge(theirs)
                    let way = before.way(after: mine.log)
                    tally.count(way)
                    let canonical = try DocState.canonical(of: mine.log, workBudget: .max)
                    #expect(Self.contents(mine.state, mine.log.replicas) == Self.contents(canonical, mine.log.replicas),
                            "round \(round), step \(step), \(String(describing: way?.way))")
                }
            }
        }
        // Parts of every kind were rebuilt, many times.
        #expect(tally[.partsRebuilt] > 300 && tally.notes > 300 && tally.order > 50 && tally.title > 50, "\(tally)")
    }

    @Test("A file whose appended blocks hold concurrent changes loads to the canonical order's state, from the state before them")
    func appendedConcurrentBlocksLoadCanonically() throws {
        var fromPrefix = 0, outOfOrder = 0
        for round in 0 ..< 60 {
            var rng = SeededRandom(state: 0xA99E_0000 + UInt64(round))
            let base = Document(title: "Base", author: "a")
            var ids = (0 ..< Int.random(in: 2 ... 6, using: &rng)).map { base.addNote(title: "Note \($0)", body: "body \($0)", tags: ["t"]) }
            let mine = try Document.load(base.save()), theirs = try Document.load(base.save())
            // Each copy appends blocks of its own edits; then MINE takes THEIRS in and appends
            // them as one more block (a merge in place), which may leave the canonical order.
            for (k, doc) in [mine, theirs].enumerated() {
                for _ in 0 ..< Int.random(in: 1 ... 3, using: &rng) {
                    for _ in 0 ..< Int.random(in: 1 ... 4, using: &rng) { Self.sameNoteEdit(doc, &ids, k, &rng) }
                    _ = doc.save(.incremental)
                }
            }
            try mine.merge(theirs)
            let bytes = mine.save(.incremental)
            let loaded = try Document.load(bytes)
            let canonical = try DocState.canonical(of: loaded.log, workBudget: .max)
            #expect(Self.contents(loaded.state, loaded.log.replicas) == Self.contents(canonical, loaded.log.replicas), "round \(round)")
            let reference = Document(id: loaded.id, genesis: loaded.genesis, log: loaded.log, state: canonical, replica: .random(), author: "")
            #expect(loaded.save(.compact) == reference.save(.compact), "round \(round)")
            // The same blocks through the replayer, to see which way it took (its bodies hold the
            // base block's placeholder text: `load` writes the state section's text in after).
            let blocks = try WireCodec.decodePayloads(BlockCodec.decode(bytes), fileSize: bytes.count)
            var replayer = BlockReplayer(genesis: try #require(blocks.first?.genesis))
            replayer.keepsStateBeforeDisorder = true
            replayer.state.workBudget = VerifiedFile.workBudget(fileSize: bytes.count)
            for block in blocks { try replayer.replay(block) }
            guard replayer.log.firstOutOfCanonicalOrder() != nil else { continue }
            outOfOrder += 1
            if try replayer.replayCanonically(workBudget: VerifiedFile.workBudget(fileSize: bytes.count), blockOffset: { _ in 0 }) { fromPrefix += 1 }
        }
        #expect(outOfOrder > 20 && fromPrefix == outOfOrder, "\(outOfOrder) files out of canonical order, \(fromPrefix) read from the state before it")
    }

    @Test("Copies of arbitrary legal histories (origins anywhere) that sync often merge to the canonical order's state")
    func craftedSameNoteClashesMergeCanonically() throws {
        var tally = Tally()
        for seed in 1 ... 200 as ClosedRange<UInt64> {
            var rng = SeededRandom(state: 0xA7B1_7000 + seed)
            try Self.craftedSteps(&rng) { copies, i, j, step in
                let before = Before(copies[i])
                try copies[i].merge(copies[j])
                let way = before.way(after: copies[i].log)
                tally.count(way)
                let log = copies[i].log
                #expect(Self.contents(copies[i].state, log.replicas) == Self.contents(try DocState.canonical(of: log, workBudget: .max), log.replicas),
                        "seed \(seed), step \(step), \(String(describing: way?.way))")
            }
        }
        #expect(tally[.partsRebuilt] > 300 && tally.notes > 300 && tally.order > 50, "\(tally)")
    }

    /// Merges `theirs` into a fork of `mine` and rebuilds the clashing parts again from `mine`'s
    /// state with no pieces' limit (every clashing note the way a long note goes), expecting the
    /// canonical order's state; returns whether a note's body started from its earlier state.
    static func rebuildFromEarlierState(_ mine: Document, _ theirs: Document, _ label: String) throws -> Bool {
        let old = mine.state, before = Before(mine)
        let merged = mine.fork()
        try merged.merge(theirs)
        let log = merged.log
        guard before.firstChange < log.changes.count else { return false }
        let (order, clashing) = log.canonicalMerge(from: before.firstChange, startLV: before.startLV, headsBefore: before.heads)
        guard !clashing.isEmpty else { return false }
        let canonical = contents(try DocState.canonical(of: log, workBudget: .max), log.replicas)
        var state = old
        try state.apply(newChanges: order, of: log, rebuilding: clashing, piecesLimit: 0)
        #expect(contents(state, log.replicas) == canonical, "\(label)")
        var full = old
        try full.apply(newChanges: order, of: log, rebuilding: clashing, piecesLimit: 0, fromEarlierState: false)
        #expect(contents(full, log.replicas) == canonical, "\(label), from the start")
        let earlier = try PartRebuild.fromEarlierState(of: old, parts: clashing, newChanges: order, log: log)
        return !clashing.order && earlier != nil
    }

    @Test("Notes rebuilt from their bodies before the first new change get the canonical order's state")
    func notesRebuiltFromEarlierStateAreCanonical() throws {
        var honest = 0, crafted = 0
        for round in 0 ..< 80 {
            var rng = SeededRandom(state: 0xEA71_0000 + UInt64(round))
            let made = try Self.threeCopies(notes: 2 ... 4, &rng)
            let copies = made.copies
            var ids = made.ids
            for step in 0 ..< 10 {
                let (a, b) = Self.editRound(copies, &ids, maxEdits: 6, &rng)
                if try Self.rebuildFromEarlierState(copies[a], copies[b], "round \(round), step \(step)") { honest += 1 }
                try copies[a].merge(copies[b])
            }
        }
        // Crafted histories: origins anywhere, deletes of anything, where the order ops are
        // applied in decides the state.
        for seed in 1 ... 120 as ClosedRange<UInt64> {
            var rng = SeededRandom(state: 0xEA72_0000 + seed)
            try Self.craftedSteps(&rng) { copies, i, j, step in
                if try Self.rebuildFromEarlierState(copies[i], copies[j], "seed \(seed), step \(step)") { crafted += 1 }
                try copies[i].merge(copies[j])
            }
        }
        #expect(honest > 150 && crafted > 100, "earlier states used: \(honest) honest, \(crafted) crafted")
    }

    @Test("A long note edited on both sides is rebuilt from its body before they parted")
    func longNoteRebuiltFromEarlierState() throws {
        let base = Document(title: "Base", author: "a")
        let id = base.addNote(title: "Long", body: "")
        // Typed a character a change, with a few deletes: past the pieces' limit.
        for k in 0 ..< 600 {
            try base.insertText(id, at: k / 2, String(UnicodeScalar(UInt8(97 + k % 26))))
            if k % 50 == 49 { try base.deleteText(id, range: k / 3 ..< k / 3 + 2) }
        }
        let mine = try Document.load(base.save()), theirs = try Document.load(base.save())
        for k in 0 ..< 300 { try mine.insertText(id, at: 10 + k, "m") }
        try mine.deleteText(id, range: 0 ..< 20)
        for k in 0 ..< 200 { try theirs.insertText(id, at: 100, k % 2 == 0 ? "t" : "T") }
        try theirs.deleteText(id, range: 5 ..< 30)
        // Whichever copy's changes come first in canonical order, merged into the other one they clash.
        for (a, b) in [(mine, theirs), (theirs, mine)] {
            let old = a.state, before = Before(a)
            let merged = a.fork()
            try merged.merge(b)
            let log = merged.log
            #expect(Self.contents(merged.state, log.replicas) == Self.contents(try DocState.canonical(of: log, workBudget: .max), log.replicas))
            let (order, clashing) = log.canonicalMerge(from: before.firstChange, startLV: before.startLV, headsBefore: before.heads)
            guard !clashing.isEmpty else { continue }
            #expect(log.pieces(touching: clashing, limit: Swift.max(64, log.changes.count / 16)) == nil)
            #expect(try PartRebuild.fromEarlierState(of: old, parts: clashing, newChanges: order, log: log) != nil)
        }
        // One of the two ways clashes: the later copy's changes come first for the other.
        let m = try Document.load(mine.save()), t = try Document.load(theirs.save())
        try m.merge(t)
        try t.merge(m)
        #expect(m.note(id)?.body == t.note(id)?.body)
    }

    @Test("Copies of a long note that merge round after round keep each body's arena to its elements")
    func repeatedMergesKeepArenasToTheirElements() throws {
        let base = Document(title: "Base", author: "a")
        let id = base.addNote(title: "Long", body: "")
        for k in 0 ..< 400 { try base.insertText(id, at: k, String(UnicodeScalar(UInt8(97 + k % 26)))) }
        let a = try Document.load(base.save()), b = try Document.load(base.save())
        var rebuiltFromEarlier = 0
        for round in 0 ..< 20 {
            for (k, doc) in [a, b].enumerated() {
                let length = doc.note(id)?.body.unicodeScalars.count ?? 0
                for j in 0 ..< 30 { try doc.insertText(id, at: (length / 3 * (k + 1) + j) % (length + j + 1), k == 0 ? "é" : "Z") }
            }
            for (mine, theirs) in [(a, b), (b, a)] {
                let old = mine.state, before = Before(mine)
                try mine.merge(theirs)
                let (order, clashing) = mine.log.canonicalMerge(from: before.firstChange, startLV: before.startLV, headsBefore: before.heads)
                if !clashing.isEmpty, try PartRebuild.fromEarlierState(of: old, parts: clashing, newChanges: order, log: mine.log) != nil { rebuiltFromEarlier += 1 }
                for note in mine.state.noteStates { #expect(note.body.arenaCount == note.body.totalCount, "round \(round)") }
            }
            #expect(a.note(id)?.body == b.note(id)?.body, "round \(round)")
        }
        #expect(rebuiltFromEarlier > 10, "\(rebuiltFromEarlier) merges rebuilt the note from its earlier body")
    }

    @Test("A merge that fails part way leaves the state as it was")
    func failedMergeRestoresState() throws {
        for concurrentEditsOfOneNote in [false, true] {
            let base = Document(title: "Base", author: "a")
            let ids = (0 ..< 6).map { base.addNote(title: "Note \($0)", body: "body \($0)") }
            let mine = try Document.load(base.save()), theirs = try Document.load(base.save())
            // Both type at the very start of a note: integrating the other's text there scans
            // what this copy typed, which costs work (`MergeRollbackTests`).
            try mine.insertText(ids[1], at: 0, "mine ")
            try theirs.insertText(ids[concurrentEditsOfOneNote ? 1 : 2], at: 0, "theirs ")
            try mine.insertText(ids[2], at: 0, "mine too ")
            let before = Self.contents(mine.state, mine.log.replicas), notebook = mine.notebook, changes = mine.log.changes.count
            // No integration work allowed: the merge fails once the log has taken the changes in.
            mine.state.workBudget = 0
            #expect(throws: PeerNoteError.self) { try mine.merge(theirs) }
            #expect(Self.contents(mine.state, mine.log.replicas) == before)
            #expect(mine.state.workBudget == 0)
            #expect(mine.notebook == notebook && mine.log.changes.count == changes)
            mine.state.workBudget = .max
            try mine.merge(theirs)
            #expect(Self.contents(mine.state, mine.log.replicas)
                    == Self.contents(try DocState.canonical(of: mine.log, workBudget: .max), mine.log.replicas))
        }
    }
}
