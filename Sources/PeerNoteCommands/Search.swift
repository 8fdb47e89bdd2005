import ArgumentParser
import PeerNote
import PeerNoteCLISupport

extension PeerNoteCLI {
    /// `peernote search FILE PATTERN [--regex] [--tag T] [--json]`: the title and body lines that match.
    struct Search: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "search",
            abstract: "Find text in the notes' titles and bodies.",
            discussion: """
                One line a hit: the note's short id and title, then 'title' or the body's line \
                number, then the line. PATTERN is plain text matched ignoring letter case, or with \
                --regex a regular expression (Swift Regex syntax, also ignoring case; --case-sensitive \
                for either). --tag keeps the notes with that tag (exact Unicode scalars). Exit 0 with \
                or without hits; a regular expression that does not compile is exit 64.
                """
        )

        @Argument(help: ArgumentHelp("The .peernote file (- for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("The text, or with --regex the regular expression, to find.", valueName: "PATTERN"))
        var pattern: String

        @Flag(help: "PATTERN is a regular expression.")
        var regex = false

        @Flag(help: "Match letter case exactly.")
        var caseSensitive = false

        @Option(parsing: .unconditional, help: ArgumentHelp("Search only the notes tagged TAG.", valueName: "TAG"))
        var tag: String?

        @Flag(help: "Print JSON.")
        var json = false

        func execute() throws {
            // The pattern first: a bad one is refused before the file is read.
            let search: NoteSearch
            do { search = try NoteSearch(pattern, regex: regex, caseSensitive: caseSensitive) } catch {
                throw CLIFailure(.usage, "\(error)")
            }
            let document = try DocumentFile.open(file, pipes: true)
            // Each hit written as it is found, a chunk at a time.
            var out = StandardOutput.chunked()
            if json {
                try out.appendBytes { (bytes, flush) throws(CLIFailure) in
                    var array = JSONValue.ArrayWriter(indent: 0)
                    try document.search(search, tag: tag) { (hit: SearchHit) throws(CLIFailure) in
                        array.append(.object([("note", .string(hit.note.description)), ("title", .string(hit.title)),
                                              ("field", .string(hit.line == nil ? "title" : "body")), ("line", .optional(hit.line)),
                                              ("text", .string(hit.text))]), into: &bytes)
                        if bytes.count >= ChunkedWriter.chunk { try flush(&bytes) }
                    }
                    array.finish(into: &bytes)
                }
                try out.line("")
                return try out.finish()
            }
            let color = Terminal.colorEnabled()
            try document.search(search, tag: tag) { (hit: SearchHit) throws(CLIFailure) in
                let place = hit.line.map { "line \($0)" } ?? "title"
                try out.line(Terminal.paint(hit.note.short, .yellow, enabled: color) + "  " + Terminal.paint(Text.quoted(hit.title), .bold, enabled: color)
                    + "  " + place + ": " + DisplayText.oneLine(hit.text))
            }
            try out.finish()
        }
    }
}
