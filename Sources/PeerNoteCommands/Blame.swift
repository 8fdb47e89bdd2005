import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension PeerNoteCLI {
    /// `peernote blame FILE NOTE [--json]`: each line of a note's body with the change that last edited it.
    struct Blame: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "blame",
            abstract: "Show who last edited each line of a note's body, and when.",
            discussion: """
                Each line of the body (of a live or a deleted note) with the change that last \
                edited it, its author and time, as 'git blame' does: the latest insert among the \
                line's characters (an empty line: its line break). Text deleted from a line does not \
                count; 'peernote log FILE NOTE' lists every change to the note.
                """
        )

        @Argument(help: ArgumentHelp("The .peernote file (- for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("The note: its id, a unique prefix of its id, or its exact title.", valueName: "NOTE"))
        var note: String

        @Flag(help: "Print the lines as JSON (man/peernote.1, JSON).")
        var json = false

        func execute() throws {
            let document = try DocumentFile.open(file, pipes: true)
            let target = try NoteLookup.findAny(note, in: document, path: TextFile.displayName(file))
            let lines: [BlameLine]
            do throws(PeerNoteError) { lines = try document.blame(target.id) } catch { throw CLIFailure(error, path: TextFile.displayName(file)) }
            try StandardOutput.write(json ? Self.json(lines).rendered : Self.text(lines, zone: .local))
        }

        /// `3@3fa9c1d0 (Alice Martin 2026-11-26 09:05  1) text`, the change and author columns
        /// padded to the widest, the line number to the most digits.
        static func text(_ lines: [BlameLine], zone: DisplayTimeZone) -> String {
            let changes = lines.map(\.change.description)
            let authors = lines.map { $0.author.isEmpty ? "<no author>" : DisplayText.oneLine($0.author) }
            let changeWidth = changes.map(\.count).max() ?? 0
            let authorWidth = authors.map(DisplayText.columns).max() ?? 0
            let numberWidth = String(lines.count).count
            var out = ""
            for (i, line) in lines.enumerated() {
                let number = String(line.number)
                out += changes[i].padded(toLength: changeWidth) + " ("
                out += authors[i] + String(repeating: " ", count: max(0, authorWidth - DisplayText.columns(authors[i])))
                out += " " + TimeText.dateTime(line.time, in: zone) + " "
                out += String(repeating: " ", count: numberWidth - number.count) + number + ") "
                out += DisplayText.oneLine(line.text) + "\n"
            }
            return out
        }

        /// `[{"line": 1, "text": …, "change": "<full id>", "short": "3@3fa9c1d0", "author": …, "time": …}]`.
        static func json(_ lines: [BlameLine]) -> JSONValue {
            .array(lines.map { l in
                .object([("line", .int(l.number)), ("text", .string(l.text)), ("change", .string(l.change.fullDescription)),
                         ("short", .string(l.change.description)), ("author", .string(l.author)), ("time", .string(TimeText.iso8601(l.time)))])
            })
        }
    }
}
