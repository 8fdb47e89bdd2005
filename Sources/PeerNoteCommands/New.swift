import ArgumentParser
import PeerNote

extension PeerNoteCLI {
    /// `peernote new FILE [--title T]`: a new, empty notebook with a fresh id.
    struct New: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Create a new, empty notebook.",
            discussion: "The notebook gets a fresh id. FILE must not exist: peernote never overwrites a file (exit 73). With --folder, FILE is a notebook folder (its name ends in .peernote) holding one chunk file: every command accepts it as a file."
        )

        @Argument(help: ArgumentHelp("The .peernote file to create.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Option(parsing: .unconditional, help: ArgumentHelp("The notebook's title.", valueName: "TITLE"))
        var title: String = ""

        @Flag(help: "Make a notebook folder (FILE a folder whose name ends in .peernote) for a folder a sync tool keeps in step: see NOTEBOOK FOLDERS in peernote(5).")
        var folder = false

        @OptionGroup var author: AuthorOptions

        func execute() throws {
            let document = Document(title: title, author: try author.resolved())
            try DocumentFile.create(file, document, folder: folder)
        }
    }
}
