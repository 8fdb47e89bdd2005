import ArgumentParser
import PeerNote
import PeerNoteCLISupport

extension PeerNoteCLI {
    /// `peernote resolve FILE NOTE FIELD (--pick N | --value V)`: closes a conflict by a choice
    /// recorded as a change.
    struct Resolve: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "resolve",
            abstract: "Close a note's conflict: pick one of its values, or give another.",
            discussion: """
                FIELD is title, priority, position or deleted. --pick N takes value N as \
                'peernote show' and 'peernote conflicts' number them (oldest first; for a note \
                deleted while edited, 1 keeps it deleted and 2 restores it with the edits); --value \
                V sets V instead: a title, low|normal|high, an index among the notes (0-based, as \
                'peernote list' shows), or deleted|restored. The choice is recorded as a change \
                that replaces every value of the conflict, so the conflict closes on every copy it \
                merges into. A note or a field with no open conflict, or a pick out of range, is \
                exit 64 with nothing written.
                """
        )

        @Argument(help: ArgumentHelp("The .peernote file.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("The note: its id, a unique prefix of its id, or its title.", valueName: "NOTE"), completion: NoteCompletion.kind)
        var note: String

        @Argument(help: ArgumentHelp("The field in conflict: title, priority, position or deleted.", valueName: "FIELD"),
                  completion: .list(ConflictField.allCases.map(\.rawValue)))
        var field: String

        @Option(help: ArgumentHelp("Keep value N of the conflict (numbered from 1).", valueName: "N"))
        var pick: Int?

        @Option(parsing: .unconditional, help: ArgumentHelp("Set VALUE instead of one of the conflict's.", valueName: "VALUE"))
        var value: String?

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var author: AuthorOptions
        @OptionGroup var message: MessageOptions

        func execute() throws {
            guard let field = ConflictField(rawValue: field.lowercased()) else {
                throw CLIFailure(.usage, "resolve: \"\(DisplayText.clipped(field))\" is not a field that holds conflicts: title, priority, position or deleted")
            }
            switch (pick, value) {
            case (nil, nil): throw CLIFailure(.usage, "resolve: give --pick N (a value of the conflict, as 'peernote conflicts' numbers them) or --value VALUE")
            case (.some, .some): throw CLIFailure(.usage, "resolve: give --pick or --value, not both")
            default: break
            }
            let author = try author.resolved()
            var done: ConflictResolution?
            var title = ""
            var deleted = false
            try DocumentFile.update(file, author: author) { document in
                let target = try NoteLookup.findForReading(note, in: document, path: file)
                title = target.title
                deleted = target.isDeleted
                if let pick {
                    done = try document.resolve(target.id, field: field, pick: pick, message: message.message)
                } else if let value {
                    done = try document.resolve(target.id, field: field, value: value, message: message.message)
                }
            }
            guard let done else { return }
            if json {
                let value = JSONValue.object([
                    ("note", .string(done.note.description)), ("title", .string(title)), ("field", .string(done.field.rawValue)),
                    ("value", .string(done.value)), ("choice", .optional(done.choice)), ("deleted", .bool(deleted && done.value != "restored")),
                ])
                return try StandardOutput.write(value.rendered)
            }
            let kept: String
            switch done.field {
            case .title: kept = "title \(Text.quoted(done.value))"
            case .priority: kept = "priority \(done.value)"
            case .position: kept = "it at index \(done.value)"
            case .deleted: kept = done.value == "deleted" ? "it deleted" : "it restored, with the edits"
            }
            let which = done.choice.map { " (value \($0))" } ?? ""
            try StandardOutput.write("Resolved the \(done.field.rawValue) conflict of note \(done.note.short) \(Text.quoted(title)): kept \(kept)\(which).\n")
        }
    }
}
