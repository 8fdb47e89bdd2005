import Foundation
import Testing
@testable import PeerNote

/// `NoteSummary` and the queries that list notes without making their bodies: each must say
/// exactly what the full `Note` queries say, less the body.
@Suite("Note summaries")
struct NoteSummaryTests {
    /// A notebook of `count` notes with bodies, tags and priorities, some deleted, some moved,
    /// and a title conflict on one, merged from two copies.
    func notebook(count: Int, seed: UInt64) throws -> Document {
        var rng = SeededRandom(state: seed)
        let a = Document(title: "N", author: "alice")
        var ids: [NoteID] = []
        for i in 0 ..< count {
            let tags = (0 ..< Int.random(in: 0 ... 3, using: &rng)).map { _ in "t\(Int.random(in: 0 ..< 4, using: &rng))" }
            let priority = [Priority.low, .normal, .high][Int.random(in: 0 ..< 3, using: &rng)]
            ids.append(a.addNote(title: "Note \(i)", body: String(repeating: "body \(i) ", count: i % 5), tags: tags, priority: priority))
        }
        let b = a.fork(author: "bob")
        for _ in 0 ..< count / 4 {
            let id = ids[Int.random(in: 0 ..< ids.count, using: &rng)]
            guard a.note(id)?.isDeleted == false else { continue }
            switch Int.random(in: 0 ..< 3, using: &rng) {
            case 0: try a.deleteNote(id)
            case 1: try a.moveNote(id, to: Int.random(in: 0 ..< a.noteCount, using: &rng))
            default: try a.setPriority(id, .high)
            }
        }
        if let id = ids.first(where: { a.note($0)?.isDeleted == false && b.note($0)?.isDeleted == false }) {
            try a.setNoteTitle(id, "Plan A")
            try b.setNoteTitle(id, "Plan B")
        }
        try a.merge(b)
        return a
    }

    @Test("noteTitle gives each note's title as note(_:) does, deleted notes' too, and nil for a note the copy does not hold", arguments: [1, 2] as [UInt64])
    func noteTitles(seed: UInt64) throws {
        let d = try notebook(count: 40, seed: seed)
        let notes = d.notes + d.deletedNotes
        #expect(!d.deletedNotes.isEmpty)
        for n in notes { #expect(d.noteTitle(n.id) == d.note(n.id)?.title) }
        let untitled = d.addNote(title: "")
        #expect(d.noteTitle(untitled) == "")
        let elsewhere = Document(title: "Other").addNote(title: "Not here")
        #expect(d.noteTitle(elsewhere) == nil)
        #expect(d.note(elsewhere) == nil)
    }

    @Test("notebook(forConflicts:) lists the live notes without bodies only for a conflict of concurrent moves")
    func conflictNotebook() throws {
        let d = try notebook(count: 30, seed: 7)
        let conflicts = d.conflicts
        #expect(!conflicts.isEmpty && !conflicts.contains { if case .position = $0 { true } else { false } })
        let plain = d.notebook(forConflicts: conflicts)
        #expect(plain.notes.isEmpty && plain.conflicts == conflicts && plain.id == d.id && plain.title == d.title)
        // Both copies move one note: a conflict of concurrent moves.
        let other = d.fork(author: "carol")
        let moved = try #require(d.notes.dropFirst(3).first(where: { !$0.body.isEmpty })).id
        try d.moveNote(moved, to: 0)
        try other.moveNote(moved, to: 10)
        try d.merge(other)
        let withMoves = d.conflicts
        #expect(withMoves.contains { if case .position = $0 { true } else { false } })
        let placed = d.notebook(forConflicts: withMoves)
        #expect(placed.notes.map(\.id) == d.notes.map(\.id))
        #expect(placed.notes.map(\.title) == d.notes.map(\.title) && placed.notes.map(\.tags) == d.notes.map(\.tags))
        #expect(placed.notes.allSatisfy { $0.body.isEmpty })
        #expect(placed.conflicts == withMoves)
        // A summary's note is the note without its body, or with the body given.
        for (summary, note) in zip(d.noteSummaries, d.notes) {
            #expect(summary.note(body: note.body) == note)
            #expect(summary.note() == Note(id: note.id, title: note.title, body: "", tags: note.tags, priority: note.priority, created: note.created))
        }
        let deleted = try #require(d.deletedNoteSummaries(matching: NoteFilter()).first)
        #expect(deleted.note().isDeleted)
    }

    @Test("summaries, their filters, the count and the index say what the notes say, without bodies", arguments: [1, 2, 3] as [UInt64])
    func summariesMatchNotes(seed: UInt64) throws {
        let d = try notebook(count: 60, seed: seed)
        #expect(d.noteSummaries == d.notes.map(NoteSummary.init))
        #expect(d.noteCount == d.notes.count)
        // Notes made one at a time are the notes.
        var each: [Note] = []
        d.forEachNote { each.append($0) }
        #expect(each == d.notes && !each.isEmpty)
        #expect(!d.conflicts.isEmpty)
        for id in (d.notes + d.deletedNotes).map(\.id) {
            #expect(d.index(of: id) == d.notes.firstIndex { $0.id == id })
        }
        let filters = [NoteFilter(), NoteFilter(tags: ["t1"]), NoteFilter(tags: ["t0", "t2"]), NoteFilter(priority: .high),
                       NoteFilter(conflicted: true), NoteFilter(tags: ["t3"], priority: .low)]
        for f in filters {
            let full = d.notes(matching: f), short = d.noteSummaries(matching: f)
            #expect(short.map(\.index) == full.map(\.index))
            #expect(short.map(\.note) == full.map { NoteSummary($0.note) })
            #expect(d.deletedNoteSummaries(matching: f) == d.deletedNotes(matching: f).map(NoteSummary.init))
            // Rows read in place say what the summaries say, cell by cell.
            for deleted in [false, true] {
                let expected: [(index: Int?, note: NoteSummary)] = deleted ? d.deletedNoteSummaries(matching: f).map { (nil, $0) }
                    : short.map { ($0.index, $0.note) }
                let rows = d.withNoteRows(matching: f, deleted: deleted) { rows in
                    (0 ..< rows.count).map { r in
                        (index: rows.index(r), note: NoteSummary(id: rows.id(r), title: rows.title(r), tags: rows.tags(r), priority: rows.priority(r),
                                                                   created: .distantPast))
                    }
                }
                #expect(rows.map(\.index) == expected.map(\.index))
                #expect(rows.map { [$0.note.id.description, $0.note.title, $0.note.priority.rawValue] + $0.note.tags }
                        == expected.map { [$0.note.id.description, $0.note.title, $0.note.priority.rawValue] + $0.note.tags })
            }
        }
        #expect(!d.deletedNotes.isEmpty)
    }

