import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension PNMerge {
    /// `pnmerge diff A B [--json]`.
    struct Diff: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "diff",
            abstract: "Show what each of two copies has that the other lacks.",
            discussion: """
            For each side: how many changes the other copy has that it lacks, and by whom, \
            and what merging them would do to its notes (added, restored, edited, moved, deleted). \
            Then, under "Check", the places in note bodies where both copies edited one \
            passage, as 'merge' reports them; then the conflicts merging would make, grouped \
            as 'merge' reports them, and a count of those a copy already has. Nothing is \
            written. Copies \
            that share no history are refused like 'merge' does (exit 2). Exit status 0 \
            whether or not the copies differ.
            """
        )

        @Argument(help: ArgumentHelp("One copy ('-' for standard input).", valueName: "A"), completion: .file(extensions: ["peernote"]))
        var a: String

        @Argument(help: ArgumentHelp("The other copy ('-' for standard input).", valueName: "B"), completion: .file(extensions: ["peernote"]))
        var b: String

        @OptionGroup var format: JSONOption

        func run() throws {
            try FileNameArgument.require([a, b])
            let report = try DiffReport.compare(a, b)
            let style = RenderStyle.current
            try Console.current.emit(format.json ? report.json(style: style).rendered : report.text(style: style))
        }
    }
}

/// How two copies differ, seen from each side.
struct DiffReport {
    /// What one side lacks: the other side's changes it does not hold, and what they would do to its notes.
    struct Side {
        var file: String
        var missing: [(author: String, count: Int)]
        var diff: NotebookDiff
        var missingCount: Int { missing.reduce(0) { $0 + $1.count } }
    }

    var documentID: UUID
    var a: Side
    var b: Side
    /// The merged notebook's id, title and conflicts; its notes, without bodies, only when a
    /// conflict of concurrent moves is shown with their places (`Document.notebook(forConflicts:)`).
    var merged: Notebook
    var conflicts: [Conflict]
    /// Places in note bodies where merging meets both copies' text edits (`merge`'s Check).
    var overlaps: [TextOverlap]
    /// Those of `conflicts` that A or B already has (see `ConflictAge`).
    var earlierConflicts: Set<Conflict>
    var identical: Bool { a.missingCount == 0 && b.missingCount == 0 }

    static func compare(_ pathA: String, _ pathB: String) throws(CLIFailure) -> DiffReport {
        try Inputs.checkStandardInputUsedOnce([pathA, pathB])
        let loaded = try Inputs.loadAll([pathA, pathB])
        let a = loaded[0], b = loaded[1]
        try Inputs.requireShared(a, b, action: "compare \(a.name) with \(b.name)", nothingWritten: false)
        // Taken before the merge, which builds its result from one of the copies: what the merge
        // may change on each side (the notes the other side's changes name, `MergeBaseline`, so
        // that no side's whole notebook is made), the conflicts each copy has, and A's changes
        // that B lacks (as a merge into B would count them).
        let baselineA = a.document.mergeBaseline(for: [b.document]), baselineB = b.document.mergeBaseline(for: [a.document])
        let had = a.document.conflicts + b.document.conflicts
        let missingFromB = b.document.lacking(from: a.document).changesByAuthor
        let merged: Document, intoA: MergeSummary
        do {
            // The copies are not used again: the one with the longer history takes in the other's
            // changes itself (`merge` does so too), its history not copied first.
            (merged, intoA) = try a.document.mergedInPlace(with: b.document, keepingFile: false)
        } catch {
            if case .unrelated(let relation) = error {
                throw CLIFailure(.unrelated, Inputs.unrelatedReason(a, b, relation: relation, action: "compare \(a.name) with \(b.name)", nothingWritten: false))
            }
            throw CLIFailure(.invalidInput, "\(a.name), \(b.name): \(error.toolText)")
        }
        // The places both copies' text edits met, found as `merge` finds them.
        let overlaps = merged.overlapSearch(of: intoA).run()
        // Both sides compared with the one merged copy (a merge into B would hold the same
        // notebook); its notes are listed, without bodies, only for a conflict of concurrent moves.
        let conflicts = merged.conflicts
        return DiffReport(
            documentID: merged.id,
            a: Side(file: pathA, missing: intoA.changesByAuthor, diff: NotebookDiff(from: baselineA, to: merged)),
            b: Side(file: pathB, missing: missingFromB, diff: NotebookDiff(from: baselineB, to: merged)),
            merged: merged.notebook(forConflicts: conflicts),
            conflicts: conflicts, overlaps: overlaps, earlierConflicts: ConflictAge.earlier(conflicts, had: had))
    }

    func text(style: RenderStyle) -> String {
        let nameA = Inputs.displayName(a.file), nameB = Inputs.displayName(b.file)
        if identical { return "\(nameA) and \(nameB) hold the same changes.\n" }
        var lines: [String] = []
        for (side, other) in [(a, nameB), (b, nameA)] {
            let name = Inputs.displayName(side.file)
            if side.missingCount == 0 {
                lines.append(style.paint("\(name) has every change in \(other).", .bold))
                continue
            }
            lines.append(style.paint("\(name) lacks \(Text.count(side.missingCount, "change")) from \(other) (\(Text.authors(side.missing))):", .bold))
            let noteLines = DiffRendering.lines(side.diff, style: style)
            lines += noteLines.isEmpty ? ["  no visible change"] : noteLines.map { "  " + $0 }
        }
        // Listed, grouped and counted as `merge` does, so that the counts read the same in both reports.
        lines += MergeReport.checkLines(overlaps, style: style)
        lines += MergeReport.conflictLines(conflicts, earlier: earlierConflicts, in: merged, style: style, when: " once merged",
                                           resolvingIn: resultFile) { n in
            "\(Text.count(n, "conflict")) that one copy already has would still be open once merged."
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The file that holds the merged notebook once `pnmerge merge A B` has run, for the commands
    /// that resolve its conflicts: A, or B when A is standard input or not a regular file (a
    /// pipe, a device); nil when neither is a file a person can name again.
    var resultFile: String? {
        [a.file, b.file].first { $0 != "-" && !Inputs.isNotAFile($0) }
    }

    /// The schema is documented in man/pnmerge.1 (DIFF).
    func json(style: RenderStyle) -> JSONValue {
        func side(_ s: Side) -> JSONValue {
            .object([
                ("file", .string(s.file)),
                ("missingChanges", .int(s.missingCount)),
                ("missingAuthors", DiffRendering.authorsJSON(s.missing)),
                ("notebookTitle", DiffRendering.titleJSON(s.diff)),
                ("notes", .array(s.diff.changes.map(DiffRendering.json))),
            ])
        }
        return .object([
            ("document", .string(documentID.uuidString.lowercased())),
            ("identical", .bool(identical)),
            ("a", side(a)),
            ("b", side(b)),
            ("conflicts", MergeReport.conflictsJSON(conflicts, earlier: earlierConflicts, in: merged, style: style, resolvingIn: resultFile)),
            ("overlaps", MergeReport.overlapsJSON(overlaps)),
        ])
    }
}
