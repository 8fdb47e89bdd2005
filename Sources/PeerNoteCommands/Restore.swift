import ArgumentParser
import PeerNoteCLISupport
import PeerNote

extension PeerNoteCLI {
    /// `peernote restore FILE NOTE`: brings back a deleted note.
    struct Restore: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Bring back a deleted note.",
            discussion: """
                The note comes back where it was, with every edit made to it, including edits made \
                on other copies while it was deleted. 'peernote list --deleted' shows deleted notes.
                """
        )

        @Argument(help: ArgumentHelp("The .peernote file.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("The deleted note: its id, a unique prefix of its id, or its exact title.", valueName: "NOTE"), completion: NoteCompletion.kind)
        var note: String

        @OptionGroup var author: AuthorOptions
        @OptionGroup var message: MessageOptions

        func execute() throws {
            var live: Note?
            var warning: String?
            var closed: [String] = []
            try DocumentFile.update(file, author: author.resolved()) { document in
                let target = try NoteLookup.findToRestore(note, in: document, path: file)
                guard target.isDeleted else { live = target; return }
                let before = document.conflicts(of: target.id)
                try document.transaction(message: message.or("Restore note \"\(target.title)\"")) {
                    try document.restoreNote(target.id)
                }
                closed = ConflictListing.closed(before, document.conflicts(of: target.id), note: target, in: document, path: file)
                // Back beside a live note of the same title, as `add` or a rename would be: said.
                warning = NoteLookup.sharedTitleWarning(target.title, of: target.id, in: document, path: file)
            }
            for line in closed { Failure.report(line) }
            if let warning { Failure.report(warning) }
            // Exit 0: the note is where restore would bring it (rm of a deleted note, which finds no live note by that name, is 64).
            if let live { Failure.report("\(file): note \(live.id.short) \"\(DisplayText.clipped(live.title))\" is not deleted; nothing recorded") }
        }
    }
}
