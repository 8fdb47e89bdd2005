import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension PeerNoteCLI {
    /// `peernote log FILE [NOTE] [--json]`: the history of the notebook or of one note, newest first.
    struct Log: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "log",
            abstract: "Show the history of the notebook or of one note, newest first.",
            discussion: """
                Each change with its id (SEQ@REPLICA, as 'peernote revert' and 'pnmerge show --at' \
                take it), author, time, message and what it did to which note. With NOTE (live or \
                deleted), only the changes that touched that note (created, retitled, typed in, \
                tagged, prioritized, moved, deleted or restored it), each with what it did to it. \
                A change never comes after one it depends on, whatever the clocks said.
                """
        )

        @Argument(help: ArgumentHelp("The .peernote file (- for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("Only the changes that touched this note: its id, a unique prefix of its id, or its exact title.", valueName: "NOTE"))
        var note: String?

        @Flag(help: "Print the changes as JSON (man/peernote.1, JSON).")
        var json = false

        func execute() throws {
            let document = try DocumentFile.open(file, pipes: true)
            let target = try note.map { query throws(CLIFailure) in try NoteLookup.findAny(query, in: document, path: TextFile.displayName(file)) }
            let entries = document.historyNewestFirst(touching: target?.id)
            let heads = Set(document.heads)
            try StandardOutput.write(json ? Self.json(entries, heads: heads, in: document).rendered
                                          : Self.text(entries, heads: heads, note: target?.id, zone: .local))
        }

        /// As `git log` (and `pnmerge log`) print: a block per change, its message indented, then
        /// what it did (only to `note`, when given).
        static func text(_ entries: [HistoryEntry], heads: Set<ChangeID>, note: NoteID?, zone: DisplayTimeZone) -> String {
            var lines: [String] = []
            for e in entries {
                lines.append("change \(e.id)" + (heads.contains(e.id) ? " (head)" : ""))
                if e.dependencies.count > 1 { lines.append("Merge:  " + e.dependencies.map(\.description).joined(separator: " ")) }
                lines.append("Author: " + (e.author.isEmpty ? "<no author>" : DisplayText.oneLine(e.author)))
                lines.append("Date:   " + TimeText.fullDateTime(e.time, in: zone))
                lines.append("")
                lines += DisplayText.lines(e.message).map { $0.isEmpty ? "" : "    " + $0 }
                let parts = note.map { n in e.summaryParts.filter { $0.note == n } } ?? e.summaryParts
                let summary = parts.map(\.text).joined(separator: "; ")
                if !summary.isEmpty && summary != e.message { lines.append("    " + DisplayText.oneLine(summary)) }
                if e.message.isEmpty && summary.isEmpty { lines.append("    (\(e.operationCount) operation\(e.operationCount == 1 ? "" : "s"))") }
                lines.append("")
            }
            return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
        }

        /// `pnmerge log --json`'s objects (the same keys, in the same order), newest first.
        static func json(_ entries: [HistoryEntry], heads: Set<ChangeID>, in document: Document) -> JSONValue {
            .array(entries.map { HistoryJSON.change($0, isHead: heads.contains($0.id), titles: document.noteTitle) })
        }
    }
}
