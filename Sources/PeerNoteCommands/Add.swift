import ArgumentParser
import PeerNote
import PeerNoteCLISupport

extension PeerNoteCLI {
    /// `peernote add FILE --title T …`: adds a note and prints its id.
    struct Add: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a note; print its id.",
            discussion: "Prints the new note's id (16 hex digits) alone on standard output."
        )

        @Argument(help: ArgumentHelp("The .peernote file.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Option(parsing: .unconditional, help: ArgumentHelp("The note's title.", valueName: "TITLE"))
        var title: String

        @OptionGroup var body: BodyOptions

        @Option(name: .customLong("tag"), parsing: .unconditionalSingleValue, help: ArgumentHelp("Tag the note with TAG (repeat for more tags).", valueName: "TAG"))
        var tags: [String] = []

        @Option(help: ArgumentHelp("The note's priority.", valueName: "low|normal|high"))
        var priority: PriorityArgument = .normal

        @Option(name: .customLong("at"), parsing: .unconditional, help: ArgumentHelp("Insert the note at INDEX (0-based; default: after the last note).", valueName: "INDEX"))
        var index: Int?

        @OptionGroup var author: AuthorOptions
        @OptionGroup var message: MessageOptions

        func validate() throws {
            if tags.contains(where: \.isEmpty) { throw ValidationError("--tag: a tag cannot be empty.") }
            if let index, index < 0 { throw ValidationError("--at must be 0 or more.") }
        }

        func execute() throws {
            // FILE's spelling first: a body read from a terminal or a pipe is not typed in vain.
            try DocumentFile.requireName(file)
            let text = try body.text() ?? ""
            var id: NoteID?
            var warning: String?
            try DocumentFile.update(file, author: author.resolved()) { document in
                let count = document.noteCount
                if let index, index > count {
                    throw CLIFailure(.usage, "\(file): --at \(index) is out of range: " + (count == 0 ? "the only place is 0" : "from 0 to \(count)"))
                }
                let added = document.transaction(message: message.or("Add note \"\(title)\"")) {
                    document.addNote(title: title, body: text, tags: tags, priority: priority.priority, at: index)
                }
                id = added
                warning = NoteLookup.sharedTitleWarning(title, of: added, in: document, path: file)
            }
            if let id { print(id.description) }
            if let warning { Failure.report(warning) }
        }
    }
}
