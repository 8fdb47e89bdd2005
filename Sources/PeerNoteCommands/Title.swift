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
            let changed = try DocumentFile.update(file, author: author.resolved()) { document in
                document.transaction(message: message.or("Set notebook title")) {
                    document.setTitle(title)
                }
            }
            if !changed { Failure.report("\(file): no changes; nothing recorded") }
        }
    }
}
