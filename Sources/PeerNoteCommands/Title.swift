import ArgumentParser
import PeerNote

extension PeerNoteCLI {
    /// `peernote title FILE TITLE`: sets the notebook's title.
    struct Title: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(commandName: "title", abstract: "Set the notebook's title.")

        @Argument(help: ArgumentHelp("The .peernote file.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("The new title.", valueName: "TITLE"))
        var title: String

        @OptionGroup var author: AuthorOptions
        @OptionGroup var message: MessageOptions

        func execute() throws {
            var closed: [String] = []
            let changed = try DocumentFile.update(file, author: author.resolved()) { document in
                let before = document.notebookTitleConflict.map { [$0] } ?? []
                document.transaction(message: message.or("Set notebook title")) {
                    document.setTitle(title)
                }
                let after = document.notebookTitleConflict.map { [$0] } ?? []
                closed = ConflictListing.closed(before, after, note: nil, in: document, path: file)
            }
            for line in closed { Failure.report(line) }
            if !changed { Failure.report("\(file): no changes; nothing recorded") }
        }
    }
}
