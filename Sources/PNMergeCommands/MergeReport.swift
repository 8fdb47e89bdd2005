#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

/// What `pnmerge merge` did (or, with `--dry-run`, would do), in note terms.
struct MergeReport {
    /// What one THEIRS file brought.
    struct Input {
        var file: String
        var changesByAuthor: [(author: String, count: Int)]
        /// Payload fields a newer version wrote that it brought (see `MergeSummary.fieldsAdded`).
        var fieldsAdded = 0
        var changes: Int { changesByAuthor.reduce(0) { $0 + $1.count } }
    }

    var documentID: UUID
    /// MINE as given.
    var mine: String
    /// Where the result goes: MINE's path, OUT's path, or `-`.
    var output: String
    var dryRun: Bool
    var inputs: [Input]
    /// MINE's notebook before the merge, to the merged one.
    var diff: NotebookDiff
    /// The merged notebook (for conflict positions).
    var notebook: Notebook
    /// Every open conflict of the merged document, deleted-while-edited notes included.
    var conflicts: [Conflict]
    /// Places in note bodies where this merge met both sides' text edits (worth a look).
    var overlaps: [TextOverlap] = []
    /// Bytes written, when something was written.
    var bytesWritten: Int?
    /// Whether MINE changed (another program wrote it) while the merge ran; what it then held was
    /// merged in before writing, so the file holds more than this report lists.
    var mineChangedMeanwhile = false

    var changes: Int { inputs.reduce(0) { $0 + $1.changes } }
    var upToDate: Bool { changes == 0 && inputs.allSatisfy { $0.fieldsAdded == 0 } }
    var written: Bool { bytesWritten != nil }

    // MARK: Text

    func text(style: RenderStyle) -> String {
        let mineName = Inputs.displayName(mine)
        let outName = output == "-" ? "standard output" : Inputs.displayName(output)
        var lines: [String] = []
        if upToDate {
            lines.append("Already up to date: \(mineName) has every change in \(inputs.map { Inputs.displayName($0.file) }.joined(separator: ", ")).")
        } else {
            // In place, MINE receives the changes; with -o, MINE is left alone and OUT gets the result.
            let inPlace = output == mine && mine != "-"
            let header = dryRun ? (inPlace ? "Would merge into \(mineName):" : "Would merge \(mineName) with:")
                                : (inPlace ? "Merged into \(mineName):" : "Merged \(mineName) with:")
            lines.append(style.paint(header, .bold))
            for input in inputs {
                let brought = input.changes == 0 ? "nothing new" : "\(Text.count(input.changes, "change")) (\(Text.authors(input.changesByAuthor)))"
                lines.append("  \(Inputs.displayName(input.file)): \(brought)")
            }
            let noteLines = DiffRendering.lines(diff, style: style)
            lines.append(style.paint("Notes:", .bold))
            if noteLines.isEmpty {
                lines.append("  no visible change")
            } else {
                lines += noteLines.map { "  " + $0 }
            }
        }
        lines += Self.checkLines(overlaps, style: style)
        lines += Self.conflictLines(conflicts, in: notebook, style: style)
        if let n = bytesWritten {
            if mineChangedMeanwhile {
                lines.append("\(mineName) changed while this merge ran (another program wrote it); what it held then was merged in too.")
            }
            lines.append("Wrote \(outName) (\(Text.count(n, "byte"))).")
        } else if dryRun {
            lines.append("Dry run: nothing written" + (upToDate && output == mine ? "." : " (would write \(outName))."))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A merged notebook's conflicts in words, as `merge` and `diff` list them: value and move
    /// conflicts under "Conflicts (N):", then notes deleted on one side while edited on the other
    /// under a heading of their own. `when` ends each heading's words (" once merged", for `diff`).
    static func conflictLines(_ conflicts: [Conflict], in notebook: Notebook, style: RenderStyle, when: String = "") -> [String] {
        let deleted = conflicts.filter { if case .deletedWhileEdited = $0 { true } else { false } }
        let regular = conflicts.filter { if case .deletedWhileEdited = $0 { false } else { true } }
        var lines: [String] = []
        for (heading, group) in [("Conflicts" + when, regular), ("Deleted on one side, edited on the other" + (when.isEmpty ? "" : "," + when), deleted)]
            where !group.isEmpty {
            lines.append(style.paint("\(heading) (\(group.count)):", .bold))
            lines += group.map { "  " + style.paint(ConflictRendering.line($0, in: notebook, style: style), .yellow) }
        }
        return lines
    }

    /// The places where both sides' text edits met, in words, as `merge` and `diff` list them:
    /// under "Check (N):", or nothing when there are none.
    static func checkLines(_ overlaps: [TextOverlap], style: RenderStyle) -> [String] {
        guard !overlaps.isEmpty else { return [] }
        return [style.paint("Check (\(overlaps.count)): both sides edited these places; every edit is kept", .bold)]
            + overlaps.map { "  " + style.paint(line($0), .yellow) }
    }

    /// One place both sides edited, in words.
    static func line(_ o: TextOverlap) -> String {
        let what = switch o.kind {
        case .sameText: "both sides replaced the same text: both replacements are kept, side by side"
        case .insideDeleted: "text added on one side lies in or at the edge of text the other deleted: it is kept, without that text"
        }
        return "note \(Text.quoted(o.noteTitle)), line \(o.line): \(what)"
    }

    // MARK: JSON

    /// The schema is documented in man/pnmerge.1 (MERGE REPORT).
    func json(style: RenderStyle) -> JSONValue {
        .object([
            ("document", .string(documentID.uuidString.lowercased())),
            ("mine", .string(mine)),
            ("output", .string(output)),
            ("dryRun", .bool(dryRun)),
            ("upToDate", .bool(upToDate)),
            ("written", .bool(written)),
            ("bytesWritten", .optional(bytesWritten)),
            ("mineChangedMeanwhile", .bool(mineChangedMeanwhile)),
            ("changes", .int(changes)),
            ("inputs", .array(inputs.map { input in
                .object([("file", .string(input.file)), ("changes", .int(input.changes)),
                         ("authors", DiffRendering.authorsJSON(input.changesByAuthor))])
            })),
            ("notebookTitle", DiffRendering.titleJSON(diff)),
            ("notes", .array(diff.changes.map(DiffRendering.json))),
            ("conflicts", .array(conflicts.map { ConflictRendering.json($0, in: notebook, style: style) })),
            ("overlaps", Self.overlapsJSON(overlaps)),
        ])
    }

    /// The places listed under Check, as `merge` and `diff` give them in JSON (man/pnmerge.1, OVERLAP).
    static func overlapsJSON(_ overlaps: [TextOverlap]) -> JSONValue {
        .array(overlaps.map { o in
            .object([("note", .string(o.note.description)), ("title", .string(o.noteTitle)),
                     ("line", .int(o.line)), ("kind", .string(o.kind.rawValue))])
        })
    }
}
