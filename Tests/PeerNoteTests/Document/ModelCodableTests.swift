import Foundation
import Testing
@testable import PeerNote

/// The reader's values (`Notebook`, `Note`, `Conflict` and the ids) as Codable snapshots.
@Suite("Model values are Codable and decode to the same values")
struct ModelCodableTests {
    /// A notebook whose snapshot holds every kind of conflict, notes in a moved order, tags,
    /// priorities and text spelled two ways (NFC and NFD).
    static func conflicted() throws -> Notebook {
        let base = Document(title: "Trip", author: "ann")
        let a = base.addNote(title: "Tickets", body: "Book the train\n", tags: ["travel"], priority: .high)
        let b = base.addNote(title: "Packing")
        let c = base.addNote(title: "Caf\u{E9}")
        let mine = base.fork(author: "ann"), theirs = base.fork(author: "bob")
        mine.setTitle("Trip to Lyon")
        theirs.setTitle("Trip to Lille")
        try mine.setNoteTitle(a, "Tickets (booked)")
        try theirs.setNoteTitle(a, "Tickets!")
        try mine.setPriority(b, .low)
        try theirs.setPriority(b, .high)
        try mine.moveNote(c, to: 0)
        try theirs.moveNote(c, to: 1)
        try mine.deleteNote(b)
        try theirs.insertText(b, at: 0, "socks, Cafe\u{301}")
        try mine.merge(theirs)
        return mine.notebook
    }

    @Test("A notebook with every kind of conflict survives JSON encoding and decoding unchanged")
    func roundTrip() throws {
        let notebook = try Self.conflicted()
        let kinds = Set(notebook.conflicts.map { conflict -> String in
            switch conflict {
            case .notebookTitle: "notebookTitle"
            case .noteTitle: "noteTitle"
            case .priority: "priority"
            case .position: "position"
            case .deletedWhileEdited: "deletedWhileEdited"
            }
        })
        // Priority: the note whose priority conflicts was deleted, so it is not listed.
        #expect(kinds == ["notebookTitle", "noteTitle", "position", "deletedWhileEdited"])
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(notebook)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let decoded = try decoder.decode(Notebook.self, from: data)
        #expect(decoded == notebook)
        #expect(decoded.notes.map(\.id) == notebook.notes.map(\.id))
        // Property-list encoding too (an app's state restoration), with the default date strategy.
        #if canImport(Darwin)
        let plist = try PropertyListEncoder().encode(notebook)
        #expect(try PropertyListDecoder().decode(Notebook.self, from: plist) == notebook)
        #endif
    }

    @Test("A priority conflict of a live note, and exact scalars, decode as they were")
    func priorityAndScalars() throws {
        let base = Document(title: "T", author: "ann")
        let n = base.addNote(title: "Caf\u{E9}", tags: ["Cafe\u{301}", "caf\u{E9}"])
        let mine = base.fork(author: "ann"), theirs = base.fork(author: "bob")
        try mine.setPriority(n, .low)
        try theirs.setPriority(n, .high)
        try mine.merge(theirs)
        let notebook = mine.notebook
        #expect(notebook.conflicts.count == 1)
        let decoded = try JSONDecoder().decode(Notebook.self, from: try JSONEncoder().encode(notebook))
        #expect(decoded == notebook)
        #expect(decoded.notes[0].tags.map { Array($0.unicodeScalars) } == notebook.notes[0].tags.map { Array($0.unicodeScalars) })
        #expect(Array(decoded.notes[0].title.unicodeScalars) == ["C", "a", "f", "\u{E9}"])
    }

    @Test("Ids encode as replica hex and counter, and decode to the same id; bad replica text is refused")
    func ids() throws {
        let replica = ReplicaID(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210)
        let note = NoteID(replica: replica, counter: 42)
        let json = String(decoding: try JSONEncoder().encode(note), as: UTF8.self)
        #expect(json.contains("\"replica\":\"0123456789abcdeffedcba9876543210\""), "\(json)")
        #expect(json.contains("\"counter\":42"), "\(json)")
        #expect(try JSONDecoder().decode(NoteID.self, from: Data(json.utf8)) == note)
        let change = ChangeID(replica: replica, seq: 7)
        #expect(try JSONDecoder().decode(ChangeID.self, from: try JSONEncoder().encode(change)) == change)
        #expect(ReplicaID(hex: "0123456789ABCDEFFEDCBA9876543210") == replica)
        for bad in ["", "0123", "0123456789abcdeffedcba987654321g", "0123456789abcdeffedcba98765432100"] {
            #expect(ReplicaID(hex: bad) == nil, "\(bad)")
            let text = "{\"replica\":\"\(bad)\",\"counter\":1}"
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(NoteID.self, from: Data(text.utf8)) }
        }
    }
}
