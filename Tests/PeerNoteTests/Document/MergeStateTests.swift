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
            r.sortedEntries.map { "\(name($0.id))=\(show($0.value))" }.joined(separator: ",")
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

    /// How the merge of `theirs` into `mine` takes in the changes, worked out as `absorb` does.
    enum Way { case asTheyCome, canonicalTail, rebuilt }

    @Test("A merge's state is the canonical order's, whichever way the merge takes the changes in")
    func mergedStateIsCanonical() throws {
        var rng = SeededRandom(state: 0x5EED_50A)
        var ways: [Way: Int] = [:]
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
            let lastBefore = mine.log.canonicallyLastHead, heads = mine.log.heads
            let firstChange = mine.log.changes.count, startLV = mine.log.lvCount
            try mine.merge(theirs)
            let log = mine.log
            let follows = firstChange < log.changes.count && (lastBefore.map { log.canonicallyBefore($0, firstChange) } ?? true)
                && log.firstOutOfCanonicalOrder(from: firstChange + 1) == nil
            let way: Way = follows ? .asTheyCome
                : log.canonicalTail(from: firstChange, startLV: startLV, headsBefore: heads) != nil ? .canonicalTail : .rebuilt
            if firstChange < log.changes.count { ways[way, default: 0] += 1 }
            let canonical = try DocState.canonical(of: log, workBudget: .max)
            #expect(Self.contents(mine.state, log.replicas) == Self.contents(canonical, log.replicas), "round \(round), \(way)")
            // And a reader of its compact save (which checks its state section against the history) agrees.
            let reread = try Document.load(mine.save(.compact))
            #expect(Self.contents(reread.state, reread.log.replicas) == Self.contents(canonical, log.replicas), "round \(round), \(way)")
        }
        // Each way was taken often (the middle one is what this suite is for).
        #expect((ways[.canonicalTail] ?? 0) > 50 && (ways[.rebuilt] ?? 0) > 10, "\(ways)")
    }

    @Test("On crafted histories (origins anywhere, not adjacent), a merge's state is the canonical order's too")
    func craftedHistoriesMergeCanonically() throws {
        var ways: [Way: Int] = [:]
        for seed in 1 ... 72 as ClosedRange<UInt64> {
            var rng = SeededRandom(state: 0xC0FFEE + seed)
            let copies = try ArbitraryHistory.simulate(replicas: 3, steps: 30, using: &rng)
            for (a, b) in [(0, 1), (1, 2), (2, 0), (1, 0)] {
                let mine = copies[a].fork(), theirs = copies[b]
                let lastBefore = mine.log.canonicallyLastHead, heads = mine.log.heads
                let firstChange = mine.log.changes.count, startLV = mine.log.lvCount
                try mine.merge(theirs)
                let log = mine.log
                guard firstChange < log.changes.count else { continue }
                let follows = (lastBefore.map { log.canonicallyBefore($0, firstChange) } ?? true)
                    && log.firstOutOfCanonicalOrder(from: firstChange + 1) == nil
                let way: Way = follows ? .asTheyCome
                    : log.canonicalTail(from: firstChange, startLV: startLV, headsBefore: heads) != nil ? .canonicalTail : .rebuilt
                ways[way, default: 0] += 1
                #expect(Self.contents(mine.state, log.replicas) == Self.contents(try DocState.canonical(of: log, workBudget: .max), log.replicas),
                        "seed \(seed), \(way)")
            }
        }
        // Both ways were taken (where the order of application decides the state: these histories).
        #expect((ways[.canonicalTail] ?? 0) > 2 && (ways[.rebuilt] ?? 0) > 20, "\(ways)")
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
        let heads = mine.log.heads, firstChange = mine.log.changes.count, startLV = mine.log.lvCount
        try mine.merge(theirs)
        #expect(mine.log.canonicalTail(from: firstChange, startLV: startLV, headsBefore: heads) != nil)
        #expect(Self.contents(mine.state, mine.log.replicas) == Self.contents(try DocState.canonical(of: mine.log, workBudget: .max), mine.log.replicas))
        #expect(mine.note(ids[7])?.title == "Seven" && mine.note(ids[9])?.isDeleted == true && mine.note(ids[5])?.body == "mine edits five")
    }

    @Test("A merge of concurrent edits of one note rebuilds the state")
    func concurrentEditsOfOneNoteRebuild() throws {
        let base = Document(title: "Base", author: "a")
        let ids = (0 ..< 10).map { base.addNote(title: "Note \($0)", body: "body \($0)") }
        let mine = try Document.load(base.save()), theirs = try Document.load(base.save())
        try mine.setBody(ids[3], "mine")
        try theirs.setBody(ids[3], "theirs")
        let heads = mine.log.heads, firstChange = mine.log.changes.count, startLV = mine.log.lvCount
        try mine.merge(theirs)
        // Which of the two edits comes first in canonical order depends on the replica ids: when
        // mine's comes after theirs, the merge cannot take theirs in after it.
        let tail = mine.log.canonicalTail(from: firstChange, startLV: startLV, headsBefore: heads)
        #expect((tail == nil) == mine.log.canonicallyBefore(firstChange, firstChange - 1))
        #expect(Self.contents(mine.state, mine.log.replicas) == Self.contents(try DocState.canonical(of: mine.log, workBudget: .max), mine.log.replicas))
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