    @Test("a short note id is the first 8 digits of the full one")
    func shortIDIsPrefix() {
        var rng = SeededRandom(state: 7)
        for _ in 0 ..< 200 {
            let id = NoteID(replica: ReplicaID(high: .random(in: 0 ... .max, using: &rng), low: .random(in: 0 ... .max, using: &rng)),
                            counter: .random(in: 0 ... .max, using: &rng))
            #expect(id.short == String(id.description.prefix(8)))
            #expect(id.description.count == 16)
        }
    }
}

/// A change's summary, for a change that touches few notes and for one that touches many (each
/// note's tally then found by its slot): the same parts in the same order.
@Suite("Change summaries")
struct ChangeSummaryTests {
    /// A notebook of `existing` notes, then one change that adds `added` notes with tags and
    /// body, tags and edits the first existing note, and retitles the last.
    static func summary(existing: Int, added: Int) throws -> [SummaryPart] {
        let d = Document(title: "S", author: "a")
        let old = (0 ..< existing).map { d.addNote(title: "old \($0)", body: "body") }
        try d.transaction {
            for k in 0 ..< added { d.addNote(title: "new \(k)", body: "text \(k)", tags: ["t\(k % 3)", "u"]) }
            try d.addTag(old[0], "x")
            try d.insertText(old[0], at: 0, "more ")
            try d.setNoteTitle(old[existing - 1], "retitled")
        }
        return try #require(d.history.last).summaryParts
    }

    @Test("Many notes in one change: an added note is \"added\", with no tags listed; the others as with few", arguments: [3, 1_500])
    func manyNotes(added: Int) throws {
        let parts = try Self.summary(existing: 2, added: added)
        #expect(parts.count == added + 2)
        #expect(parts.prefix(added).map(\.text) == (0 ..< added).map { "added \"new \($0)\"" })
        #expect(parts.prefix(added).allSatisfy { $0.kind == .added })
        #expect(parts[added].text == "edited (+5 −0), tagged x \"old 0\"", "\(parts[added].text)")
        #expect(parts[added + 1].text == "retitled \"retitled\"")
    }
}
