import ArgumentParser
import PeerNote
import PeerNoteCLISupport

extension PeerNoteCLI {
    /// `peernote show FILE NOTE [--json]`: one note, whole, with its open conflicts.
    struct Show: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print one note: title, tags, priority, created, body and its open conflicts.",
            discussion: """
                The open conflicts of the note are numbered, and so are the values of each, as \
                'peernote resolve --pick' takes them; each names the command that resolves it. A \
                deleted note is shown too, marked deleted. --json prints the note's object (see \
                JSON OUTPUT in peernote(1)).
                """
        )

        @Argument(help: ArgumentHelp("The .peernote file (- for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("The note: its id, a unique prefix of its id, or its title.", valueName: "NOTE"), completion: NoteCompletion.kind)
        var note: String

        @Flag(help: "Print JSON.")
        var json = false

        func execute() throws {
            let document = try DocumentFile.open(file, pipes: true)
            let target = try NoteLookup.findForReading(note, in: document, path: file)
            let conflicts = document.conflicts(of: target.id)
            let notebook = ConflictListing.notebook(for: conflicts, in: document)
            let style = json ? RenderStyle() : ConflictListing.style
            let resolvable = ConflictListing.resolvable(file)
            if json {
                let value = NotebookJSONValue.note(target, deleted: true, extra: [
                    ("index", .optional(document.index(of: target.id))),
                    ("conflicts", .array(conflicts.map { ConflictListing.json($0, in: document, notebook: notebook, file: resolvable, style: style) })),
                ])
                return try StandardOutput.write(value.rendered)
            }
            var lines = [style.paint(target.title.isEmpty ? "(untitled)" : DisplayText.oneLine(target.title), .bold)]
            var facts = ["id \(target.id)"]
            if target.isDeleted { facts.append("deleted") }
            facts.append("priority \(target.priority.rawValue)")
            facts.append("tags " + (target.tags.isEmpty ? "-" : DisplayText.tagList(target.tags)))
            facts.append("created " + style.dateTime(target.created))
            lines.append(style.paint(facts.joined(separator: " · "), .dim))
            if !target.body.isEmpty { lines += [""] + DisplayText.bodyLines(target.body) }
            if !conflicts.isEmpty {
                lines += ["", style.paint("Conflicts (\(conflicts.count)):", .bold)]
                for (i, conflict) in conflicts.enumerated() {
                    lines += ConflictListing.lines(conflict, number: i + 1, in: document, notebook: notebook, file: resolvable, style: style).map { "  " + $0 }
                }
            }
            try StandardOutput.write(lines.joined(separator: "\n") + "\n")
        }
    }
}
