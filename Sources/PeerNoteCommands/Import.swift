import ArgumentParser
import PeerNote
import PeerNoteCLISupport

extension PeerNoteCLI {
    /// `peernote import SOURCE -o FILE`: a new notebook from Markdown or JSON.
    struct Import: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Make a new notebook from Markdown or JSON.",
            discussion: """
                Markdown: one '# ' or '## ' heading per note, its text the body (see peernote(1) for \
                the full format). JSON: as 'peernote export --format json' writes it. The format is \
                --format if given, else JSON for a .json file, Markdown for .md, .markdown and \
                .txt, and otherwise (SOURCE is - or has another extension) JSON when its first \
                non-blank character is '{', else Markdown. FILE must not exist.
                """
        )

        /// The input formats.
        enum Format: String, ExpressibleByArgument, CaseIterable, Sendable { case markdown, json }

        @Argument(help: ArgumentHelp("The Markdown or JSON file to read (- for standard input).", valueName: "SOURCE"), completion: .file())
        var source: String

        @Option(name: .shortAndLong, help: ArgumentHelp("The .peernote file to create.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var output: String

        @Option(help: ArgumentHelp("The input format (default: from SOURCE's extension or content).", valueName: "markdown|json"))
        var format: Format?

        @Option(parsing: .unconditional, help: ArgumentHelp("The notebook's title (default: the one in SOURCE).", valueName: "TITLE"))
        var title: String?

        @OptionGroup var author: AuthorOptions
        @OptionGroup var message: MessageOptions

        func execute() throws {
            // Refused before reading SOURCE, so that no warning about it is printed for an import that cannot happen.
            try DocumentFile.requireName(output)
            if output == "-" { throw CLIFailure(.usage, "the output must be a file, not - (standard output)") }
            if DocumentFile.exists(output) {
                throw DocumentFile.alreadyExists(output)
            }
            let author = try author.resolved()
            let bytes = try TextFile.bytes(source)
            let sourceName = TextFile.displayName(source)
            if FormatInfo.startsLikeDocument(bytes) {
                throw CLIFailure(.invalidInput, "\(sourceName): is a .peernote document, not Markdown or JSON: import reads what export writes "
                    + "(to copy a notebook, copy its file; to combine two copies, pnmerge merge)")
            }
            var content: NotebookContent
            switch format ?? Self.detect(source, bytes) {
            case .json:
                do { content = try NotebookJSON.parse(bytes) } catch { throw CLIFailure(.invalidInput, "\(sourceName): \(error)") }
            case .markdown:
                let text = try TextFile.decode(bytes, path: source)
                let (parsed, warnings) = MarkdownFormat.parse(text)
                for warning in warnings { Failure.report("\(sourceName): warning: \(warning)") }
                // An empty source (an export that failed into `> notes.md`) makes an empty notebook: said.
                if text.unicodeScalars.allSatisfy({ $0.properties.isWhitespace || $0 == "\u{FEFF}" }) {
                    Failure.report("\(sourceName): warning: it is empty; the notebook has no title and no notes")
                }
                content = parsed
            }
            if let title { content.title = title }
            let name = source == "-" ? "standard input" : source
            let count = content.notes.count
            let document = content.makeDocument(author: author,
                                                message: message.or("Import \(count) note\(count == 1 ? "" : "s") from \(name)"))
            try DocumentFile.create(output, document)
        }

        static func detect(_ source: String, _ bytes: [UInt8]) -> Format {
            let lower = source.lowercased()
            if lower.hasSuffix(".json") { return .json }
            if lower.hasSuffix(".md") || lower.hasSuffix(".markdown") || lower.hasSuffix(".txt") { return .markdown }
            let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            return first == UInt8(ascii: "{") ? .json : .markdown
        }
    }
}
