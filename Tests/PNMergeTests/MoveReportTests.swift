import Foundation
import PeerNote
import Testing
import TestSupport

/// Which notes `merge` and `diff` call moved: the notes a change brought in moved, never the
/// notes around them whose index shifted.
@Suite("move reports (in-process)")
struct MoveReportTests {
    /// A notebook of notes Alpha, Bravo, Charlie and Delta, and Echo (deleted), forked to alice and
    /// bob: bob makes `bobEdit`; alice (unless `aliceEdit` says otherwise) edits Alpha's body, so that each copy brings the other something.
    /// Writes `alice.peernote` and `bob.peernote`.
    static func copies(_ bobEdit: (Document, (String) throws -> NoteID) throws -> Void,
                       alice aliceEdit: ((Document, (String) throws -> NoteID) throws -> Void)? = nil) throws -> TempDir {
        let base = Document(title: "Moves", author: "carol", time: at(9, 0))
        base.clock = { at(9, 0) }
        for title in ["Alpha", "Bravo", "Charlie", "Delta", "Echo"] { base.addNote(title: title, body: title.lowercased()) }
        try base.deleteNote(try base.findNote("Echo").id)
        let alice = base.fork(author: "alice")
        alice.clock = { at(10, 0) }
        let bob = base.fork(author: "bob")
        bob.clock = { at(10, 5) }
        try bobEdit(bob) { title throws in try bob.findNote(title, includeDeleted: true).id }
        if let aliceEdit {
            try aliceEdit(alice) { title throws in try alice.findNote(title, includeDeleted: true).id }
        } else {
            try alice.setBody(try alice.findNote("Alpha").id, "alpha, by alice")
        }
        let dir = try TempDir()
        _ = try dir.write(alice.save(), "alice.peernote")
        _ = try dir.write(bob.save(), "bob.peernote")
        return dir
    }

