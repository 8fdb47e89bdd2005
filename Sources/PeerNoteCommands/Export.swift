import ArgumentParser
import PeerNote

extension PeerNoteCLI {
    /// `peernote export FILE [--format markdown|json]`: the notebook's content on standard output.
    struct Export: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write the notebook as Markdown or JSON to standard output.",
            discussion: "'peernote import' reads both back, keeping titles, bodies, tags, priorities and creation dates. See peernote(1) for the Markdown format."
        )

        /// The output formats.
        enum Format: String, ExpressibleByArgument, CaseIterable, Sendable { case markdown, json }

        @Argument(help: ArgumentHelp("The .peernote file (- for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Option(help: ArgumentHelp("The output format.", valueName: "markdown|json"))
        var format: Format = .markdown

        func execute() throws {
            let document = try DocumentFile.open(file, pipes: true)
            var out = StandardOutput.chunked()
            switch format {
            case .markdown: try MarkdownFormat.write(document, to: &out)
            case .json: try NotebookJSON.write(document, to: &out)
            }
            try out.finish()
        }
    }
}
