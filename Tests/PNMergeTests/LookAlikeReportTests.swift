import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PNMergeCommands

/// Strings are compared by their exact Unicode scalars (peernote(5), CONVENTIONS), so "café" as
/// U+00E9 and as "e" + U+0301 are two values that print alike. Where a report shows such values
/// side by side, each is followed by its scalars; other values print as before.
@Suite("Look-alike strings in reports")
struct LookAlikeReportTests {
    static let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
    static let nfcSpelled = "caf\\u{e9}", nfdSpelled = "cafe\\u{301}"

    /// Whether `text` holds `part` byte for byte (`String.contains` matches a look-alike too).
    static func holds(_ text: String, _ part: String) -> Bool {
        let t = Array(text.utf8), p = Array(part.utf8)
        return t.indices.contains { t[$0...].starts(with: p) }
    }

    /// A notebook "T" with note "Note"; alice sets the notebook's title, the note's title and a
    /// tag to "café" as U+00E9 (10:02), bob to "cafe" + U+0301 (10:05).
    struct Copies {
        let alice: Document
        let bob: Document

        init() throws {
            let base = Document(title: "T", author: "carol")
            base.clock = { at(9, 30) }
            let note = base.addNote(title: "Note", body: "b")
            let alice = base.fork(author: "alice"), bob = base.fork(author: "bob")
            alice.clock = { at(10, 2) }
            bob.clock = { at(10, 5) }
            for (doc, text) in [(alice, nfc), (bob, nfd)] {
                doc.setTitle(text)
                try doc.setNoteTitle(note, text)
                try doc.addTag(note, text)
            }
            (self.alice, self.bob) = (alice, bob)
        }

        func write(to dir: TempDir) throws {
            _ = try dir.write(alice.save(), "alice.peernote")
            _ = try dir.write(bob.save(), "bob.peernote")
        }
    }

    @Test("merge spells out look-alike conflict values, the shown value and an edit's 'was'; --json keeps the exact strings")
    func mergeReport() throws {
        let dir = try TempDir()
        let copies = try Copies()
        try copies.write(to: dir)
        let merged = copies.alice.fork()
        try merged.merge(copies.bob)
        let shown = try #require(merged.notes.first?.title)
        let spelled = { (text: String) in text.hasSameScalars(as: Self.nfc) ? Self.nfcSpelled : Self.nfdSpelled }
        // Merged into the copy whose values lose, so that its note and notebook are retitled.
        let (mine, theirs, was) = shown.hasSameScalars(as: Self.nfc) ? ("bob", "alice", Self.nfd) : ("alice", "bob", Self.nfc)
        #expect(merged.title.hasSameScalars(as: shown))

        let r = pnmerge(["merge", "--dry-run", dir.path("\(mine).peernote"), dir.path("\(theirs).peernote")])
        #expect(r.status == 0, "\(r.err)")
        let conflicts = r.out.split(separator: "\n").filter { $0.contains(" vs ") }.map(String.init)
        #expect(conflicts.count == 2, "\(r.out)")
        for line in conflicts {
            #expect(Self.holds(line, "\"\(Self.nfc)\" (\(Self.nfcSpelled)) (alice, 10:02) vs \"\(Self.nfd)\" (\(Self.nfdSpelled)) (bob, 10:05), showing \"\(shown)\" (\(spelled(shown)))"), "\(line)")
        }
        #expect(Self.holds(r.out, "edited   \"\(shown)\" (\(spelled(shown))) (was \"\(was)\" (\(spelled(was)))): title, tags"), "\(r.out)")
        #expect(Self.holds(r.out, "retitled notebook \"\(was)\" (\(spelled(was))) → \"\(shown)\" (\(spelled(shown)))"), "\(r.out)")

        // --json: the values are the exact strings, and the description is the line as before.
        let json = pnmerge(["merge", "--dry-run", "--json", dir.path("\(mine).peernote"), dir.path("\(theirs).peernote")])
        #expect(json.status == 0, "\(json.err)")
        #expect(!json.out.contains("\\\\u{"), "\(json.out)")
    }