    /// The "moved" lines of a text report, without their indentation.
    static func movedLines(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("moved ") }
    }

    /// The "moved" entries of a `--json` report's `notes`: title, from, to.
    static func movedJSON(_ notes: Any?) -> [String] {
        ((notes as? [[String: Any]]) ?? []).filter { $0["change"] as? String == "moved" }.map {
            "\($0["title"] as? String ?? "?") \($0["from"] as? Int ?? -1) \($0["to"] as? Int ?? -1)"
        }
    }

    /// Checks every report of the two copies in `dir`: what bob's copy brings alice shows
    /// `expected` (text lines), and what alice's brings bob shows no move; then merges in place.
    static func expectMoves(_ dir: TempDir, _ expected: [String], json expectedJSON: [String],
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let alice = dir.path("alice.peernote"), bob = dir.path("bob.peernote")
        let dry = pnmerge(["merge", "--dry-run", alice, bob])
        #expect(dry.status == 0, "\(dry.err)", sourceLocation: sourceLocation)
        #expect(movedLines(dry.out) == expected, "merge --dry-run:\n\(dry.out)", sourceLocation: sourceLocation)
        let other = pnmerge(["merge", "--dry-run", bob, alice])
        #expect(other.status == 0, "\(other.err)", sourceLocation: sourceLocation)
        #expect(movedLines(other.out).isEmpty, "the other order:\n\(other.out)", sourceLocation: sourceLocation)

        let diff = pnmerge(["diff", alice, bob])
        #expect(diff.status == 0, "\(diff.err)", sourceLocation: sourceLocation)
        #expect(movedLines(diff.out) == expected, "diff:\n\(diff.out)", sourceLocation: sourceLocation)
        let diffJSON = try #require(try parseJSON(pnmerge(["diff", "--json", alice, bob]).out) as? [String: Any], sourceLocation: sourceLocation)
        #expect(movedJSON((diffJSON["a"] as? [String: Any])?["notes"]) == expectedJSON, "diff --json, a", sourceLocation: sourceLocation)
        #expect(movedJSON((diffJSON["b"] as? [String: Any])?["notes"]) == [], "diff --json, b", sourceLocation: sourceLocation)

        let json = try #require(try parseJSON(pnmerge(["merge", "--dry-run", "--json", alice, bob]).out) as? [String: Any],
                                sourceLocation: sourceLocation)
        #expect(movedJSON(json["notes"]) == expectedJSON, "merge --json", sourceLocation: sourceLocation)

        let merged = pnmerge(["merge", alice, bob])
        #expect(merged.status == 0, "\(merged.err)", sourceLocation: sourceLocation)
        #expect(movedLines(merged.out) == expected, "merge:\n\(merged.out)", sourceLocation: sourceLocation)
    }

    @Test("A note moved to the front, the middle or the end is the one reported moved (merge, --dry-run, diff, --json, both orders)",
          arguments: [("Bravo", 0, "2 → 1"), ("Charlie", 1, "3 → 2"), ("Alpha", 3, "1 → 4"), ("Charlie", 3, "3 → 4")])
    func movedNoteIsNamed(note: String, to index: Int, positions: String) throws {
        let dir = try Self.copies { bob, id in try bob.moveNote(try id(note), to: index) }
        let numbers = positions.split(separator: " ").compactMap { Int($0) }
        try Self.expectMoves(dir, ["moved    \"\(note)\": position \(positions)"],
                             json: ["\(note) \(numbers[0] - 1) \(numbers[1] - 1)"])
    }

    @Test("Of two notes, moving the second to the front names it, not the first")
    func secondToFront() throws {
        let base = Document(title: "M", author: "alice", time: at(9, 0))
        base.addNote(title: "First")
        base.addNote(title: "Second")
        let bob = base.fork(author: "bob")
        try bob.moveNote(try bob.findNote("Second").id, to: 0)
        let dir = try TempDir()
        let a = try dir.write(base.save(), "a.peernote"), b = try dir.write(bob.save(), "b.peernote")
        let r = pnmerge(["merge", a, b])
        #expect(Self.movedLines(r.out) == ["moved    \"Second\": position 2 → 1"], "\(r.out)")
    }

    @Test("Notes added, deleted and restored around others make no \"moved\" line; with a move among them, only the moved note has one")
    func addDeleteRestore() throws {
        let edits: (Document, (String) throws -> NoteID) throws -> Void = { bob, id in
            bob.addNote(title: "New first", at: 0)
            bob.addNote(title: "New middle", at: 2)
            try bob.deleteNote(try id("Charlie"))
            try bob.restoreNote(try id("Echo"))
        }
        let quiet = try Self.copies(edits)
        let dry = pnmerge(["merge", "--dry-run", quiet.path("alice.peernote"), quiet.path("bob.peernote")])
        #expect(dry.out.contains("added    \"New first\"") && dry.out.contains("restored \"Echo\"") && dry.out.contains("deleted  \"Charlie\""), "\(dry.out)")
        try Self.expectMoves(quiet, [], json: [])

        // Alice adds and deletes too: merged either way, still no move.
        let both = try Self.copies(edits, alice: { alice, id in
            alice.addNote(title: "Alice's", at: 1)
            try alice.deleteNote(try id("Bravo"))
        })
        try Self.expectMoves(both, [], json: [])
        let back = pnmerge(["merge", "--dry-run", both.path("bob.peernote"), both.path("alice.peernote")])
        #expect(Self.movedLines(back.out).isEmpty, "\(back.out)")

        // The same with Delta moved after Alpha by bob (New first, Alpha, Delta, New middle, Bravo,
        // Echo): Delta alone is moved, however the others shifted.
        let moved = try Self.copies { bob, id in
            try edits(bob, id)
            try bob.moveNote(try id("Delta"), to: 2)
        }
        let r = pnmerge(["merge", "--dry-run", moved.path("alice.peernote"), moved.path("bob.peernote")])
        #expect(Self.movedLines(r.out) == ["moved    \"Delta\": position 4 → 3"], "\(r.out)")
        let reverse = pnmerge(["merge", "--dry-run", moved.path("bob.peernote"), moved.path("alice.peernote")])
        #expect(Self.movedLines(reverse.out).isEmpty, "\(reverse.out)")
    }

    @Test("Both copies moved one note to the same place: the moves agree (no conflict), and no \"moved\" line either way")
    func sameMoveOnBothSides() throws {
        let dir = try Self.copies({ bob, id in try bob.moveNote(try id("Delta"), to: 0) },
                                  alice: { alice, id in try alice.moveNote(try id("Delta"), to: 0) })
        for (mine, theirs) in [("alice", "bob"), ("bob", "alice")] {
            let r = pnmerge(["merge", "--dry-run", dir.path(mine + ".peernote"), dir.path(theirs + ".peernote")])
            #expect(!r.out.contains("moved concurrently") && !r.out.contains("Conflicts"), "\(r.out)")
            #expect(Self.movedLines(r.out).isEmpty, "\(mine) ← \(theirs):\n\(r.out)")
        }
    }

    @Test("The meeting fixtures: merged into Bob's copy, the note Alice moved (\"Customer feedback\") is the one reported; into Alice's, none")
    func meetingFixtures() throws {
        let fixtures = Binary.packageRoot.appendingPathComponent("Fixtures")
        let alice = fixtures.appendingPathComponent("meeting-alice.peernote").path
        let bob = fixtures.appendingPathComponent("meeting-bob.peernote").path
        let intoBob = pnmerge(["merge", "--dry-run", bob, alice])
        #expect(intoBob.status == 0, "\(intoBob.err)")
        #expect(Self.movedLines(intoBob.out) == ["moved    \"Customer feedback\": position 2 → 1"], "\(intoBob.out)")
        let intoAlice = pnmerge(["merge", "--dry-run", alice, bob])
        #expect(Self.movedLines(intoAlice.out).isEmpty, "\(intoAlice.out)")
        let diff = pnmerge(["diff", bob, alice])
        #expect(Self.movedLines(diff.out) == ["moved    \"Customer feedback\": position 2 → 1"], "\(diff.out)")
    }
}
