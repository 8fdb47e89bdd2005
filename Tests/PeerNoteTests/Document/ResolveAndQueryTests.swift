import Foundation
import Testing
@testable import PeerNote

/// The library's rules behind peernote's resolve, list filters, search and note names, for apps.
@Suite("Resolving conflicts, filters, search, note names")
struct ResolveAndQueryTests {
    /// One note "Plan" on two copies whose priorities (and, with `titles`, titles) were set apart, merged.
    func conflicted(titles: Bool = false) throws -> (Document, Document, NoteID) {
        let a = Document(title: "N", author: "alice")
        let note = a.addNote(title: "Plan")
        let b = a.fork(author: "bob")
        try a.setPriority(note, .high)
        try b.setPriority(note, .low)
        if titles {
            try a.setNoteTitle(note, "Plan A")
            try b.setNoteTitle(note, "Plan B")
        }
        try a.merge(b)
        return (a, b, note)
    }

    @Test("a conflict's choices are its distinct values, numbered oldest first; resolve by pick writes one change that closes it on every copy")
    func resolveByPick() throws {
        let (a, b, note) = try conflicted()
        let conflict = try #require(a.conflicts(of: note).first)
        #expect(conflict.field == .priority)
        let choices = a.choices(for: conflict)
        #expect(choices.map(\.number) == [1, 2])
        #expect(Set(choices.map(\.value)) == ["high", "low"])
        let before = a.changeCount
        let done = try a.resolve(note, field: .priority, pick: 2)
        #expect(a.changeCount == before + 1)
        #expect(done.value == choices[1].value && done.choice == 2)
        #expect(a.conflicts.isEmpty && a.note(note)?.priority.rawValue == choices[1].value)
        try b.merge(a)
        #expect(b.conflicts.isEmpty)
    }

    @Test("resolve refuses a field with no open conflict, a pick out of range and a value that does not fit, recording nothing")
    func resolveRefusals() throws {
        let (a, _, note) = try conflicted()
        let before = a.changeCount
        #expect(throws: PeerNoteError.self) { try a.resolve(note, field: .title, pick: 1) }
        #expect(throws: PeerNoteError.self) { try a.resolve(note, field: .priority, pick: 3) }
        #expect(throws: PeerNoteError.self) { try a.resolve(note, field: .priority, pick: 0) }
        #expect(throws: PeerNoteError.self) { try a.resolve(note, field: .priority, value: "urgent") }
        #expect(a.changeCount == before && a.conflicts.count == 1)
        try a.resolve(note, field: .priority, value: "normal")
        #expect(a.conflicts.isEmpty && a.note(note)?.priority == .normal)
    }

    @Test("findNote: other letter case when one note has it, a former title when no note has it now; closestTitles for a typo")
    func noteNames() throws {
        let d = Document(title: "N", author: "alice")
        let dentist = d.addNote(title: "Dentist")
        d.addNote(title: "Groceries")
        #expect(try d.findNote("dentist").id == dentist)
        try d.setNoteTitle(dentist, "Dentist at 9")
        #expect(try d.findNote("Dentist").id == dentist)
        #expect(d.closestTitles(to: "Dentst at 9").map(\.id) == [dentist])
        #expect(d.closestTitles(to: "groc").map(\.title) == ["Groceries"])
        #expect(d.closestTitles(to: "zz").isEmpty)
        // A deleted note that has the title now is not passed over for one that had it before.
        let old = d.addNote(title: "Dentist")
        try d.deleteNote(old)
        #expect(throws: PeerNoteError.self) { try d.findNote("Dentist") }
    }

    @Test("notes(matching:) keeps notes with every tag, the priority and open conflicts, at their indexes; search finds title and body lines")
    func filtersAndSearch() throws {
        let (a, _, note) = try conflicted(titles: true)
        a.addNote(title: "Shop", body: "Milk\r\nbread", tags: ["home", "todo"])
        let tagged = a.notes(matching: NoteFilter(tags: ["todo", "home"]))
        #expect(tagged.map(\.index) == [1] && tagged.map(\.note.title) == ["Shop"])
        #expect(a.notes(matching: NoteFilter(tags: ["todo", "work"])).isEmpty)
        #expect(a.notes(matching: NoteFilter(conflicted: true)).map(\.note.id) == [note])
        let hits = a.search(try NoteSearch("BREAD"))
        #expect(hits.map(\.line) == [2] && hits.map(\.text) == ["bread"])
        let regex = try NoteSearch("^milk", regex: true)
        #expect(a.search(regex).map(\.line) == [1] && a.search(regex).map(\.text) == ["Milk\r"])
        #expect(a.search(try NoteSearch("plan", caseSensitive: true)).isEmpty)
        #expect(throws: PeerNoteError.self) { try NoteSearch("(", regex: true) }
    }
}
