import Foundation
import Testing
@testable import PeerNote

/// `NotebookDiff(from: MergeBaseline, to:)`: what a merge changed, found from the notes its
/// changes name, is what comparing the whole notebooks before and after finds, in the same order.
@Suite struct MergeBaselineTests {
    /// A notebook of `count` notes (some with one title), and two copies of it each edited at
    /// random: bodies, titles (often to a title another note has), tags, priorities, deletions,
    /// restorations, new notes, and moves when `moves`.
    static func copies(_ rng: inout SeededRandom, count: Int, moves: Bool) throws -> (mine: Document, theirs: Document) {
        let base = Document(title: "Base", author: "a")
        var ids: [NoteID] = []
        for i in 0 ..< count {
            ids.append(base.addNote(title: i % 4 == 0 ? "Same" : "Note \(i)", body: "body \(i)", tags: ["t\(i % 3)"]))
        }
        let mine = try Document.load(base.save()), theirs = try Document.load(base.save())
        for (k, doc) in [mine, theirs].enumerated() {
            for _ in 0 ..< Int.random(in: 0 ... 6, using: &rng) {
                let id = ids[Int.random(in: 0 ..< ids.count, using: &rng)]
                let deleted = doc.note(id)?.isDeleted ?? true
                do {
                    switch Int.random(in: 0 ..< (moves ? 9 : 8), using: &rng) {
                    case 0: try doc.setBody(id, "edited \(k) \(Int.random(in: 0 ..< 3, using: &rng))")
                    case 1: try doc.setNoteTitle(id, ["Same", "Other", "Note 1", "New \(k)"][Int.random(in: 0 ..< 4, using: &rng)])
                    case 2: try doc.addTag(id, "tag\(k)")
                    case 3: try doc.setPriority(id, .high)
                    case 4: try doc.deleteNote(id)
                    case 5: if deleted { try doc.restoreNote(id) } else { try doc.removeTag(id, "t0") }
                    case 6: ids.append(doc.addNote(title: ["Same", "Other", "Fresh \(k)"][Int.random(in: 0 ..< 3, using: &rng)], body: "new"))
                    case 7: doc.setTitle("Retitled \(k)")
                    default: try doc.moveNote(id, to: Int.random(in: 0 ..< max(1, doc.notes.count), using: &rng))
                    }
                } catch {
                    continue  // an edit of a deleted note, a tag that is not there: skipped
                }
            }
        }
        return (mine, theirs)
    }

    @Test("The diff from the notes a merge's changes name is the diff of the whole notebooks")
    func namedNotesGiveTheWholeDiff() throws {
        var rng = SeededRandom(state: 0xBA5E)
        var named = 0, whole = 0, nonEmpty = 0
        for round in 0 ..< 300 {
            let (mine, theirs) = try Self.copies(&rng, count: Int.random(in: 1 ... 12, using: &rng), moves: round % 3 == 0)
            let before = mine.notebook, places = mine.notePlaces, deleted = mine.deletedNoteIDs
            let baseline = mine.mergeBaseline(for: [theirs])
            if baseline.isWhole { whole += 1 } else { named += 1 }
            try mine.merge(theirs)
            let expected = NotebookDiff(from: before, placed: places, to: mine.notebook, placed: mine.notePlaces, deletedBefore: deleted)
            let diff = NotebookDiff(from: baseline, to: mine)
            #expect(diff == expected, "round \(round)")
            if !expected.changes.isEmpty { nonEmpty += 1 }
        }
        // Both ways were taken, and most rounds changed something.
        #expect(named > 100 && whole > 10 && nonEmpty > 150, "\(named) named, \(whole) whole, \(nonEmpty) with changes")
    }

    @Test("A baseline names only the notes the other copy's new changes touch")
    func baselineNamesOnlyTouchedNotes() throws {
        let base = Document(title: "Base", author: "a")
        let ids = (0 ..< 50).map { base.addNote(title: "Note \($0)", body: "body") }
        let mine = try Document.load(base.save()), theirs = try Document.load(base.save())
        try mine.setBody(ids[3], "mine")
        try theirs.setNoteTitle(ids[7], "Seven")
        try theirs.deleteNote(ids[9])
        let added = theirs.addNote(title: "Added")
        let baseline = mine.mergeBaseline(for: [theirs])
        #expect(!baseline.isWhole)
        #expect(Set(baseline.namedNotes) == [ids[7], ids[9], added])
        try theirs.moveNote(ids[1], to: 5)
        let moved = mine.mergeBaseline(for: [theirs])
        #expect(moved.isWhole, "a move makes the baseline whole")
        // Every live note, in order; the bodies of the notes the changes name alone.
        let whole = try #require(moved.wholeNotebook)
        #expect(whole.notes.map(\.id) == mine.notes.map(\.id))
        #expect(whole.notes.map(\.title) == mine.notes.map(\.title))
        for note in whole.notes {
            #expect(note.body == ([ids[1], ids[7], ids[9]].contains(note.id) ? "body" : ""), "\(note.title)")
        }
        #expect(whole.notes.first { $0.id == ids[3] }?.body == "", "mine's own edit is no change the merge makes")
    }

    @Test("liveNotes(titled:) groups live notes by exact title, groups in order of their first note")
    func liveNotesByTitle() throws {
        let doc = Document(title: "T", author: "a")
        let a = doc.addNote(title: "B"), b = doc.addNote(title: "A"), c = doc.addNote(title: "B"), d = doc.addNote(title: "A")
        let e = doc.addNote(title: "caf\u{e9}"), f = doc.addNote(title: "cafe\u{301}")
        try doc.deleteNote(d)
        let groups = doc.liveNotes(titled: ["A", "B", "caf\u{e9}", "none"])
        #expect(groups.map(\.title) == ["B", "A", "caf\u{e9}"])
        #expect(groups.map(\.notes) == [[a, c], [b], [e]])
        _ = f
    }
}
