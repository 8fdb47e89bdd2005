import ArgumentParser
import PeerNote
import PeerNoteCLISupport

extension PeerNoteCLI {
    /// `peernote move FILE NOTE --to INDEX`: moves a note within the notebook.
    struct Move: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "move",
            abstract: "Move a note to another place in the notebook.",
            discussion: "INDEX is 0-based, as 'peernote list' shows: --to 0 makes the note the first."
        )

        @Argument(help: ArgumentHelp("The .peernote file.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("The note: its id, a unique prefix of its id, or its exact title.", valueName: "NOTE"), completion: NoteCompletion.kind)
        var note: String

        @Option(name: .customLong("to"), parsing: .unconditional, help: ArgumentHelp("The note's new index (0-based).", valueName: "INDEX"))
        var index: Int

        @OptionGroup var author: AuthorOptions
        @OptionGroup var message: MessageOptions

        func validate() throws {
            if index < 0 { throw ValidationError("--to must be 0 or more.") }
        }

        func execute() throws {
            var moved: Note?
            var closed: [String] = []
            let changed = try DocumentFile.update(file, author: author.resolved()) { document in
                let target = try NoteLookup.find(note, in: document, path: file)
                moved = target
                let count = document.noteCount
                guard index < count else { throw CLIFailure(.usage, "\(file): --to \(index) is out of range: " + (count == 1 ? "the only place is 0" : "from 0 to \(count - 1)")) }
                let before = document.conflicts(of: target.id)
                try document.transaction(message: message.or("Move note \"\(target.title)\" to \(index)")) {
                    try document.moveNote(target.id, to: index)
                }
                closed = ConflictListing.closed(before, document.conflicts(of: target.id), note: target, in: document, path: file)
            }
            for line in closed { Failure.report(line) }
            if !changed {
                let which = moved.map { "note \($0.id.short) \"\(DisplayText.oneLine($0.title))\"" } ?? "the note"
                Failure.report("\(file): \(which) is already at index \(index); nothing recorded")
            }
        }
    }
}