    @Test("diff spells out a retitle and an edit's 'was' that differ only in their scalars")
    func diff() throws {
        let dir = try TempDir()
        try Copies().write(to: dir)
        let r = pnmerge(["diff", dir.path("alice.peernote"), dir.path("bob.peernote")])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("(\(Self.nfcSpelled))") && r.out.contains("(\(Self.nfdSpelled))"), "\(r.out)")
        let json = pnmerge(["diff", "--json", dir.path("alice.peernote"), dir.path("bob.peernote")])
        #expect(json.status == 0, "\(json.err)")
        #expect(!json.out.contains("\\\\u{"), "\(json.out)")
    }

    @Test("diff spells out a retitled notebook whose titles differ only in their scalars; other titles print as before")
    func retitle() throws {
        let dir = try TempDir()
        let base = Document(title: Self.nfc, author: "carol")
        base.addNote(title: "N", body: "")
        let renamed = base.fork(author: "dan")
        renamed.setTitle(Self.nfd)
        let other = base.fork(author: "dan")
        other.setTitle("Home")
        _ = try dir.write(base.save(), "base.peernote")
        _ = try dir.write(renamed.save(), "renamed.peernote")
        _ = try dir.write(other.save(), "other.peernote")

        let r = pnmerge(["diff", dir.path("base.peernote"), dir.path("renamed.peernote")])
        #expect(Self.holds(r.out, "retitled notebook \"\(Self.nfc)\" (\(Self.nfcSpelled)) → \"\(Self.nfd)\" (\(Self.nfdSpelled))"), "\(r.out)")
        let plain = pnmerge(["diff", dir.path("base.peernote"), dir.path("other.peernote")])
        #expect(Self.holds(plain.out, "retitled notebook \"\(Self.nfc)\" → \"Home\""), "\(plain.out)")
    }

    @Test("show spells out tags that differ only in their scalars, in text and Markdown; --json keeps them exact")
    func show() throws {
        let dir = try TempDir()
        let copies = try Copies()
        let merged = copies.alice.fork()
        try merged.merge(copies.bob)
        let id = try #require(merged.notes.first?.id)
        try merged.addTag(id, "plain")
        _ = try dir.write(merged.save(), "m.peernote")
        let tags = "\(Self.nfd) (\(Self.nfdSpelled)), \(Self.nfc) (\(Self.nfcSpelled)), plain"
        let text = pnmerge(["show", dir.path("m.peernote")])
        #expect(Self.holds(text.out, "tags " + tags + " · "), "\(text.out)")
        let markdown = pnmerge(["show", "--format", "markdown", dir.path("m.peernote")])
        #expect(Self.holds(markdown.out, "Tags: " + tags + " · "), "\(markdown.out)")
        let json = pnmerge(["show", "--format", "json", dir.path("m.peernote")])
        #expect(json.status == 0, "\(json.err)")
        #expect(!json.out.contains("\\\\u{"), "\(json.out)")
    }

    @Test("DisplayText.sideBySide (grouped) marks exactly the texts hasLookAlike (pairwise) finds, on random lists")
    func sideBySideGrouped() {
        var rng = SystemRandomNumberGenerator()
        let pool = [Self.nfc, Self.nfd, "K", "\u{212A}", "x", "cafe", "\u{1E9B}\u{0323}", "\u{017F}\u{0323}\u{0307}", "a\u{0301}\u{0328}", "a\u{0328}\u{0301}"]
        for _ in 0 ..< 200 {
            let texts = (0 ..< Int.random(in: 0 ... 8, using: &rng)).map { _ in pool.randomElement(using: &rng) ?? "" }
            let expected = texts.map { t in DisplayText.hasLookAlike(t, among: texts) ? t + " (" + DisplayText.scalars(t) + ")" : t }
            #expect(DisplayText.sideBySide(texts, { $0 }) == expected, "\(texts.map(DisplayText.scalars))")
        }
    }

    @Test("DisplayText.sideBySide spells out only look-alikes, the Kelvin sign beside K included")
    func sideBySide() {
        #expect(DisplayText.sideBySide([Self.nfc, Self.nfd, "x"], { $0 }) == [Self.nfc + " (caf\\u{e9})", Self.nfd + " (cafe\\u{301})", "x"])
        #expect(DisplayText.sideBySide([Self.nfc, Self.nfc, "café!"], { "<\($0)>" }) == ["<\(Self.nfc)>", "<\(Self.nfc)>", "<café!>"])
        #expect(DisplayText.sideBySide(["K", "\u{212A}"], { $0 }) == ["K (K)", "\u{212A} (\\u{212a})"])
        #expect(DisplayText.sideBySide(["a", "b"], { $0 }) == ["a", "b"])
    }

    @Test("Tags that would not read as one tag in a list are quoted, so 'a, b' and 'a', 'b' read apart (list, show, textconv)")
    func tagList() throws {
        #expect(DisplayText.tagList(["a", "b"]) == "a, b")
        #expect(DisplayText.tagList(["a, b"]) == "\"a, b\"")
        #expect(DisplayText.tagList([" a", "a "]) == "\" a\", \"a \"")
        #expect(DisplayText.tagList(["", "-", "x"]) == "\"\", \"-\", x")
        #expect(DisplayText.tagList(["say \"hi\"", "back\\slash"]) == "\"say \\\"hi\\\"\", back\\slash")
        #expect(DisplayText.tagList(["tab\tin", "esc\u{1B}"]) == "tab\\tin, esc\\u{1b}")
        // End to end: two notes whose tags once printed alike.
        let dir = try TempDir()
        let doc = Document(title: "T", author: "ann")
        doc.addNote(title: "one", tags: ["a, b"])
        doc.addNote(title: "two", tags: ["a", "b"])
        let file = try dir.write(doc.save(), "t.peernote")
        let shown = pnmerge(["show", file]).out
        #expect(shown.contains("tags \"a, b\""), "\(shown)")
        #expect(shown.contains("tags a, b"), "\(shown)")
        let textconv = pnmerge(["textconv", file]).out
        #expect(textconv.contains("tags: \"a, b\""), "\(textconv)")
    }
}
