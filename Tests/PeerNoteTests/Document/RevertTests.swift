import Foundation
import Testing
@testable import PeerNote

/// The id of the last change `document` recorded.
private func last(_ document: Document) throws -> ChangeID {
    try #require(document.history.last?.id)
}

/// A notebook with one note, and that note's id.
private func notebook(body: String = "The quick brown fox", title: String = "Plan") -> (Document, NoteID) {
    let d = Document(title: "Notebook", author: "alice")
    let n = d.addNote(title: title, body: body)
    return (d, n)
}

/// Merges both ways and checks that both copies converge; returns the merged notebook.
private func converge(_ a: Document, _ b: Document, sourceLocation: SourceLocation = #_sourceLocation) throws -> Notebook {
    let a2 = a.fork(), b2 = b.fork()
    try a2.merge(b)
    try b2.merge(a)
    #expect(a2.notebook == b2.notebook, sourceLocation: sourceLocation)
    // And through a save and a load: the revert's ops are ordinary ops of the format.
    let reloaded = try Document.load(a2.save(.compact))
    #expect(reloaded.notebook == a2.notebook, sourceLocation: sourceLocation)
    return a2.notebook
}

@Suite("Revert (Document.revert)")
struct RevertTests {
    @Test("Text a change inserted is deleted; reverting the revert brings it back")
    func insertedTextIsDeleted() throws {
        let (d, n) = notebook(body: "Hello")
        try d.insertText(n, at: 5, " world")
        let typed = try last(d)
        let result = try d.revert([typed])
        #expect(d.note(n)?.body == "Hello")
        #expect(result.change != nil)
        #expect(result.message == "Revert \(typed)")
        #expect(d.history.last?.message == "Revert \(typed)")
        let undo = try #require(result.change)
        try d.revert([undo])
        #expect(d.note(n)?.body == "Hello world")
    }

    @Test("Text a change deleted comes back at its place; reverting the revert deletes it again")
    func deletedTextIsInsertedAgain() throws {
        let (d, n) = notebook()
        try d.deleteText(n, range: 4 ..< 10)   // "quick "
        #expect(d.note(n)?.body == "The brown fox")
        let cut = try last(d)
        try d.revert([cut])
        #expect(d.note(n)?.body == "The quick brown fox")
        try d.revert([try last(d)])
        #expect(d.note(n)?.body == "The brown fox")
    }

    @Test("Reverting a change twice brings its deleted text back once; everything else of it is undone once too")
    func revertTwice() throws {
        let (d, n) = notebook()
        try d.transaction(message: "cut") { () throws(PeerNoteError) in
            try d.deleteText(n, range: 4 ..< 10)
            try d.setNoteTitle(n, "Cut")
            try d.addTag(n, "short")
        }
        let cut = try last(d)
        try d.revert([cut])
        let again = try d.revert([cut])
        #expect(again.change == nil)
        #expect(d.note(n)?.body == "The quick brown fox")
        #expect(d.note(n)?.title == "Plan")
        #expect(d.note(n)?.tags == [])
    }

    @Test("A body replaced by setBody goes back whole, edits at several places")
    func setBodyIsReverted() throws {
        let (d, n) = notebook(body: "passport\ncharger\ntickets")
        try d.setBody(n, "passport\nphone charger\nsunscreen\ntickets!")
        let edit = try last(d)
        try d.revert([edit])
        #expect(d.note(n)?.body == "passport\ncharger\ntickets")
    }

    @Test("Text typed later inside the reverted text stays; so does text typed around it")
    func laterEditsInsideStay() throws {
        let (a, n) = notebook(body: "")
        try a.insertText(n, at: 0, "hello world")
        let c = try last(a)
        let b = a.fork(author: "bob")
        try b.insertText(n, at: 6, "big ")       // "hello big world"
        try b.insertText(n, at: 0, ">> ")
        try a.merge(b)
        try a.revert([c])
        #expect(a.note(n)?.body == ">> big ")
    }

