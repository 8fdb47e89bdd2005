import PeerNote
import PeerNoteCLISupport

/// The whole note as `peernote edit --editor` opens it: a short header, an empty line, then the
/// body exactly as it is (man/peernote.1, EDITING A WHOLE NOTE):
///
///     Title: Packing
///     Tags: todo, urgent
///     Priority: normal
///
///     passport
///     charger
///
/// The title is written with `\\`, `\n` and `\r` for a backslash, a line break and a carriage
/// return, the tags with the escapes `peernote export` gives them (a comma in a tag is `\,`).
/// Reading: the header is the lines before the first empty line (each `Title:`, `Tags:` or
/// `Priority:`, any case, each at most once; a missing line changes nothing); everything after
/// that empty line is the body. A header line left exactly as it was written changes nothing,
/// so that what the header cannot show of a value (spaces around a title) is never lost.
struct NoteHeader: Equatable {
    var title: String
    var tags: [String]
    var priority: Priority

    /// Why an edited text was refused: one line naming the header line.
    struct Problem: Error, Equatable {
        var message: String
    }

    /// What the edited text says: each field whose header line changed (nil: leave it), and the body.
    struct Edited: Equatable {
        var title: String?
        var tags: [String]?
        var priority: Priority?
        var body: String
    }

    var titleLine: String { Self.line("Title", MarkdownFormat.escapeHeading(title)) }
    var tagsLine: String { Self.line("Tags", tags.map(MarkdownFormat.escapeTag).joined(separator: ", ")) }
    var priorityLine: String { Self.line("Priority", priority.rawValue) }

    /// `Key: value`, or `Key:` for an empty value (no space at the end of the line).
    static func line(_ key: String, _ value: String) -> String { value.isEmpty ? key + ":" : key + ": " + value }

    /// The text the editor opens: the header, an empty line, `body`.
    func render(body: String) -> String {
        [titleLine, tagsLine, priorityLine].joined(separator: "\n") + "\n\n" + body
    }

    /// Reads an edited text (see the type's description).
    func parse(_ text: String) throws(Problem) -> Edited {
        var edited = Edited(body: "")
        // Split by scalars: a String's characters join "\r\n" into one.
        var rest = Substring(text).unicodeScalars
        var number = 0
        var seen: Set<String> = []
        while !rest.isEmpty {
            let end = rest.firstIndex(of: "\n") ?? rest.endIndex
            var scalars = rest[..<end]
            rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
            number += 1
            // A structural line drops one CR before its LF (an editor that saves CRLF line ends).
            if scalars.last == "\r" { scalars = scalars.dropLast() }
            let line = String(String.UnicodeScalarView(scalars))
            if line.isEmpty {
                edited.body = String(String.UnicodeScalarView(rest))
                return edited
            }
            guard let colon = line.firstIndex(of: ":") else { throw Self.notHeader(line, number) }
            let key = String(line[..<colon]).trimmingWhitespace.lowercased()
            guard ["title", "tags", "priority"].contains(key) else { throw Self.notHeader(line, number) }
            guard seen.insert(key).inserted else {
                throw Problem(message: "the header has two \(key.prefix(1).uppercased() + key.dropFirst()): lines (line \(number)); give each once")
            }
            switch key {
            case "title":
                if line != titleLine { edited.title = Self.decodeTitle(line[line.index(after: colon)...]) }
            case "tags":
                guard line != tagsLine else { continue }
                guard let meta = MarkdownFormat.parseMetadata(Array(line.unicodeScalars)) else {
                    throw Problem(message: "header line \(number) (\(DisplayText.oneLine(line).clippedTo60)) is not a list of tags: give them as Tags: a, b (a comma in a tag as \\,)")
                }
                edited.tags = meta.tags
            default:
                guard line != priorityLine else { continue }
                let value = String(line[line.index(after: colon)...]).trimmingWhitespace.lowercased()
                guard let p = Priority(rawValue: value) else {
                    throw Problem(message: "header line \(number): priority \"\(DisplayText.oneLine(String(value)).clippedTo60)\" is not low, normal or high")
                }
                edited.priority = p
            }
        }
        // The text ended inside the header: the body is empty.
        return edited
    }

    private static func notHeader(_ line: String, _ number: Int) -> Problem {
        Problem(message: "line \(number) (\(DisplayText.oneLine(line).clippedTo60)) is not a header line: the text must start with the note's header (Title:, Tags:, Priority:), then an empty line, then the body")
    }

    /// A title's text after `Title:`: spaces and tabs around it dropped, `\\`, `\n` and `\r` decoded.
    static func decodeTitle(_ raw: Substring) -> String {
        let scalars = Array(raw.unicodeScalars.drop { $0 == " " || $0 == "\t" })
        var end = scalars.count
        while end > 0 && (scalars[end - 1] == " " || scalars[end - 1] == "\t") { end -= 1 }
        var out = String.UnicodeScalarView()
        var i = 0
        while i < end {
            if scalars[i] == "\\", i + 1 < end, scalars[i + 1] == "\\" || scalars[i + 1] == "n" || scalars[i + 1] == "r" {
                out.append(scalars[i + 1] == "n" ? "\n" : scalars[i + 1] == "r" ? "\r" : "\\")
                i += 2
            } else {
                out.append(scalars[i])
                i += 1
            }
        }
        return String(out)
    }
}

private extension String {
    /// At most 60 characters, for a message.
    var clippedTo60: String { DisplayText.clipped(self) }
}
