import Foundation
import PeerNote
import Testing
import TestSupport

/// What `merge` and `show` say of conflicts: none for moves that agree in what a reader sees;
/// each value and each author once.
@Suite("conflict report wording (in-process)")
struct ConflictWordingTests {
    /// A notebook of Plan, Other and Third, copied once for each of `names`; the i-th copy's clock reads 10:0(i+1).
    static func copies(_ names: [String]) -> [Document] {
        let base = Document(title: "Home", author: "X", time: at(9, 0))
        base.clock = { at(9, 0) }
        for title in ["Plan", "Other", "Third"] { base.addNote(title: title) }
        return names.enumerated().map { i, name in
            let d = base.fork(author: name)
            d.clock = { at(10, i + 1) }
            return d
        }
    }

    @Test("Two copies moving a note to the same index are not a conflict: merge lists none, show lists none")
    func sameIndexMovesAgree() throws {
        let docs = Self.copies(["Ann", "Bob"])
        for d in docs { try d.moveNote(try d.findNote("Plan").id, to: 2) }
        let dir = try TempDir()
        let a = try dir.write(docs[0].save(), "a.peernote"), b = try dir.write(docs[1].save(), "b.peernote")
        let r = pnmerge(["merge", a, b])
        #expect(r.status == 0, "\(r.err)")
        #expect(!r.out.contains("Conflicts") && !r.out.contains("conflict"), "\(r.out)")
        let show = pnmerge(["show", a])
        #expect(show.status == 0, "\(show.err)")
        #expect(show.out.contains("Other") && !show.out.contains("Conflicts"), "\(show.out)")
        let json = try #require(try parseJSON(pnmerge(["show", "--format", "json", a]).out) as? [String: Any])
        #expect((json["notes"] as? [[String: Any]])?.compactMap { $0["title"] as? String } == ["Other", "Third", "Plan"], "\(json)")
        #expect((json["conflicts"] as? [Any])?.isEmpty == true, "\(json)")

        // Moved to different indexes, it is one, as before.
        let other = Self.copies(["Ann", "Bob"])
        try other[0].moveNote(try other[0].findNote("Plan").id, to: 2)
        try other[1].moveNote(try other[1].findNote("Plan").id, to: 1)
        let c = try dir.write(other[0].save(), "c.peernote"), d = try dir.write(other[1].save(), "d.peernote")
        let moved = pnmerge(["merge", "--dry-run", c, d])
        #expect(moved.out.contains("Conflicts (1):\n  note \"Plan\": moved concurrently by Ann (10:01) and Bob (10:02)"), "\(moved.out)")
    }

    @Test("A note deleted on one copy and edited three times on another names Bob once, with the count and the last time; JSON keeps every edit")
    func repeatedEditorOnce() throws {
        let docs = Self.copies(["Ann", "Bob"])
        let ann = docs[0], bob = docs[1]
        try ann.deleteNote(try ann.findNote("Plan").id)
        let plan = try bob.findNote("Plan").id
        for (i, body) in ["one", "two", "three"].enumerated() {
            bob.clock = { at(10, 2 + i) }
            try bob.setBody(plan, body)
        }
        let dir = try TempDir()
        let a = try dir.write(ann.save(), "a.peernote"), b = try dir.write(bob.save(), "b.peernote")
        let r = pnmerge(["merge", "--dry-run", a, b])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("note \"Plan\": deleted by Ann (10:01) while edited by Bob (3 edits, last 10:04); it stays deleted"), "\(r.out)")
        let json = try #require(try parseJSON(pnmerge(["merge", "--dry-run", "--json", a, b]).out) as? [String: Any])
        let conflict = try #require((json["conflicts"] as? [[String: Any]])?.first)
        #expect((conflict["editedBy"] as? [[String: Any]])?.compactMap { $0["time"] as? String }
                == ["2024-03-01T10:02:00Z", "2024-03-01T10:03:00Z", "2024-03-01T10:04:00Z"], "\(conflict)")
    }

    @Test("Two copies that wrote one title and a third that wrote another: the equal value is shown once with both authors; JSON keeps every value")
    func equalValuesGrouped() throws {
        let docs = Self.copies(["Phone", "Laptop", "USB"])
        for (d, title, minute) in [(docs[0], "Alpha2", 24), (docs[1], "Alpha2", 24), (docs[2], "AlphaU", 25)] {
            d.clock = { at(14, minute) }
            try d.setNoteTitle(try d.findNote("Plan").id, title)
        }
        let dir = try TempDir()
        let files = try zip(docs, ["phone", "laptop", "usb"]).map { try dir.write($0.save(), $1 + ".peernote") }
        let r = pnmerge(["merge", "--dry-run"] + files)
        #expect(r.status == 0, "\(r.err)")
        let line = try #require(r.out.split(separator: "\n").first { $0.contains(": title \"") }.map(String.init), "\(r.out)")
        // Phone and Laptop wrote at one minute: either may come first (their change ids decide).
        #expect(line.contains("title \"Alpha2\" (Phone, Laptop, 14:24) vs \"AlphaU\" (USB, 14:25), showing ")
                || line.contains("title \"Alpha2\" (Laptop, Phone, 14:24) vs \"AlphaU\" (USB, 14:25), showing "), "\(line)")
        // At different times, each author has their own.
        docs[1].clock = { at(14, 26) }
        try docs[1].setNoteTitle(try docs[1].findNote("Alpha2").id, "Alpha3")
        try docs[1].setNoteTitle(try docs[1].findNote("Alpha3").id, "Alpha2")
        _ = try dir.write(docs[1].save(), "laptop.peernote")
        let later = pnmerge(["merge", "--dry-run"] + files)
        #expect(later.out.contains("title \"Alpha2\" (Phone, 14:24; Laptop, 14:26) vs \"AlphaU\" (USB, 14:25)"), "\(later.out)")
        let json = try #require(try parseJSON(pnmerge(["merge", "--dry-run", "--json"] + files).out) as? [String: Any])
        let conflict = try #require((json["conflicts"] as? [[String: Any]])?.first)
        #expect((conflict["values"] as? [[String: Any]])?.compactMap { $0["author"] as? String }.sorted() == ["Laptop", "Phone", "USB"], "\(conflict)")
    }

    @Test("One author's concurrent moves on two devices name them once")
    func oneMoverOnce() throws {
        let docs = Self.copies(["Ann", "Ann"])
        try docs[0].moveNote(try docs[0].findNote("Plan").id, to: 2)
        try docs[1].moveNote(try docs[1].findNote("Plan").id, to: 1)
        let dir = try TempDir()
        let a = try dir.write(docs[0].save(), "a.peernote"), b = try dir.write(docs[1].save(), "b.peernote")
        let r = pnmerge(["merge", "--dry-run", a, b])
        #expect(r.out.contains("note \"Plan\": moved concurrently by Ann (2 moves, last 10:02), showing it at position"), "\(r.out)")
    }
}
