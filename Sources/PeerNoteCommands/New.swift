import ArgumentParser
import PeerNote

extension PeerNoteCLI {
    /// `peernote new FILE [--title T]`: a new, empty notebook with a fresh id.
    struct New: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Create a new, empty notebook.",
            discussion: "The notebook gets a fresh id. FILE must not exist: peernote never overwrites a file (exit 73)."
        )

        @Argument(help: ArgumentHelp("The .peernote file to create.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Option(parsing: .unconditional, help: ArgumentHelp("The notebook's title.", valueName: "TITLE"))
        var title: String = ""

        @OptionGroup var author: AuthorOptions

        func execute() throws {
            let document = Document(title: title, author: try author.resolved())
            try DocumentFile.create(file, document)
        }
    }
}