    @Test("Edits made concurrently with the revert survive it, and the copies converge")
    func concurrentEditsConverge() throws {
        let (a, n) = notebook(body: "one two three")
        try a.deleteText(n, range: 3 ..< 7)      // "one three"
        let cut = try last(a)
        let b = a.fork(author: "bob")
        try a.revert([cut])                       // "one two three"
        try b.insertText(n, at: 3, " and")        // "one and three"
        try b.setNoteTitle(n, "Counting")
        let merged = try converge(a, b)
        let body = try #require(merged.notes.first?.body)
        #expect(body.contains(" two"))
        #expect(body.contains(" and"))
        #expect(body.hasPrefix("one"))
        #expect(body.hasSuffix(" three"))
        #expect(merged.notes.first?.title == "Counting")
    }

    @Test("A title goes back to the one it replaced; a title written since is left, with a notice")
    func titleRegister() throws {
        let (d, n) = notebook(title: "Plan")
        try d.setNoteTitle(n, "Plan B")
        let retitle = try last(d)
        try d.revert([retitle])
        #expect(d.note(n)?.title == "Plan")
        try d.revert([try last(d)])
        #expect(d.note(n)?.title == "Plan B")

        try d.setNoteTitle(n, "Plan C")
        let again = try d.revert([retitle])
        #expect(again.change == nil)
        #expect(d.note(n)?.title == "Plan C")
        #expect(again.notices.count == 1)
        #expect(again.notices.first?.message.contains("written since by alice; left as it is") == true)
    }

    @Test("A title written concurrently with the reverted one stays beside the restored one (a conflict)")
    func titleConcurrentWriteStays() throws {
        let (a, n) = notebook(title: "Plan")
        let b = a.fork(author: "bob")
        try a.setNoteTitle(n, "Alice's")
        let mine = try last(a)
        try b.setNoteTitle(n, "Bob's")
        try a.merge(b)
        #expect(a.conflicts.count == 1)
        try a.revert([mine])
        let titles = a.conflicts.compactMap { c -> [String]? in
            if case .noteTitle(_, let values, _) = c { return values.map(\.value).sorted() } else { return nil }
        }
        #expect(titles == [["Bob's", "Plan"]])
    }

    @Test("Priority and the notebook's title go back, and forward again")
    func priorityAndNotebookTitle() throws {
        let (d, n) = notebook()
        try d.setPriority(n, .high)
        let p = try last(d)
        d.setTitle("Work")
        let t = try last(d)
        try d.revert([p, t])
        #expect(d.note(n)?.priority == .normal)
        #expect(d.title == "Notebook")
        #expect(d.history.last?.message == "Revert " + ChangeRange.ranges(of: [p, t]).map(\.description).joined(separator: ", "))
        try d.revert([try last(d)])
        #expect(d.note(n)?.priority == .high)
        #expect(d.title == "Work")
    }

    @Test("Several writes of one register in the reverted changes go back to the value before the first")
    func chainOfWrites() throws {
        let (d, n) = notebook(title: "A")
        try d.setNoteTitle(n, "B")
        let first = try last(d)
        try d.setNoteTitle(n, "C")
        let second = try last(d)
        let result = try d.revert([first, second])
        #expect(d.note(n)?.title == "A")
        #expect(result.notices.isEmpty)
    }

    @Test("A tag added is removed, a tag removed comes back; a tag another change also added stays, with a notice")
    func tags() throws {
        let (a, n) = notebook()
        try a.addTag(n, "todo")
        let added = try last(a)
        try a.revert([added])
        #expect(a.note(n)?.tags == [])
        try a.revert([try last(a)])
        #expect(a.note(n)?.tags == ["todo"])

        try a.removeTag(n, "todo")
        let removed = try last(a)
        try a.revert([removed])
        #expect(a.note(n)?.tags == ["todo"])

        // Added on two copies concurrently: reverting one add leaves the other's.
        let (c, m) = notebook()
        let d = c.fork(author: "bob")
        try c.addTag(m, "work")
        let mine = try last(c)
        try d.addTag(m, "work")
        try c.merge(d)
        let result = try c.revert([mine])
        #expect(c.note(m)?.tags == ["work"])
        #expect(result.notices.map(\.message).contains { $0.contains("keeps tag \"work\": bob also added it") })
    }

