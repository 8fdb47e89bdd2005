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
    /// The merged notebook, for the positions of notes in conflicts: its notes are listed only
    /// when a conflict needs their positions (one about concurrent moves), else it holds none.
    var notebook: Notebook
    /// Every open conflict of the merged document, deleted-while-edited notes included.
    var conflicts: [Conflict]
    /// Those of `conflicts` that MINE already had (see `ConflictAge`): counted, not listed. A
    /// conflict only a THEIRS had is new to MINE, and listed.
    var earlierConflicts: Set<Conflict> = []
    /// Places in note bodies where this merge met both sides' text edits (worth a look).
    var overlaps: [TextOverlap] = []
    /// Titles that several live notes of the result have and MINE's did not share (`SharedTitle`).
    var sharedTitles: [SharedTitle] = []
    /// Bytes written, when something was written.
    var bytesWritten: Int?
    /// Whether MINE changed (another program wrote it) while the merge ran; what it then held was
    /// merged in before writing, so the file holds more than this report lists.
    var mineChangedMeanwhile = false
    /// The changes the merge brought in (those the other copies had and MINE lacked).
    var brought: [ChangeRange] = []
    /// The file written that holds the result, when `pnmerge merge` wrote one (not the git
    /// driver's temporary OURS, standard output or a device): what the revert command names.
    var revertFile: String?

    /// `peernote revert FILE CHANGES…`: the one command that undoes what the merge brought in,
    /// when it wrote a file and brought changes.
    var revertCommand: String? {
        guard let file = revertFile, !brought.isEmpty else { return nil }
        return "peernote revert \(ShellQuote.path(file)) " + brought.map(\.description).joined(separator: " ")
    }

    var changes: Int { inputs.reduce(0) { $0 + $1.changes } }
    var upToDate: Bool { changes == 0 && inputs.allSatisfy { $0.fieldsAdded == 0 } }
    var written: Bool { bytesWritten != nil }
    /// The conflicts listed: those MINE did not have before this merge (the merge made them, or a THEIRS brought them).
    var newConflicts: [Conflict] { conflicts.filter { !earlierConflicts.contains($0) } }

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
        lines += SharedTitle.lines(sharedTitles, style: style)
        lines += Self.conflictLines(conflicts, earlier: earlierConflicts, in: notebook, style: style, resolvingIn: resultFile) { n in
            let these = "\(Text.count(n, "conflict")) from before this merge"
            if dryRun && !upToDate { return these + " would still be open." }
            // Named when the file holds the result: written, or MINE already up to date.
            let holder = written ? output : (upToDate && output == mine ? mine : "-")
            // Not for a result written to a device or a pipe (`-o /dev/null`): nothing to show.
            let see = holder == "-" || Inputs.isNotAFile(holder) ? "" : " (see: pnmerge show \(DisplayText.oneLine(ShellQuote.path(holder))))"
            return these + (n == 1 ? " is" : " are") + " still open" + see + "."
        }
        if let n = bytesWritten {
            if mineChangedMeanwhile {
                lines.append("\(mineName) changed while this merge ran (another program wrote it); what it held then was merged in too.")
            }
            lines.append("Wrote \(outName) (\(Text.count(n, "byte"))).")
            if let command = revertCommand { lines.append("To undo what it brought in: \(DisplayText.oneLine(command))") }
        } else if dryRun {
            lines.append("Dry run: nothing written" + (upToDate && output == mine ? "." : " (would write \(outName))."))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A merged notebook's conflicts in words, as `merge` and `diff` list them: those the merge
    /// made, value and move conflicts under "Conflicts (N):", then notes deleted on one side while
    /// edited on the other under a heading of their own; then the ones in `earlier` (MINE, or
    /// for `diff` one of the copies, already had them), counted on one line, `stillOpen(count)`. `when` ends each heading's
    /// words (" once merged", for `diff`).
    /// With `resolvingIn` (the file that holds the result, or for `diff` the file that will hold
    /// it once merged), each line ends with the command that resolves its conflict
    /// (`ConflictRendering.line(_:in:style:resolvingIn:when:)`, "resolve" followed by `when`).
    static func conflictLines(_ conflicts: [Conflict], earlier: Set<Conflict>, in notebook: Notebook, style: RenderStyle, when: String = "",
                              resolvingIn file: String? = nil, stillOpen: (Int) -> String) -> [String] {
        let made = conflicts.filter { !earlier.contains($0) }
        let deleted = made.filter { if case .deletedWhileEdited = $0 { true } else { false } }
        let regular = made.filter { if case .deletedWhileEdited = $0 { false } else { true } }
        var lines: [String] = []
        for (heading, group) in [("Conflicts" + when, regular), ("Deleted on one side, edited on the other" + (when.isEmpty ? "" : "," + when), deleted)]
            where !group.isEmpty {
            lines.append(style.paint("\(heading) (\(group.count)):", .bold))
            lines += group.map { "  " + style.paint(ConflictRendering.line($0, in: notebook, style: style, resolvingIn: file, when: when), .yellow) }
        }
        if made.count < conflicts.count { lines.append(stillOpen(conflicts.count - made.count)) }
        return lines
    }

    /// The places where both sides' text edits met, in words, as `merge` and `diff` list them:
    /// under "Check (N):", or nothing when there are none.
    static func checkLines(_ overlaps: [TextOverlap], style: RenderStyle) -> [String] {
        guard !overlaps.isEmpty else { return [] }
        return [style.paint("Check (\(overlaps.count)): both sides edited these places; every edit is kept", .bold)]
            + overlaps.map { "  " + style.paint(line($0), .yellow) }
    }

    /// A merged notebook's conflicts as JSON: each as `show` gives it, with `"new"`: false for
    /// those of `earlier` (MINE, or for `diff` a copy, already had them), true for the others.
    static func conflictsJSON(_ conflicts: [Conflict], earlier: Set<Conflict>, in notebook: Notebook, style: RenderStyle,
                              resolvingIn file: String? = nil) -> JSONValue {
        .array(conflicts.map { c in
            let object = ConflictRendering.json(c, in: notebook, style: style, resolvingIn: file)
            guard case .object(let fields) = object else { return object }
            return .object(fields + [("new", .bool(!earlier.contains(c)))])
        })
    }

    /// One place both sides edited, in words.
    static func line(_ o: TextOverlap) -> String {
        let what = switch o.kind {
        case .sameText: "both sides edited the same place: what each typed is kept, side by side"
        case .insideDeleted: "text added on one side lies in or at the edge of text the other deleted: it is kept, without that text"
        }
        return "note \(Text.quoted(o.noteTitle)), line \(o.line): \(what)"
    }

    // MARK: JSON

    /// The file that holds the merged result, for the commands that resolve its conflicts: the
    /// output once written (or MINE when it was already up to date); nil for a dry run, standard
    /// output, or a device or pipe.
    var resultFile: String? {
        let holder = written ? output : (upToDate && output == mine ? mine : "-")
        return holder == "-" || Inputs.isNotAFile(holder) ? nil : holder
    }

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
            ("conflicts", Self.conflictsJSON(conflicts, earlier: earlierConflicts, in: notebook, style: style, resolvingIn: resultFile)),
            ("overlaps", Self.overlapsJSON(overlaps)),
            ("sharedTitles", SharedTitle.json(sharedTitles)),
            ("revert", .optional(revertCommand)),
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

/// Tells a merged notebook's conflicts that a copy already had from the others: `merge` and the git
/// driver pass MINE (OURS) alone, so that a conflict only a THEIRS had is listed as new to MINE;
/// `diff`, which takes no side, passes both copies.
enum ConflictAge {
    /// The conflicts of `merged` that a copy already had (`had`, its conflicts): the same kind,
    /// on the same note, between the same writes (a note retitled since does not make it
    /// another; a write the merge added to it does, as the copy did not have that one).
    static func earlier(_ merged: [Conflict], had: @autoclosure () -> [Conflict]) -> Set<Conflict> {
        guard !merged.isEmpty else { return [] }
        let had = Set(had().map(Identity.init))
        return Set(merged.filter { had.contains(Identity($0)) })
    }

    /// What makes two copies' conflicts the same one.
    private struct Identity: Hashable {
        var kind: Int
        var note: NoteID?
        var values: Set<ConflictValue> = []
        var moves: Set<Attribution> = []
        var deletedBy: Set<Attribution> = []
        var editedBy: Set<Attribution> = []

        init(_ conflict: Conflict) {
            switch conflict {
            case .notebookTitle(let values, _): (kind, note, self.values) = (0, nil, Set(values))
            case .noteTitle(let n, let values, _): (kind, note, self.values) = (1, n, Set(values))
            case .priority(let n, _, let values, _): (kind, note, self.values) = (2, n, Set(values))
            case .position(let n, _, let moves): (kind, note, self.moves) = (3, n, Set(moves))
            case .deletedWhileEdited(let n, _, let deletedBy, let editedBy):
                (kind, note, self.deletedBy, self.editedBy) = (4, n, Set(deletedBy), Set(editedBy))
            }
        }
    }
}

/// A title that two or more live notes of a merged notebook have, scalar for scalar, where the
/// copy merged into did not have it twice: the title alone then names none of them (peernote
/// refuses it as matching several notes, and `add` warns when it makes such a pair), so the
/// merge says so. Empty titles are left out (a title that names nothing anyway).
struct SharedTitle: Equatable {
    var title: String
    /// In the notebook's order.
    var notes: [NoteID]

    /// The titles the merged `document`'s live notes share that its copy's did not before a
    /// merge that changed it by `diff`, from `baseline` (taken before the merge). Only a note
    /// that the merge added, restored or retitled can join a title: so only those notes' titles
    /// are looked up, and the copy's count of each is the merged count less the notes the merge
    /// named that have it now, plus those that had it before.
    static func newlyShared(baseline: MergeBaseline, diff: NotebookDiff, after document: Document) -> [SharedTitle] {
        if let before = baseline.wholeNotebook {
            // Titles alone are compared: the notes without their bodies.
            let after = document.noteSummaries.map { $0.note() }
            return newlyShared(before: before, after: Notebook(id: document.id, title: document.title, notes: after))
        }
        var candidates: [String] = []
        for change in diff.changes {
            let note: Note
            switch change {
            case .added(let n), .restored(let n): note = n
            case .edited(_, let n, let fields) where fields.contains(.title): note = n
            default: continue
            }
            if !note.title.isEmpty && !candidates.contains(where: { $0.hasSameScalars(as: note.title) }) { candidates.append(note.title) }
        }
        let named = Set(baseline.namedNotes), namedBefore = baseline.liveNamedNotes
        return document.liveNotes(titled: candidates).compactMap { title, notes in
            guard notes.count > 1 else { return nil }
            let before = notes.count - notes.filter(named.contains).count + namedBefore.filter { $0.title.hasSameScalars(as: title) }.count
            return before < 2 ? SharedTitle(title: title, notes: notes) : nil
        }
    }

    /// The titles `after`'s live notes share that `before`'s did not.
    static func newlyShared(before: Notebook, after: Notebook) -> [SharedTitle] {
        var groups: [ExactString: [NoteID]] = [:]
        var order: [ExactString] = []
        for note in after.notes where !note.title.isEmpty {
            let key = ExactString(note.title)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(note.id)
        }
        let shared = order.filter { (groups[$0]?.count ?? 0) > 1 }
        guard !shared.isEmpty else { return [] }
        var earlier: [ExactString: Int] = [:]
        for note in before.notes { earlier[ExactString(note.title), default: 0] += 1 }
        return shared.filter { (earlier[$0] ?? 0) < 2 }.map { SharedTitle(title: $0.string, notes: groups[$0] ?? []) }
    }

    /// Under "Same title (N):", one line a title, or nothing.
    static func lines(_ titles: [SharedTitle], style: RenderStyle) -> [String] {
        guard !titles.isEmpty else { return [] }
        return [style.paint("Same title (\(titles.count)): the title alone names none of these notes; name them by id, or retitle one", .bold)]
            + titles.map { t in
                let ids = t.notes.prefix(10).map(\.short).joined(separator: ", ") + (t.notes.count > 10 ? ", … (\(t.notes.count) in all)" : "")
                return "  " + style.paint("\(Text.quoted(t.title)): notes \(ids)", .yellow)
            }
    }

    static func json(_ titles: [SharedTitle]) -> JSONValue {
        .array(titles.map { t in
            .object([("title", .string(t.title)), ("notes", .array(t.notes.map { .string($0.description) }))])
        })
    }
}
