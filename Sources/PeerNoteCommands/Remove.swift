import ArgumentParser
import PeerNote

extension PeerNoteCLI {
    /// `peernote rm FILE NOTE`: deletes a note (it stays in the history and can be restored).
    struct Remove: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Delete a note.",
            discussion: """
                The note and its history stay in the document; 'peernote restore' brings it back. \
                For a note deleted on one copy while edited on another (a conflict 'pnmerge show' \
                lists), rm accepts the deletion: the conflict closes and the edits stay in the history.
                """
        )

        @Argument(help: ArgumentHelp("The .peernote file.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("The note: its id, a unique prefix of its id, or its exact title.", valueName: "NOTE"), completion: NoteCompletion.kind)
        var note: String

        @OptionGroup var author: AuthorOptions
        @OptionGroup var message: MessageOptions

        func execute() throws {
            var closed: [String] = []
            try DocumentFile.update(file, author: author.resolved()) { document in
                // A note deleted on one copy while edited on another: rm accepts the deletion.
                if let deleted = try? document.findNote(note, includeDeleted: true), deleted.isDeleted {
                    let before = document.conflicts(of: deleted.id)
                    if before.contains(where: { $0.field == .deleted }) {
                        try document.transaction(message: message.or("Delete note \"\(deleted.title)\" (accepting the deletion)")) {
                            try document.deleteNote(deleted.id)
                        }
                        closed = ConflictListing.closed(before, document.conflicts(of: deleted.id), note: deleted, in: document, path: file)
                        return
                    }
                }
                let target = try NoteLookup.find(note, in: document, path: file)
                try document.transaction(message: message.or("Delete note \"\(target.title)\"")) {
                    try document.deleteNote(target.id)
                }
            }
            for line in closed { Failure.report(line) }
        }
    }
}
