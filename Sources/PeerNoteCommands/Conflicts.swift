import ArgumentParser
import PeerNote
import PeerNoteCLISupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PeerNoteCLI {
    /// `peernote conflicts FILE [--json]`: every open conflict, numbered per note.
    struct Conflicts: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "conflicts",
            abstract: "List every open conflict, numbered per note, with the command that resolves it.",
            discussion: """
                For each note with open conflicts (and the notebook's title), its conflicts \
                numbered from 1, and each value numbered as 'peernote resolve --pick' takes it, \
                with its author and time. Nothing is printed when there are none ('(no conflicts)' \
                on a terminal). --json prints an array of conflict objects (see JSON OUTPUT).
                """
        )

        @Argument(help: ArgumentHelp("The .peernote file (- for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Flag(help: "Print JSON.")
        var json = false

        func execute() throws {
            let document = try DocumentFile.open(file, pipes: true)
            let conflicts = document.conflicts
            let notebook = ConflictListing.notebook(for: conflicts, in: document)
            let resolvable = ConflictListing.resolvable(file)
            if json {
                let style = RenderStyle()
                let value = JSONValue.array(conflicts.map { ConflictListing.json($0, in: document, notebook: notebook, file: resolvable, style: style) })
                return try StandardOutput.write(value.rendered)
            }
            let style = ConflictListing.style
            // Grouped by note, in the order `conflicts` lists them (the notebook's title first).
            var groups: [(note: NoteID?, conflicts: [Conflict])] = []
            for conflict in conflicts {
                if let i = groups.firstIndex(where: { $0.note == conflict.note }) { groups[i].conflicts.append(conflict) } else {
                    groups.append((conflict.note, [conflict]))
                }
            }
            var lines: [String] = []
            for group in groups {
                if let id = group.note {
                    let note = document.note(id)
                    lines.append(style.paint("note \(id.short) \(Text.quoted(note?.title ?? ""))", .bold) + (note?.isDeleted == true ? " (deleted)" : ""))
                } else {
                    lines.append(style.paint("notebook", .bold))
                }
                for (i, conflict) in group.conflicts.enumerated() {
                    lines += ConflictListing.lines(conflict, number: i + 1, in: document, notebook: notebook, file: resolvable, style: style).map { "  " + $0 }
                }
            }
            if lines.isEmpty {
                if isatty(1) == 1 { try StandardOutput.write("(no conflicts)\n") }
                return
            }
            try StandardOutput.write(lines.joined(separator: "\n") + "\n")
        }
    }
}
