import ArgumentParser
import PeerNote
import PeerNoteCLISupport

extension PeerNoteCLI {
    /// `peernote revert FILE CHANGE... [--json]`: records one change that undoes the given ones.
    struct Revert: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "revert",
            abstract: "Record a change that undoes what the given changes did.",
            discussion: """
                CHANGE is a change id as 'peernote log' shows it (SEQ@REPLICA, the replica's hex \
                digits as a prefix), or FIRST-LAST@REPLICA for a replica's changes FIRST to LAST \
                (the form 'pnmerge merge' gives). One new change undoes them all: text they \
                inserted is deleted, text they deleted is inserted again at its place, titles, \
                priorities and places go back to the values they replaced (a value written since \
                is left as it is, and a line on standard error says so), tags they added or removed \
                are removed or added again, a note they created is deleted, one they deleted is \
                restored. Reverting the revert restores what they did. A change the file lacks \
                records nothing (exit 64). Prints the new change's id and what it did.
                """
        )

        @Argument(help: ArgumentHelp("The .peernote file.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("The changes to undo: SEQ@REPLICA or FIRST-LAST@REPLICA.", valueName: "CHANGE"))
        var changes: [String]

        @Flag(help: "Print what was recorded as JSON (man/peernote.1, JSON).")
        var json = false

        @OptionGroup var author: AuthorOptions
        @OptionGroup var message: MessageOptions

        func validate() throws {
            if changes.isEmpty { throw ValidationError("Missing expected argument '<change> ...': name at least one change (SEQ@REPLICA, as 'peernote log' shows it).") }
        }

        func execute() throws {
            let author = try author.resolved()
            try DocumentFile.requireName(file)
            var result: RevertResult?
            var summary: [JSONValue] = []
            try DocumentFile.update(file, author: author) { document in
                var ids: [ChangeID] = []
                for text in changes { ids += try document.findChanges(text) }
                let done = try document.revert(ids, message: message.message)
                result = done
                summary = done.summaryParts.compactMap { HistoryJSON.notePart($0, titles: document.noteTitle) }
            }
            guard let result else { return }
            if json {
                try StandardOutput.write(Self.json(result, notes: summary).rendered)
            } else {
                if let id = result.change {
                    var out = "\(id) \(DisplayText.oneLine(result.message))\n"
                    for part in result.summaryParts { out += "  " + DisplayText.oneLine(part.text) + "\n" }
                    try StandardOutput.write(out)
                }
                for notice in result.notices { Failure.report("\(file): \(notice.message)") }
            }
            if result.change == nil { Failure.report("\(file): nothing left to undo in \(ChangeRange.ranges(of: result.reverted).map(\.description).joined(separator: ", ")); nothing recorded") }
        }

        /// `{"reverted": [ids], "id": id|null, "short": …|null, "message": …, "notes": [...], "notices": [{"note": id|null, "message": …}]}`.
        static func json(_ result: RevertResult, notes: [JSONValue]) -> JSONValue {
            .object([
                ("reverted", .strings(result.reverted.map(\.fullDescription))),
                ("id", .optional(result.change?.fullDescription)),
                ("short", .optional(result.change?.description)),
                ("message", result.change == nil ? .null : .string(result.message)),
                ("notes", .array(notes)),
                ("notices", .array(result.notices.map { n in
                    .object([("note", .optional(n.note?.description)), ("message", .string(n.message))])
                })),
            ])
        }
    }
}
