import Testing
@testable import PeerNote

/// `Document.search` matches ASCII lines byte by byte and makes a string only of a hit; what it
/// finds must be what matching every line as a string finds (`NoteSearch.matches(_:)` on each
/// line of a split of the body's scalars at "\n"), whatever the text: ASCII and not, `\r\n`,
/// a lone `\r`, letters whose lowercase is ASCII (the Kelvin sign), combining marks.
@Suite("Search: byte matching finds what string matching finds")
struct SearchEquivalenceTests {
    /// The search as every line made a string: the definition the faster one must agree with.
    static func reference(_ doc: Document, _ search: NoteSearch, tag: String? = nil) -> [SearchHit] {
        var hits: [SearchHit] = []
        for n in doc.notes where tag.map({ n.tags.containsScalars(of: $0) }) ?? true {
            if search.matches(n.title) { hits.append(SearchHit(note: n.id, title: n.title, line: nil, text: n.title)) }
            guard !n.body.isEmpty else { continue }
            for (i, scalars) in n.body.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(String.UnicodeScalarView(scalars))
                if search.matches(line) { hits.append(SearchHit(note: n.id, title: n.title, line: i + 1, text: line)) }
            }
        }
        return hits
    }

    /// Pieces that texts and patterns are made of: each a case that a byte match could get wrong.
    static let pieces = ["a", "B", "ab", "AB", "x", "\r", "\n", "\r\n", "\n\n", " ", "K", "k", "\u{212A}", "é", "e\u{301}",
                         "E\u{301}", "İ", "ß", "\u{1F600}", "\t", "Line", "LINE"]

    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        mutating func text(_ most: Int) -> String {
            (0 ..< next(most + 1)).map { _ in pieces[next(pieces.count)] }.joined()
        }
    }

    @Test("random notes and patterns, plain and case-sensitive, with and without a tag: the same hits in the same order")
    func searchAgreesWithLineByLineMatching() throws {
        var g = Generator(state: 0x5EA2C4)
        for _ in 0 ..< 40 {
            let doc = Document(title: "N", author: "a")
            for _ in 0 ..< 12 {
                doc.addNote(title: g.text(4), body: g.text(12), tags: g.next(2) == 0 ? ["t"] : [])
            }
            for _ in 0 ..< 15 {
                let pattern = g.text(2)
                for caseSensitive in [false, true] {
                    let search = try NoteSearch(pattern, caseSensitive: caseSensitive)
                    #expect(doc.search(search) == Self.reference(doc, search), "pattern \(pattern.debugDescription)")
                    #expect(doc.search(search, tag: "t") == Self.reference(doc, search, tag: "t"))
                }
            }
        }
    }

    struct Enough: Error {}

    @Test("hits given one at a time are the list's, and the hit the callback throws for is the last")
    func hitsOneAtATime() throws {
        let doc = Document(title: "N", author: "a")
        for i in 0 ..< 30 { doc.addNote(title: "line \(i)", body: "a line\nno\nline again", tags: i % 2 == 0 ? ["t"] : []) }
        let search = try NoteSearch("line")
        var each: [SearchHit] = []
        doc.search(search, tag: "t") { each.append($0) }
        #expect(each == doc.search(search, tag: "t") && each.count == 45)
        for stop in [0, 1, 2, 3, 44] {
            var seen: [SearchHit] = []
            #expect(throws: Enough.self) {
                try doc.search(search, tag: "t") { (hit: SearchHit) throws(Enough) in
                    seen.append(hit)
                    if seen.count == stop + 1 { throw Enough() }
                }
            }
            #expect(seen == Array(each.prefix(stop + 1)))
        }
    }

    @Test("a carriage return before a line feed in a title is one character: \"\\r\" alone does not match it, \"\\r\\n\" does")
    func crlfInTitleIsOneCharacter() throws {
        let doc = Document(title: "N", author: "a")
        doc.addNote(title: "a\r\nb", body: "x\ry")
        #expect(doc.search(try NoteSearch("\r")).map(\.line) == [1])
        #expect(doc.search(try NoteSearch("a\r")).isEmpty)
        #expect(doc.search(try NoteSearch("\r\n")).map(\.line) == [nil])
        #expect(doc.search(try NoteSearch("K")).isEmpty)
        doc.addNote(title: "\u{212A}elvin", body: "BOOK\nkey")
        #expect(doc.search(try NoteSearch("k")).map(\.line) == [nil, 1, 2])
    }
}