    @Test("A note a change created is deleted; reverting that restores it with its text")
    func createdNoteIsDeleted() throws {
        let d = Document(title: "Notebook", author: "alice")
        let n = d.addNote(title: "Fresh", body: "some text", tags: ["x"], priority: .high)
        let add = try last(d)
        try d.revert([add])
        #expect(d.note(n)?.isDeleted == true)
        #expect(d.notes.isEmpty)
        try d.revert([try last(d)])
        #expect(d.note(n)?.isDeleted == false)
        #expect(d.note(n)?.body == "some text")
        #expect(d.note(n)?.tags == ["x"])
        #expect(d.note(n)?.priority == .high)
    }

    @Test("A note a change deleted is restored; one it restored is deleted again")
    func deletionRegister() throws {
        let (d, n) = notebook()
        try d.deleteNote(n)
        let del = try last(d)
        try d.revert([del])
        #expect(d.note(n)?.isDeleted == false)
        try d.deleteNote(n)
        try d.restoreNote(n)
        let restore = try last(d)
        try d.revert([restore])
        #expect(d.note(n)?.isDeleted == true)
    }

    @Test("A deleted note's edits are not undone (a notice says so) and the revert leaves no deleted-while-edited conflict; one it restores is restored first")
    func deletedNoteIsLeftAlone() throws {
        let (d, n) = notebook(body: "abc")
        try d.insertText(n, at: 3, "def")
        let typed = try last(d)
        try d.deleteNote(n)
        let result = try d.revert([typed])
        #expect(result.change == nil)
        #expect(result.notices.map(\.message).contains { $0.contains("is deleted: what the changes did to it is not undone") })
        #expect(d.conflicts.isEmpty)
        // Reverting the deletion and the typing together restores the note, then undoes the typing.
        let deletion = try last(d)
        try d.revert([deletion, typed])
        #expect(d.note(n)?.isDeleted == false)
        #expect(d.note(n)?.body == "abc")
        #expect(d.conflicts.isEmpty)
        // Reverting a restore that came with an edit: the edit is undone, then the note deleted.
        try d.deleteNote(n)
        try d.transaction(message: "restore and edit") { () throws(PeerNoteError) in
            try d.restoreNote(n)
            try d.insertText(n, at: 0, ">")
        }
        let both = try last(d)
        try d.revert([both])
        #expect(d.note(n)?.isDeleted == true)
        #expect(d.note(n)?.body == "abc")
        #expect(d.conflicts.isEmpty)
    }

    @Test("A move is undone (the note goes back to its place), and redone by reverting the revert")
    func moveIsUndone() throws {
        let d = Document(title: "Notebook", author: "alice")
        let x = d.addNote(title: "X"), y = d.addNote(title: "Y"), z = d.addNote(title: "Z")
        try d.moveNote(x, to: 2)
        #expect(d.notes.map(\.id) == [y, z, x])
        let move = try last(d)
        try d.revert([move])
        #expect(d.notes.map(\.id) == [x, y, z])
        try d.revert([try last(d)])
        #expect(d.notes.map(\.id) == [y, z, x])
    }

    @Test("A change that created text and one that deleted part of it, reverted together, leave no trace")
    func dependentChangesTogether() throws {
        let (d, n) = notebook(body: "start")
        try d.insertText(n, at: 5, " middle end")
        let typed = try last(d)
        try d.deleteText(n, range: 5 ..< 12)     // " middle"
        let cut = try last(d)
        try d.revert([cut, typed])
        #expect(d.note(n)?.body == "start")
    }

