import PeerNote
import Testing
import TestSupport
@testable import PeerNoteCommands

/// The header `peernote edit --editor` puts above a note's body (man/peernote.1, --editor).
@Suite("edit --editor's note header")
struct NoteHeaderTests {
    let header = NoteHeader(title: "A \\ title\nin two lines", tags: ["a,b", "plain", ""], priority: .high)

    @Test("Rendered and read back unchanged, every field is left alone; the body is what follows the empty line, as it is")
    func roundTrip() throws {
        let text = header.render(body: "\nbody: with a colon\n\nTitle: not a header\n")
        #expect(text.hasPrefix("Title: A \\\\ title\\nin two lines\nTags: a\\,b, plain, \\e\nPriority: high\n\n"))
        let edited = try header.parse(text)
        #expect(edited == NoteHeader.Edited(title: nil, tags: nil, priority: nil, body: "\nbody: with a colon\n\nTitle: not a header\n"))
    }

    @Test("A changed line gives its field, decoded; keys in any case and order; CRLF line ends; a text ending inside the header has an empty body")
    func changedLines() throws {
        let edited = try header.parse("priority: low\r\nTITLE:   Two\\\\ \\n lines  \r\ntags: x, y\\, z\r\n\r\nbody\r\n")
        #expect(edited.title == "Two\\ \n lines")
        #expect(edited.tags == ["x", "y, z"])
        #expect(edited.priority == .low)
        #expect(edited.body == "body\r\n")
        #expect(try header.parse("Title: New").body == "")
        #expect(try header.parse("Title: New").title == "New")
        #expect(try header.parse("Tags:\n\n").tags == [])
    }

    @Test("A first line that is no header line, an unknown key, a repeated key or a bad priority is refused, naming the line")
    func refusals() {
        #expect(throws: NoteHeader.Problem.self) { try header.parse("just text\n\nbody") }
        #expect(throws: NoteHeader.Problem.self) { try header.parse("Title: x\nColour: red\n\n") }
        #expect(throws: NoteHeader.Problem.self) { try header.parse("Title: x\ntitle: y\n\n") }
        #expect(throws: NoteHeader.Problem.self) { try header.parse("Priority: urgent\n\n") }
        do {
            _ = try header.parse("Title: x\nPriority: urgent\n\n")
            Issue.record("a bad priority was accepted")
        } catch {
            #expect(error.message == "header line 2: priority \"urgent\" is not low, normal or high")
        }
    }
}
