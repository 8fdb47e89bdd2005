import PeerNote
import PeerNoteCLISupport
import Testing
@testable import PNMergeCommands
@testable import PeerNoteCLISupport

@Suite("pnmerge show --format markdown escapes body lines that read as headings")
struct ShowMarkdownEscapeTests {
    @Test("show --format markdown: body lines that would read as a note or the notebook title get a backslash, as export writes them")
    func markdownEscapesBodyHeadings() throws {
        let d = Document(title: "NB", author: "a")
        d.addNote(title: "Recipe", body: "## Ingredients\nflour\n# Steps\nmix\n  # indented\n\\# already\n#\n### smaller\n#hashtag\nend # not first")
        let r = pnmerge(["show", "--format", "markdown", "-"], input: d.save())
        #expect(r.status == 0, "\(r.err)")
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Only the notebook title and the note's title are headings.
        #expect(lines.filter { MarkdownHeading.marker(Array($0.unicodeScalars)).map { $0.backslashes == 0 } ?? false } == ["# NB", "## Recipe"])
        let body = try #require(r.out.range(of: "\n\n\\## Ingredients"))
        #expect(r.out[body.lowerBound...] == """


            \\## Ingredients
            flour
            \\# Steps
            mix
              \\# indented
            \\\\# already
            \\#
            ### smaller
            #hashtag
            end # not first

            """)
    }

    @Test("The body escaping: one backslash more before a heading marker, every other line as it is")
    func escapeBody() {
        #expect(MarkdownHeading.escapeBody("# a\n## b\n   # c\n    # d\n\\# e\n#\tf\n##\n### g\nh") == "\\# a\n\\## b\n   \\# c\n    # d\n\\\\# e\n\\#\tf\n\\##\n### g\nh")
        #expect(MarkdownHeading.escapeBody("# a\r\nb\r\n") == "\\# a\r\nb\r\n")
        #expect(MarkdownHeading.escapeBody("plain\ntext") == "plain\ntext")
        #expect(MarkdownHeading.escapeBody("") == "")
    }

    @Test("The UTF-8 scan finds a heading line exactly where the scalars' marker does", arguments: [1, 2, 3] as [UInt64])
    func headingScan(seed: UInt64) {
        var rng = SharedTitleTests.Mix(state: seed)
        let pieces = ["#", "##", "###", " ", "   ", "\\", "\t", "\r", "\n", "x", "é", "\u{202E}", "＃", "\r\n"]
        for _ in 0 ..< 3_000 {
            let body = (0 ..< Int.random(in: 0 ... 8, using: &rng)).map { _ in pieces[Int.random(in: 0 ..< pieces.count, using: &rng)] }.joined()
            let lines = body.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
            let expected = lines.contains { MarkdownHeading.marker(Array($0)) != nil }
            let scanned = Array(body.utf8).withUnsafeBufferPointer { MarkdownHeading.hasHeadingLine($0) }
            #expect(scanned == expected, "\(body.debugDescription)")
        }
    }
}