    @Test("A change the document lacks is refused and nothing is recorded")
    func unknownChange() throws {
        let (d, _) = notebook()
        let before = d.changeCount
        let other = ChangeID(replica: .random(), seq: 1)
        #expect(throws: PeerNoteError.noSuchChange(other.fullDescription)) { try d.revert([other]) }
        let beyond = ChangeID(replica: try last(d).replica, seq: 999)
        #expect(throws: PeerNoteError.noSuchChange(beyond.fullDescription)) { try d.revert([beyond]) }
        #expect(d.changeCount == before)
    }

    @Test("Nothing left to undo records nothing")
    func nothingLeft() throws {
        let (d, n) = notebook(body: "abc")
        try d.insertText(n, at: 3, "def")
        let typed = try last(d)
        try d.deleteText(n, range: 3 ..< 6)
        let before = d.changeCount
        let result = try d.revert([typed])
        #expect(result.change == nil)
        #expect(d.changeCount == before)
    }

    @Test("A revert merged into a copy that edited meanwhile converges, every op kind at once")
    func revertMergesEveryKind() throws {
        let a = Document(title: "Notebook", author: "alice")
        let keep = a.addNote(title: "Keep", body: "alpha beta gamma", tags: ["t"])
        let other = a.addNote(title: "Other")
        let b = a.fork(author: "bob")
        try a.transaction(message: "big edit") { () throws(PeerNoteError) in
            try a.setNoteTitle(keep, "Kept")
            try a.setBody(keep, "alpha gamma delta")
            try a.addTag(keep, "new")
            try a.removeTag(keep, "t")
            try a.setPriority(keep, .low)
            try a.moveNote(keep, to: 1)
            try a.deleteNote(other)
            a.setTitle("Renamed")
            a.addNote(title: "Added")
        }
        let big = try last(a)
        try b.insertText(keep, at: 0, "> ")
        try b.setNoteTitle(other, "Other (bob)")
        let result = try a.revert([big])
        #expect(result.message == "Revert \(big): big edit")
        #expect(a.note(keep)?.title == "Keep")
        #expect(a.note(keep)?.body == "alpha beta gamma")
        #expect(a.note(keep)?.tags == ["t"])
        #expect(a.note(keep)?.priority == .normal)
        #expect(a.notes.map(\.title) == ["Keep", "Other"])
        #expect(a.title == "Notebook")
        let merged = try converge(a, b)
        #expect(merged.notes.map(\.title) == ["Keep", "Other (bob)"])
        #expect(merged.notes.first?.body == "> alpha beta gamma")
    }

    @Test("Change runs: FIRST-LAST@REPLICA names each change of the run; the changes a merge brought are such runs")
    func changeRuns() throws {
        let (a, n) = notebook(body: "")
        let b = a.fork(author: "bob")
        try b.insertText(n, at: 0, "x")
        try b.insertText(n, at: 1, "y")
        try b.setNoteTitle(n, "Bob's")
        let summary = try a.merge(b)
        let brought = a.changesBrought(by: summary)
        #expect(brought.count == 1)
        let run = try #require(brought.first)
        #expect(run.last - run.first == 2)
        #expect(try a.findChanges(run.description) == run.changes)
        try a.revert(run.changes)
        #expect(a.note(n)?.body == "")
        #expect(a.note(n)?.title == "Plan")
        #expect(throws: PeerNoteError.self) { try a.findChanges("3-1@\(run.replica.short)") }
        #expect(throws: PeerNoteError.noSuchChange("\(run.last + 1)@\(run.replica.short)")) {
            try a.findChanges("\(run.first)-\(run.last + 1)@\(run.replica.short)")
        }
    }
}

