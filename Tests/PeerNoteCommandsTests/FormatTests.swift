import Foundation
import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PeerNoteCommands

/// Whether two contents hold the same titles, bodies and tags scalar for scalar, and the same priorities.
func identical(_ a: NotebookContent, _ b: NotebookContent) -> Bool {
    guard sameScalars(a.title, b.title), a.notes.count == b.notes.count else { return false }
    for (x, y) in zip(a.notes, b.notes) {
        guard sameScalars(x.title, y.title), sameScalars(x.body, y.body), x.priority == y.priority,
              x.tags.count == y.tags.count, zip(x.tags, y.tags).allSatisfy(sameScalars) else { return false }
    }
    return true
}

/// A small deterministic random generator (SplitMix64), so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Markdown and JSON formats")
struct FormatTests {
    let sample = NotebookContent(title: "Weekly meeting", notes: [
        NoteContent(title: "Agenda", body: "1. Budget\n2. Hiring", tags: ["work", "urgent"], priority: .high),
        NoteContent(title: "Loose ends", body: "Call the printer people.\n"),
        NoteContent(title: "Empty"),
    ])

    @Test("Tags spelled NFC and NFD stay two tags, sorted by scalars, through both formats; contents compare by scalars")
    func exactSpellings() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        let note = NoteContent(title: nfc, tags: ["f", nfc, "e\u{301}", nfd, nfc])
        #expect(note.tags.map { Array($0.utf8) } == [nfd, nfc, "e\u{301}", "f"].map { Array($0.utf8) })
        #expect(note != NoteContent(title: nfd, tags: note.tags))
        #expect(NotebookContent(title: nfc, notes: []) != NotebookContent(title: nfd, notes: []))
        let content = NotebookContent(title: nfd, notes: [note])
        let markdown = MarkdownFormat.parse(MarkdownFormat.render(content)).notebook
        #expect(identical(markdown, content))
        #expect(markdown == content)
        let json = try NotebookJSON.parse(Array(NotebookJSON.render(content.makeDocument(author: "a", message: "m").notebook).utf8))
        #expect(identical(json, content))
    }

    @Test("Export writes the documented Markdown")
    func renderSample() {
        #expect(MarkdownFormat.render(sample) == """
            # Weekly meeting

            ## Agenda
            Tags: urgent, work · Priority: high

            1. Budget
            2. Hiring

            ## Loose ends

            Call the printer people.


            ## Empty


            """)
    }

    @Test("Export then import gives the same notebook")
    func roundTripSample() {
        let (parsed, warnings) = MarkdownFormat.parse(MarkdownFormat.render(sample))
        #expect(warnings.isEmpty)
        #expect(identical(parsed, sample))
    }

    @Test("Bodies, titles and tags that look like Markdown structure survive the round trip", arguments: [
        NotebookContent(title: "", notes: []),
        NotebookContent(title: "Only a title", notes: []),
        NotebookContent(title: "", notes: [NoteContent(title: "untitled notebook")]),
        NotebookContent(title: "# not a heading\\", notes: [
            NoteContent(title: "", body: "# heading-like\n## another\n#\n##\n  # indented\n    # code\n### deeper\n#hashtag"),
            NoteContent(title: "Escapes", body: "\\# already escaped\n\\\\## twice\n   \\# three spaces\n\\\nback\\slash"),
            NoteContent(title: "Newlines", body: "\n\nstarts and ends with blank lines\n\n\n"),
            NoteContent(title: "Single newline", body: "\n"),
            NoteContent(title: "Fake metadata", body: "Tags: not, tags\nPriority: high"),
            NoteContent(title: "Fake metadata with tags", body: "Tags: x · Priority: low\n", tags: ["real"]),
            NoteContent(title: "CRLF\r", body: "windows\r\nline\r\n"),
            NoteContent(title: "Title with\nline break and \\n and \\\\", body: "x"),
            NoteContent(title: "  padded title  ", body: " padded body "),
            NoteContent(title: "## title that is a heading", body: "", priority: .low),
            NoteContent(title: "Tags", tags: ["a, b", "dot · dot", "back\\slash", " lead", "trail ", "", "two\nlines", "\\n", "\\e", "Tags: x", "pri:ority"]),
            NoteContent(title: "Unicode ✓ 日本 é", body: "zzz ✓ 日本\u{FEFF}\t\u{0}end"),
        ]),
    ])
    func roundTripTricky(_ content: NotebookContent) {
        let text = MarkdownFormat.render(content)
        let (parsed, warnings) = MarkdownFormat.parse(text)
        #expect(warnings.isEmpty)
        #expect(identical(parsed, content), "round trip changed the notebook; Markdown was:\n\(text)")
    }

    @Test("A line meant as a note's Tags/Priority line that does not parse stays text, and a warning names it")
    func malformedMetadataLine() {
        let (parsed, warnings) = MarkdownFormat.parse("# Book\n\n## One\nTags: home, urgent · Priority: urgent\n\nbody\n## Two\n  priority: High\n")
        #expect(parsed.notes.map(\.body) == ["Tags: home, urgent · Priority: urgent\n\nbody", ""])
        #expect(parsed.notes.map(\.priority) == [.normal, .high])
        #expect(warnings == ["line 4 starts like a note's 'Tags: … · Priority: … · Created: …' line but is not one (tags are separated by ',', the priority is low, normal or high, the date is like 2024-05-01T09:30:00Z), so it was kept as the note's text"])
        // A body that starts so, written by export, reads back as it was, without a warning.
        for body in ["Priority: urgent", "Tags: x · Priority: no", "tags:"] {
            let content = NotebookContent(title: "", notes: [NoteContent(title: "N", body: body)])
            let round = MarkdownFormat.parse(MarkdownFormat.render(content))
            #expect(round.warnings.isEmpty)
            #expect(identical(round.notebook, content))
        }
    }

    @Test("A '#' line inside a fenced code block still starts a note, and a warning names its line")
    func headingInCodeBlock() {
        let text = "## Script\n```sh\n# install\nmake\n```\n\n## Other\n~~~\n## also\n~~~\n## Last\n```\nlone fence\n"
        let (parsed, warnings) = MarkdownFormat.parse(text)
        #expect(parsed.notes.map(\.title) == ["Script", "install", "Other", "also", "Last"])
        #expect(warnings == [3, 9].map { "line \($0) is inside a code block but starts with '#', so it starts a new note; write '\\#' to keep it in the note's text" })
        // Escaped, as export writes it: no heading, no warning.
        let content = NotebookContent(title: "", notes: [NoteContent(title: "Script", body: "```sh\n# install\n```")])
        let round = MarkdownFormat.parse(MarkdownFormat.render(content))
        #expect(round.warnings.isEmpty)
        #expect(identical(round.notebook, content))
    }

    @Test("Random notebooks made of Markdown's special characters survive the round trip")
    func roundTripRandom() {
        let alphabet: [Unicode.Scalar] = ["#", "#", " ", "\n", "\n", "\\", "·", ",", ":", "a", "T", "\r", "\t", "e", "n", "P", "é", "-"]
        var rng = SeededGenerator(state: 0x5EED)
        func text(_ max: Int) -> String {
            let n = Int.random(in: 0 ... max, using: &rng)
            return String(String.UnicodeScalarView((0 ..< n).map { _ in alphabet[Int.random(in: 0 ..< alphabet.count, using: &rng)] }))
        }
        let words = ["Tags:", "Priority:", "high", "# ", "## ", "\\# ", " · ", ", "]
        func phrase() -> String {
            (0 ..< Int.random(in: 0 ... 6, using: &rng)).map { _ in Bool.random(using: &rng) ? words.randomElement(using: &rng) ?? "" : text(4) }.joined()
        }
        let times: [TimeInterval?] = [nil, nil, 0, -1, 1_714_555_800, 4_102_444_799, -62_135_596_800]
        for _ in 0 ..< 400 {
            let notes = (0 ..< Int.random(in: 0 ... 4, using: &rng)).map { _ in
                NoteContent(title: phrase(), body: phrase() + text(12) + phrase(),
                            tags: (0 ..< Int.random(in: 0 ... 3, using: &rng)).map { _ in phrase() },
                            priority: [Priority.low, .normal, .high].randomElement(using: &rng) ?? .normal,
                            created: (times.randomElement(using: &rng) ?? nil).map { Date(timeIntervalSince1970: $0) })
            }
            let content = NotebookContent(title: Bool.random(using: &rng) ? "" : phrase(), notes: notes)
            let rendered = MarkdownFormat.render(content)
            let (parsed, warnings) = MarkdownFormat.parse(rendered)
            #expect(warnings.isEmpty)
            #expect(identical(parsed, content), "round trip changed the notebook; Markdown was:\n\(rendered)")
            #expect(parsed.notes.map(\.created) == content.notes.map(\.created), "Markdown was:\n\(rendered)")
            if !identical(parsed, content) || parsed.notes.map(\.created) != content.notes.map(\.created) { break }
        }
    }

    @Test("Hand-written Markdown: # headings are notes unless one # heading titles ## notes")
    func handWritten() {
        let plain = MarkdownFormat.parse("# One\nfirst body\n\n# Two\nsecond\n")
        #expect(plain.notebook.title == "")
        #expect(plain.notebook.notes.map(\.title) == ["One", "Two"])
        #expect(plain.notebook.notes.map(\.body) == ["first body", "second"])

        let titled = MarkdownFormat.parse("# Book\n\n## A\nTags: x, y\n\nbody A\n## B\npriority: LOW\nbody B\n")
        #expect(titled.notebook.title == "Book")
        #expect(titled.notebook.notes.map(\.title) == ["A", "B"])
        #expect(titled.notebook.notes[0].tags == ["x", "y"])
        #expect(titled.notebook.notes[0].body == "body A")
        #expect(titled.notebook.notes[1].priority == .low)
        #expect(titled.notebook.notes[1].body == "body B")

        // A # heading with text under it is a note, not the title: nothing is dropped.
        let intro = MarkdownFormat.parse("# Project\nSome intro.\n## Task\nDo it.\n")
        #expect(intro.notebook.title == "")
        #expect(intro.notebook.notes.map(\.title) == ["Project", "Task"])
        #expect(intro.notebook.notes[0].body == "Some intro.")

        // Mixed levels after the first heading: every heading is a note.
        let mixed = MarkdownFormat.parse("# A\n\n## B\n# C\n")
        #expect(mixed.notebook.title == "")
        #expect(mixed.notebook.notes.map(\.title) == ["A", "B", "C"])

        // ### and #tag are body text; a line that is not valid metadata is body text.
        let deep = MarkdownFormat.parse("## N\nPriority: urgent\n### Sub\n#tag\n")
        #expect(deep.notebook.notes.count == 1)
        #expect(deep.notebook.notes[0].priority == .normal)
        #expect(deep.notebook.notes[0].body == "Priority: urgent\n### Sub\n#tag")
    }

    @Test("Text before the first heading becomes an untitled note, with a warning")
    func preamble() {
        let result = MarkdownFormat.parse("loose text\n\n## Note\nbody\n")
        #expect(result.notebook.notes.map(\.title) == ["", "Note"])
        #expect(result.notebook.notes[0].body == "loose text")
        #expect(result.warnings.count == 1)
        let noHeadings = MarkdownFormat.parse("just text\n")
        #expect(noHeadings.notebook.notes.map(\.body) == ["just text"])
        #expect(noHeadings.warnings.count == 1)
        let empty = MarkdownFormat.parse(" \n\n")
        #expect(empty.notebook.notes.isEmpty && empty.warnings.isEmpty)
    }

    @Test("CRLF files and a byte-order mark are read like plain LF files")
    func crlfAndBOM() {
        let result = MarkdownFormat.parse("\u{FEFF}# Book\r\n\r\n## A\r\nTags: t\r\n\r\nline 1\r\nline 2\r\n")
        #expect(result.notebook.title == "Book")
        #expect(result.notebook.notes.count == 1)
        #expect(sameScalars(result.notebook.notes[0].title, "A"))
        #expect(result.notebook.notes[0].tags == ["t"])
        #expect(sameScalars(result.notebook.notes[0].body, "line 1\nline 2"))
    }


    @Test("Markdown: the creation time is on the metadata line, and reads back; a file without it still imports")
    func markdownCreated() throws {
        let may = Date(timeIntervalSince1970: 1_714_555_800)  // 2024-05-01T09:30:00Z
        let content = NotebookContent(title: "Dated", notes: [
            NoteContent(title: "Both", body: "text", tags: ["a"], priority: .high, created: may),
            NoteContent(title: "Only the date", body: "Created: 2020-01-01T00:00:00Z", created: Date(timeIntervalSince1970: -86_400)),
            NoteContent(title: "No date", body: "Created: 2020-01-01T00:00:00Z"),
        ])
        let text = MarkdownFormat.render(content)
        #expect(text == """
            # Dated

            ## Both
            Tags: a · Priority: high · Created: 2024-05-01T09:30:00Z

            text

            ## Only the date
            Created: 1969-12-31T00:00:00Z

            Created: 2020-01-01T00:00:00Z

            ## No date

            Created: 2020-01-01T00:00:00Z


            """)
        let (parsed, warnings) = MarkdownFormat.parse(text)
        #expect(warnings.isEmpty)
        #expect(parsed == content)
        #expect(parsed.notes.map(\.created) == [may, Date(timeIntervalSince1970: -86_400), nil])

        // Written by hand: any order, any case, an offset, a fraction (dropped); a file without dates.
        let hand = MarkdownFormat.parse("## A\ncreated: 2024-05-01t11:30:00.9+02:00 · tags: x\nbody\n## B\nPriority: low\n## C\n")
        #expect(hand.warnings.isEmpty)
        #expect(hand.notebook.notes.map(\.created) == [may, nil, nil])
        #expect(hand.notebook.notes.map(\.tags) == [["x"], [], []])
        #expect(hand.notebook.notes.map(\.body) == ["body", "", ""])

        // Not a date: the line stays text, with a warning naming it.
        for bad in ["Created: yesterday", "Created: 2024-02-30T00:00:00Z", "Tags: a · Created: 2024-05-01", "Created: 2024-05-01T09:30:00Z · Created: 2024-05-01T09:30:00Z"] {
            let r = MarkdownFormat.parse("## N\n\(bad)\n")
            #expect(r.notebook.notes.map(\.body) == [bad])
            #expect(r.notebook.notes.map(\.created) == [nil])
            #expect(r.warnings.count == 1 && r.warnings[0].hasPrefix("line 2 starts like a note's"), "\(r.warnings)")
        }
    }

    @Test("Markdown: a file with some CRLF lines reads its headings, metadata and layout lines without the CR")
    func partlyCRLF() {
        let text = "# Book\r\n\r\n## First\r\nTags: a, b · Created: 2024-05-01T09:30:00Z\r\n\r\nkept\r\nline\n\r\n## Second\n\nplain\n\n##\r\n\r\n## Last\r\nPriority: low\r\n"
        let (parsed, warnings) = MarkdownFormat.parse(text)
        #expect(warnings.isEmpty)
        #expect(sameScalars(parsed.title, "Book"))
        #expect(parsed.notes.count == 4)
        let titles = parsed.notes.map(\.title), bodies = parsed.notes.map(\.body)
        #expect(zip(titles, ["First", "Second", "", "Last"]).allSatisfy(sameScalars), "\(titles.map(\.unicodeScalars).map(Array.init))")
        // Body lines keep their CR: the file is not all CRLF, and a body may hold CRLF.
        #expect(zip(bodies, ["kept\r\nline", "plain", "", ""]).allSatisfy(sameScalars), "\(bodies.map(\.unicodeScalars).map(Array.init))")
        #expect(parsed.notes.map(\.tags) == [["a", "b"], [], [], []])
        #expect(parsed.notes.map(\.priority) == [.normal, .normal, .normal, .low])
        #expect(parsed.notes[0].created == Date(timeIntervalSince1970: 1_714_555_800))
        // A blank line that is only a CR, at the end of a note, is layout too.
        let blankCR = MarkdownFormat.parse("## A\nbody\n\r\n## B\n")
        #expect(blankCR.notebook.notes.map(\.body) == ["body", ""])
    }

    @Test("Markdown: bodies with CRLF and titles and tags with a CR survive export then import")
    func crlfContentRoundTrip() {
        let content = NotebookContent(title: "Windows\r", notes: [
            NoteContent(title: "CRLF body", body: "one\r\ntwo\r\n", created: Date(timeIntervalSince1970: 1_600_000_000)),
            NoteContent(title: "All CRLF\r\n", body: "a\r\n\r\nb\r\n\r\n", tags: ["cr\r", "\r"]),
            NoteContent(title: "#\r", body: "#\r\n##\r\n\\#\r\n\r\n\r"),
            NoteContent(title: "Lone CR", body: "\r"),
        ])
        let text = MarkdownFormat.render(content)
        #expect(text.contains("# Windows\\r\n") && text.contains("## All CRLF\\r\\n\n") && text.contains("Tags: \\r, cr\\r\n"))
        let (parsed, warnings) = MarkdownFormat.parse(text)
        #expect(warnings.isEmpty)
        #expect(identical(parsed, content), "Markdown was:\n\(text.debugDescription)")
        #expect(parsed == content)
    }

    @Test("JSON: export then import keeps titles, bodies, tags and priorities")
    func jsonRoundTrip() throws {
        let content = NotebookContent(title: "J \"quoted\" \\ \u{1}", notes: [
            NoteContent(title: "A\tb", body: "line\nline\r\n\u{7F}✓", tags: ["x", "y z"], priority: .low),
            NoteContent(title: "", body: ""),
        ])
        let document = content.makeDocument(author: "t", message: "import")
        let json = NotebookJSON.render(document.notebook)
        let parsed = try NotebookJSON.parse(Array(json.utf8))
        #expect(identical(parsed, content))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["id"] as? String == document.id.uuidString.lowercased())
        let notes = try #require(object["notes"] as? [[String: Any]])
        #expect(notes.first?["id"] as? String == document.notes.first?.id.description)
        #expect(notes.first?["priority"] as? String == "low")
        #expect(notes.first?["created"] is String)
    }


    @Test("JSON: created dates the imported note; without it the note is dated now; a bad one is named")
    func jsonCreated() throws {
        let parsed = try NotebookJSON.parse(Array("""
            {"notes": [{"title": "a", "created": "2024-05-01T09:30:00Z"}, {"title": "b"}, {"title": "c", "created": null},
                       {"title": "d", "created": "1969-12-31T23:59:59.5-01:00"}, {"title": "e", "created": "@-4000000000000000"}]}
            """.utf8))
        let expected: [TimeInterval?] = [1_714_555_800, nil, nil, 3599, -4_000_000_000_000_000]
        #expect(parsed.notes.map(\.created) == expected.map { $0.map { Date(timeIntervalSince1970: $0) } })
        #expect(throws: ImportError("notes[1].created: \"2024-05-01 09:30\" is not a date and time like 2024-05-01T09:30:00Z (note \"Second\")")) {
            try NotebookJSON.parse(Array("{\"notes\": [{\"title\": \"a\"}, {\"title\": \"Second\", \"created\": \"2024-05-01 09:30\"}]}".utf8))
        }
        #expect(throws: ImportError("notes[0].created must be a string: a date and time like 2024-05-01T09:30:00Z")) {
            try NotebookJSON.parse(Array("{\"notes\": [{\"title\": \"a\", \"created\": 1714555800}]}".utf8))
        }
    }

    @Test("An import dates each note as its source says, never after the import's change")
    func makeDocumentCreated() throws {
        let past = Date(timeIntervalSince1970: 1_500_000_000)
        let future = Date(timeIntervalSince1970: 4_102_444_800)
        let content = NotebookContent(title: "T", notes: [
            NoteContent(title: "past", created: past), NoteContent(title: "now"), NoteContent(title: "future", created: future),
        ])
        // A change reads the coarse clock (`Document.systemSeconds`), which may lag `Date()` by a
        // tick: across a second's boundary it can still give the second before.
        let before = Date().timeIntervalSince1970.rounded(.down) - 1
        let document = content.makeDocument(author: "a", message: "import")
        let after = Date().timeIntervalSince1970
        let times = document.notes.map(\.created.timeIntervalSince1970)
        #expect(times[0] == 1_500_000_000)
        for t in times.dropFirst() { #expect(t >= before && t <= after) }
        #expect(NotebookContent(document.notebook).notes[0] == content.notes[0])
        // JSON export then import keeps the date.
        let json = try NotebookJSON.parse(Array(NotebookJSON.render(document.notebook).utf8))
        #expect(json.notes.first?.created == past)
        #expect(json.makeDocument(author: "b", message: "again").notes.first?.created == past)
    }

    @Test("JSON import errors say what is wrong")
    func jsonErrors() {
        #expect(throws: ImportError.self) { try NotebookJSON.parse(Array("{".utf8)) }
        #expect(throws: ImportError("notes is missing")) { try NotebookJSON.parse(Array("{\"title\": \"x\"}".utf8)) }
        // A value of the wrong kind is named with what it must be, in words.
        let wrongKinds: [(String, String)] = [
            ("[]", "the top level must be an object: {\"title\": ..., \"notes\": [...]}"),
            ("{\"notes\": {}}", "notes must be a list of notes"),
            ("{\"notes\": [\"x\"]}", "notes[0] must be an object (a note)"),
            ("{\"notes\": [{\"title\": 5}]}", "notes[0].title must be a string"),
            ("{\"notes\": [{\"title\": \"x\", \"tags\": \"a\"}]}", "notes[0].tags must be a list of strings"),
            ("{\"notes\": [{\"title\": \"x\", \"tags\": [\"a\", 3]}]}", "notes[0].tags[1] must be a string"),
            ("{\"notes\": [{\"title\": \"x\", \"priority\": 2}]}", "notes[0].priority must be a string: low, normal or high"),
        ]
        for (json, message) in wrongKinds {
            #expect(throws: ImportError(message)) { try NotebookJSON.parse(Array(json.utf8)) }
        }
        #expect(throws: ImportError("notes[0].priority: \"urgent\" is not one of low, normal, high")) {
            try NotebookJSON.parse(Array("{\"notes\": [{\"title\": \"a\", \"priority\": \"urgent\"}]}".utf8))
        }
        #expect(throws: ImportError("notes[0].title is missing")) { try NotebookJSON.parse(Array("{\"notes\": [{}]}".utf8)) }
    }

    @Test("A large import keeps every note, in order, from Markdown and from JSON")
    func largeImport() throws {
        let count = 3000
        let content = NotebookContent(title: "Big", notes: (0 ..< count).map {
            NoteContent(title: "note \($0)", body: "body \($0)\n", tags: $0 % 7 == 0 ? ["seven"] : [], priority: $0 % 5 == 0 ? .high : .normal)
        })
        let (markdown, warnings) = MarkdownFormat.parse(MarkdownFormat.render(content))
        #expect(warnings.isEmpty)
        let json = try NotebookJSON.parse(Array(NotebookJSON.render(content.makeDocument(author: "t", message: "m").notebook).utf8))
        for parsed in [markdown, json] {
            let document = parsed.makeDocument(author: "t", message: "import")
            #expect(document.notes.count == count)
            #expect(identical(NotebookContent(document.notebook), content))
        }
    }

    @Test("A note added at the end goes where adding it at the last index puts it, after deleted and moved notes too")
    func appendMatchesLastIndex() throws {
        /// Two copies of `document`; one appends, the other adds at the last index: the same list.
        func check(_ document: Document, _ what: String) throws {
            let other = document.fork()
            document.addNote(title: "appended")
            other.addNote(title: "appended", at: other.notes.count)
            #expect(document.notes.map(\.title) == other.notes.map(\.title), "\(what)")
            #expect(document.notes.last?.title == "appended", "\(what)")
            // Merged, both new notes sit together at the end (their origins are the same).
            try document.merge(other)
            #expect(document.notes.suffix(2).map(\.title) == ["appended", "appended"], "\(what)")
        }
        /// A notebook with notes "n0", "n1", "n2"; their ids.
        func three() -> (Document, [NoteID]) {
            let document = Document(title: "T", author: "a")
            return (document, (0 ..< 3).map { document.addNote(title: "n\($0)") })
        }
        try check(Document(title: "T", author: "a"), "empty")
        let (deletedLast, d) = three()
        try deletedLast.deleteNote(d[2])
        try check(deletedLast, "last note deleted")
        let (allDeleted, a) = three()
        for id in a { try allDeleted.deleteNote(id) }
        try check(allDeleted, "every note deleted")
        let (movedFirst, f) = three()
        try movedFirst.moveNote(f[2], to: 0)
        try check(movedFirst, "last note moved to the start")
        let (movedLast, l) = three()
        try movedLast.moveNote(l[0], to: 2)
        try movedLast.deleteNote(l[1])
        try check(movedLast, "first note moved to the end, the middle one deleted")
    }

    @Test("A JSON syntax error is named with its byte offset")
    func jsonSyntaxErrors() {
        let exported = "{\n  \"title\": \"Ünï\",\n  \"notes\": [\n    {\"title\": \"a\", \"body\": \"some text\"}\n  ]\n}\n"
        let cut = String(exported.utf8.prefix(50))!
        let cases: [(String, String)] = [
            // A file cut short (the commonest damage): the offset is its end.
            (cut, "offset 50: not valid JSON: the text ends inside the string that starts at offset 49"),
            ("{\"notes\": [", "offset 11: not valid JSON: the text ends where a value should be"),
            ("{\"notes\": [{\"title\": \"a\"}", "offset 25: not valid JSON: the text ends where ',' or ']' should be"),
            ("{\"title\": \"b\\q\", \"notes\": []}", "offset 12: not valid JSON: an unknown escape: in JSON a backslash comes before one of \" \\ / b f n r t u"),
            ("{\"notes\": []} junk", "offset 14: not valid JSON: 'j' after the end of the JSON value"),
            ("{\"notes\": [] \"title\": \"x\"}", "offset 13: not valid JSON: expected ',' or '}', found '\"'"),
            ("{notes: []}", "offset 1: not valid JSON: expected a key (a string in double quotes), found 'n'"),
            ("{\"notes\" []}", "offset 9: not valid JSON: expected ':' after the key, found '['"),
            ("{\"title\": \"a\tb\", \"notes\": []}", "offset 12: not valid JSON: a control character (U+0009) inside a string: write it as \\u0009"),
            ("{\"notes\": [], \"x\": tru}", "offset 19: not valid JSON: expected a value (true, false, null, a number, a string, an array or an object), found 't'"),
            ("{\"notes\": [], \"x\": 'a'}", "offset 19: not valid JSON: expected a value, found '''"),
            ("", "offset 0: not valid JSON: the text ends where a value should be"),
            ("{\"title\": \"\\u12G4\", \"notes\": []}", "offset 15: not valid JSON: expected a hex digit of a \\u escape, found 'G'"),
        ]
        for (json, message) in cases {
            #expect(throws: ImportError(message), "\(json)") { try NotebookJSON.parse(Array(json.utf8)) }
        }
        // Not UTF-8: the first bad byte.
        #expect(throws: ImportError("offset 12: not valid JSON: not valid UTF-8")) {
            try NotebookJSON.parse(Array("{\"title\": \"a".utf8) + [0xFF] + Array("\", \"notes\": []}".utf8))
        }
        // Too deep for the decoder: named with where the walk gave up.
        let deep = "{\"notes\": [], \"x\": " + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"
        #expect(throws: ImportError.self) { try NotebookJSON.parse(Array(deep.utf8)) }
    }

    @Test("A trailing comma, which JSON does not allow (and JSONDecoder takes), is refused at the comma")
    func jsonTrailingComma() {
        let cases: [(String, String)] = [
            ("{\"notes\":[{\"title\":\"a\"},]}", "offset 23: not valid JSON: a comma before ']': JSON allows no comma after the last item"),
            ("{\"notes\":[{\"title\":\"a\" , }]}", "offset 23: not valid JSON: a comma before '}': JSON allows no comma after the last item"),
            ("{\"notes\":[], \"x\": [1,\n]}", "offset 20: not valid JSON: a comma before ']': JSON allows no comma after the last item"),
            ("{\"notes\":[],}", "offset 11: not valid JSON: a comma before '}': JSON allows no comma after the last item"),
        ]
        for (json, message) in cases {
            #expect(throws: ImportError(message), "\(json)") { try NotebookJSON.parse(Array(json.utf8)) }
        }
        #expect(throws: ImportError("offset 10: not valid JSON: expected a value, found ','")) { try NotebookJSON.parse(Array("{\"notes\":[,]}".utf8)) }
    }

    @Test("A key repeated in one object is refused with both offsets, not imported with one of its values dropped")
    func jsonRepeatedKeys() throws {
        let cases: [(String, String)] = [
            ("{\"notes\":[{\"title\":\"first\"}],\"notes\":[{\"title\":\"second\"},{\"title\":\"third\"}]}",
             "offset 29: the key \"notes\" appears twice in one object (first at offset 1); only one of its values would be imported: remove or rename one"),
            ("{\"notes\":[{\"title\":\"a\",\"title\":\"b\"}]}",
             "offset 23: the key \"title\" appears twice in one object (first at offset 11); only one of its values would be imported: remove or rename one"),
            // The same key written with an escape is the same key to the decoder.
            ("{\"notes\":[{\"title\":\"a\",\"ti\\u0074le\":\"b\"}]}",
             "offset 23: the key \"title\" appears twice in one object (first at offset 11); only one of its values would be imported: remove or rename one"),
            // Deeper, and under a key the import does not read.
            ("{\"notes\":[], \"x\": {\"y\": [{\"k\": 1, \"k\": 2}]}}",
             "offset 34: the key \"k\" appears twice in one object (first at offset 26); only one of its values would be imported: remove or rename one"),
        ]
        for (json, message) in cases {
            #expect(throws: ImportError(message), "\(json)") { try NotebookJSON.parse(Array(json.utf8)) }
        }
        // The same key in different objects, and keys that differ only by case, are fine.
        let fine = try NotebookJSON.parse(Array("{\"notes\":[{\"title\":\"a\",\"Title\":\"x\"},{\"title\":\"b\"}],\"Notes\":1}".utf8))
        #expect(fine.notes.map(\.title) == ["a", "b"])
    }

    @Test("An escape that is half of a surrogate pair is refused with its offset; a whole pair is read")
    func jsonSurrogates() throws {
        let lone = "half of a UTF-16 pair, which is no character and cannot be imported"
        let cases: [(String, String)] = [
            ("{\"notes\":[{\"title\":\"a\",\"body\":\"x \\udc00 y\"}]}",
             "offset 33: \\udc00 is a low surrogate with no high one (\\uD800 to \\uDBFF) before it: \(lone)"),
            ("{\"notes\":[{\"title\":\"a\",\"body\":\"x \\uD800 y\"}]}",
             "offset 33: \\uD800 is a high surrogate with no low one (\\uDC00 to \\uDFFF) after it: \(lone)"),
            ("{\"notes\":[{\"title\":\"a\",\"body\":\"x \\ud800\\u0041\"}]}",
             "offset 33: \\ud800 is a high surrogate with no low one (\\uDC00 to \\uDFFF) after it: \(lone)"),
            ("{\"notes\":[{\"title\":\"a\",\"body\":\"\\ud800\\ud800\"}]}",
             "offset 31: \\ud800 is a high surrogate with no low one (\\uDC00 to \\uDFFF) after it: \(lone)"),
            ("{\"title\": \"\\ud800\", \"notes\": []}",
             "offset 11: \\ud800 is a high surrogate with no low one (\\uDC00 to \\uDFFF) after it: \(lone)"),
        ]
        for (json, message) in cases {
            #expect(throws: ImportError(message), "\(json)") { try NotebookJSON.parse(Array(json.utf8)) }
        }
        let pair = try NotebookJSON.parse(Array("{\"notes\":[{\"title\":\"\\ud83d\\ude00 \\u00e9\\u0041\"}]}".utf8))
        #expect(pair.notes.map(\.title) == ["\u{1F600} \u{E9}A"])
    }
}

@Suite("Terminal columns")
struct ColumnWidthTests {
    @Test("Display width: CJK and emoji take two columns, combining marks none, per grapheme")
    func widths() {
        #expect(DisplayText.columns("abc") == 3)
        #expect(DisplayText.columns("日本語のメモ") == 12)
        #expect(DisplayText.columns("買い物") == 6)
        #expect(DisplayText.columns("한국어") == 6)
        #expect(DisplayText.columns("ＡＢ") == 4)
        #expect(DisplayText.columns("📓") == 2)
        #expect(DisplayText.columns("👍🏽") == 2)
        #expect(DisplayText.columns("👩‍👩‍👧") == 2)
        #expect(DisplayText.columns("e\u{301}") == 1)
        #expect(DisplayText.columns("\u{200B}") == 0)
        #expect(DisplayText.columns("©") == 1)
        #expect(DisplayText.columns("Ünïcode 📓") == 10)
    }

    @Test("Printable ASCII is read by bytes: every byte at the edges of the range decides as by scalars")
    func printableASCII() {
        for b in 0 ... 0xFF {
            let s = String(decoding: [UInt8(ascii: "a"), UInt8(b)], as: UTF8.self)
            let byScalars = s.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
            #expect(DisplayText.isPrintableASCII(s) == byScalars, "byte \(b)")
        }
        // Long (not stored inline) and small strings alike; the empty string holds nothing to escape.
        #expect(DisplayText.isPrintableASCII(String(repeating: "Line of text. ", count: 40)))
        #expect(!DisplayText.isPrintableASCII(String(repeating: "Line of text. ", count: 40) + "\u{1b}"))
        #expect(DisplayText.isPrintableASCII(""))
        #expect(DisplayText.oneLine("plain title") == "plain title")
        #expect(DisplayText.oneLine("tab\there") == "tab\\there")
        // Tags: quoted by their first and last bytes and any comma or quote, as by scalars.
        #expect(DisplayText.tagList(["work"]) == "work")
        #expect(DisplayText.tagList([" lead"]) == "\" lead\"")
        #expect(DisplayText.tagList(["a,b"]) == "\"a,b\"")
        #expect(DisplayText.tagList(["say \"hi\""]) == "\"say \\\"hi\\\"\"")
        #expect(DisplayText.tagList(["café\t"]) == "\"café\\t\"")
        #expect(DisplayText.tagList(["-"]) == "\"-\"")
    }

    @Test("peernote list aligns columns by display width")
    func listAligned() throws {
        let d = Document(title: "T", author: "a")
        d.addNote(title: "日本語のメモ", tags: ["買い物"])
        d.addNote(title: "abcdefghijkl", tags: ["abcdef"])
        d.addNote(title: "👍🏽 ok", tags: ["x"])
        let lines = PeerNoteCLI.List.render(d, color: false).split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        // Every row's priority starts in the same terminal column.
        let starts = lines.map { line -> Int in
            guard let r = line.range(of: "normal") else { return -1 }
            return DisplayText.columns(String(line[..<r.lowerBound]))
        }
        #expect(!starts.contains(-1))
        #expect(Set(starts).count == 1, "\(lines)")
    }

    @Test("One long title runs on in its own line; the other rows stay narrow")
    func listLongTitle() throws {
        let d = Document(title: "T", author: "a")
        let long = String(repeating: "x", count: 300)
        let a = d.addNote(title: long, tags: [String(repeating: "t", count: 100)])
        let b = d.addNote(title: "short", tags: ["x"])
        let c = d.addNote(title: "a title of exactly forty-eight columns, padded!!", tags: ["y"])
        #expect(DisplayText.columns(d.notes[2].title) == PeerNoteCLI.List.widestPadded)
        let lines = PeerNoteCLI.List.render(d, color: false).split(separator: "\n").map(String.init)
        let pad = { (s: String) in s + String(repeating: " ", count: PeerNoteCLI.List.widestPadded - s.count) }
        #expect(lines == [
            "0  \(a.short)  \(long)  \(String(repeating: "t", count: 100))  normal",
            "1  \(b.short)  \(pad("short"))  \(pad("x"))  normal",
            "2  \(c.short)  \(d.notes[2].title)  \(pad("y"))  normal",
        ])
    }
}