@Suite("History of a note and blame")
struct NoteHistoryTests {
    @Test("historyNewestFirst(touching:) lists only the changes that touched the note, newest first")
    func historyOfOneNote() throws {
        let d = Document(title: "Notebook", author: "alice")
        let x = d.addNote(title: "X", body: "x")
        let y = d.addNote(title: "Y")
        try d.setPriority(y, .high)
        try d.insertText(x, at: 1, "yz")
        try d.addTag(x, "t")
        try d.moveNote(y, to: 0)
        try d.deleteNote(x)
        let all = d.historyNewestFirst()
        #expect(all.count == d.changeCount)
        #expect(all.map(\.id) == d.history.reversed().map(\.id))
        let ofX = d.historyNewestFirst(touching: x)
        #expect(ofX.count == 4)
        #expect(ofX.allSatisfy { $0.notes.contains(x) })
        #expect(ofX.first?.summaryParts.first?.kind == .deleted)
        #expect(ofX.last?.summaryParts.first?.kind == .added)
        let ofY = d.historyNewestFirst(touching: y)
        #expect(ofY.count == 3)
        #expect(!ofY.contains { $0.notes.contains(x) })
    }

    @Test("A change's time counts as no earlier than its dependencies': a clock behind never lists it below them")
    func clockBehind() throws {
        let d = Document(title: "Notebook", author: "alice", time: Date(timeIntervalSince1970: 2_000_000))
        d.clock = { Date(timeIntervalSince1970: 2_000_000) }
        let n = d.addNote(title: "N")
        d.clock = { Date(timeIntervalSince1970: 1_000_000) }
        try d.setNoteTitle(n, "Later, slow clock")
        let history = d.historyNewestFirst(touching: n)
        #expect(history.map(\.id) == d.history.suffix(2).reversed().map(\.id))
    }

    @Test("Blame gives each line the latest insert among its visible characters")
    func blameLines() throws {
        let d = Document(title: "Notebook", author: "alice")
        let n = d.addNote(title: "N", body: "first line\nsecond line\n\nfourth")
        let created = try last(d)
        d.author = "bob"
        try d.insertText(n, at: 5, "!")                       // first! line
        let bang = try last(d)
        try d.deleteText(n, range: 12 ..< 19)                  // "second " deleted: deletes do not count
        let lines = try d.blame(n)
        #expect(lines.map(\.text) == ["first! line", "line", "", "fourth"])
        #expect(lines.map(\.number) == [1, 2, 3, 4])
        #expect(lines[0].change == bang)
        #expect(lines[0].author == "bob")
        #expect(lines[1].change == created)
        #expect(lines[2].change == created)
        #expect(lines[3].change == created)
        #expect(lines[1].author == "alice")
    }

    @Test("Blame: a body ending in a line break has no empty last line; an empty body has none; CRLF lines lose their CR")
    func blameEdges() throws {
        let d = Document(title: "Notebook", author: "alice")
        let a = d.addNote(title: "A", body: "x\r\ny\n")
        #expect(try d.blame(a).map(\.text) == ["x", "y"])
        let b = d.addNote(title: "B")
        #expect(try d.blame(b).isEmpty)
        let c = d.addNote(title: "C", body: "\n")
        #expect(try d.blame(c).map(\.text) == [""])
    }

    @Test("Blame after a merge names each side's changes, typed in runs across many changes")
    func blameAcrossMerge() throws {
        let a = Document(title: "Notebook", author: "alice")
        let n = a.addNote(title: "N", body: "\n")
        let created = try last(a)
        let b = a.fork(author: "bob")
        for (i, ch) in "abc".enumerated() { try a.insertText(n, at: i, String(ch)) }
        for (i, ch) in "xyz".enumerated() { try b.insertText(n, at: 1 + i, String(ch)) }
        let z = try last(b)
        try a.merge(b)
        let lines = try a.blame(n)
        #expect(lines.map(\.text) == ["abc", "xyz"])
        #expect(lines[1].change == z)
        #expect(lines[0].change != created)
        let byAuthor = Dictionary(uniqueKeysWithValues: lines.map { ($0.text, $0.author) })
        #expect(byAuthor["abc"] == "alice")
        #expect(byAuthor["xyz"] == "bob")
    }
}
