import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PNMerge {
    /// `pnmerge sync DIR [DIR...] [--dry-run] [--keep]`: bring every copy of every notebook under the folders up to date.
    struct Sync: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Merge every copy of each notebook found under the folders.",
            discussion: """
            Finds every .peernote file under each DIR (a USB stick and your notes folder, \
            or a Syncthing, Dropbox or Nextcloud folder), groups the copies by document id \
            (not by name), merges each group, and writes the result to every copy that lacks \
            something, atomically and in canonical compact form, so that copies holding the \
            same changes hold the same bytes (rsync and Unison then find nothing to move). A \
            copy that already has every change is not touched, unless another copy of its \
            notebook holds other bytes: then it is rewritten in that form too.

            A notebook folder (NAME.peernote/, see NOTEBOOK FOLDERS in peernote(5)) is one \
            copy of its notebook, grouped with the files by document id: when it lacks \
            something it gains one new chunk of this device; its chunks are never rewritten \
            or removed. A sync tool's conflict copy of a chunk file inside it \
            (X.sync-conflict-*.pnchunk and the other tools' names) is merged in as a new \
            chunk, then removed.

            Conflict copies that sync tools leave beside a notebook are merged into it and \
            then removed (--keep keeps them): Syncthing's NAME.sync-conflict-*.peernote, \
            Dropbox's and Nextcloud's 'NAME (... conflicted copy ...).peernote', Unison's \
            'NAME (conflict...).peernote' and rsync --backup's NAME.peernote~; a copy of \
            a conflict copy carries both marks, and every mark is stripped to find NAME.

            Symbolic links are never followed, hidden files and folders are skipped, and \
            nothing outside the folders is written. Damaged or unreadable files, conflict \
            copies of a different notebook, and different notebooks at the same place in two \
            folders are reported and left as they are; everything else still syncs.

            Exit status: 0 when everything synced; 74 when a copy could not be written or a \
            conflict copy removed; \
            else 65 when a damaged file, or a copy this version cannot merge (different values \
            of one field a newer version wrote), was left alone; else 66 when a file could not be \
            read (or a .peernote file or folder was skipped because its name is not valid \
            UTF-8: rename it); else 2 when copies that share no history were left alone.

            Each copy written is listed with the changes it received and a line counting the \
            notes added, restored, edited, moved and deleted, the conflicts new to it and the \
            places to check; --verbose lists them as merge does, and --json gives the report \
            as JSON with merge's key names (see pnmerge(1)).

            A single .peernote file in a folder Syncthing, Dropbox or Nextcloud syncs (its \
            marker, .stfolder, .dropbox or .sync_*.db, in the folder or above it), or beside \
            conflict copies, gets one hint per run: a notebook folder, which no two devices \
            write, does not risk the conflict copies such services cap or overwrite. \
            --convert turns each such file, once synced, into a notebook folder of the \
            same name; the file is kept as .NAME.converted-YYYY-MM-DD until the folder is \
            read back holding all of it (pnmerge convert FILE NEW.peernote makes a folder \
            under another name instead).
            """
        )

        @Argument(help: ArgumentHelp("The folders to search (searched recursively).", valueName: "DIR"), completion: .directory)
        var dirs: [String]

        @Flag(name: .long, help: "Report what would be merged, written and removed; change nothing.")
        var dryRun = false

        @Flag(name: .long, help: "Keep conflict copies after merging them.")
        var keep = false

        @Flag(name: .long, help: "Turn each single-file notebook the hint names into a notebook folder of the same name.")
        var convert = false

        @Flag(name: .long, help: "List the notes, conflicts and places to check of each copy written, as merge does.")
        var verbose = false

        @OptionGroup var format: JSONOption

        func run() throws {
            let progress = SyncProgress.forCurrentConsole()
            let report: FolderSyncReport
            do {
                report = try FolderSync.run(dirs, dryRun: dryRun, keep: keep, convert: convert, progress: { progress?.update(SyncText.step($0)) },
                                            waitingForLock: { path, lockFile in
                                                Console.current.writeError(DisplayText.oneLine("pnmerge: \(path): waiting for another pnmerge or peernote to finish writing it (lock \(lockFile))") + "\n")
                                            })
            } catch {
                throw SyncText.failure(error)
            }
            progress?.finish()
            let console = Console.current
            for warning in report.folderWarnings { console.writeError(errorLine("warning: " + SyncText.folderWarning(warning))) }
            for problem in report.problems { console.writeError(errorLine(SyncText.problem(problem))) }
            let style = RenderStyle.current
            try console.emit(format.json ? SyncText.json(report, style: style).rendered : SyncText.text(report, style: style, verbose: verbose))
            let status = SyncText.exitStatus(report)
            if status != .success { throw status.exitCode }
        }
    }
}

/// `pnmerge sync`'s words for the library's typed report (`FolderSyncReport`): the summary, each
/// notebook's files, problems (one line each, on standard error), JSON, and the exit status.
enum SyncText {
    /// 74 when a copy could not be written or a conflict copy removed; else 65 when a damaged
    /// file or a copy that cannot be merged was left alone; else 66 when a file could not be
    /// read; else 2 when copies that share no history were left alone.
    static func exitStatus(_ report: FolderSyncReport) -> ExitStatus {
        switch report.problems.map(\.kind).max() {
        case .writeFailed: .ioError
        case .damaged: .invalidInput
        case .unreadable: .noInput
        case .unrelated: .unrelated
        case nil: .success
        }
    }

    /// A folder that cannot be searched: 66.
    static func failure(_ error: FolderSyncError) -> CLIFailure {
        switch error {
        case .rootUnreadable(let e): CLIFailure(.noInput, e.description)
        case .rootNotAFolder: CLIFailure(.noInput, error.description)
        }
    }

    static func step(_ step: FolderSync.Step) -> String {
        switch step {
        case .scanning(let found): "scanning: \(found) .peernote files found"
        case .cleaningUp(let path): "cleaning up beside \(path)"
        case .reading(let i, let n, let path): "reading \(i)/\(n): \(path)"
        case .merging(let i, let n, let j, let m): "notebook \(i)/\(n): merging copy \(j)/\(m)"
        case .updating(let i, let n, let j, let m, let path): "notebook \(i)/\(n): updating copy \(j)/\(m): \(path)"
        }
    }

    /// A chunk or file a notebook folder's reading skipped, with how to salvage a damaged chunk.
    static func folderWarning(_ warning: FolderSyncReport.FolderWarning) -> String {
        FolderWarnings.line(warning.line, damagedChunk: warning.damagedChunk, folder: warning.folder)
    }

    /// A skipped entry's path, bytes of its name that are not UTF-8 shown as `\xNN`.
    static func path(_ entry: SkippedEntry) -> String {
        let name = entry.nameBytes
        guard !name.isEmpty, !UTF8Bytes.isValid(name) else { return entry.path }
        return entry.folder.hasSuffix("/") ? entry.folder + UTF8Bytes.shown(name) : entry.folder + "/" + UTF8Bytes.shown(name)
    }

    static func reason(_ entry: SkippedEntry) -> String {
        switch entry.reason {
        case .unreadableFolder(let why): "cannot read the folder (\(why))"
        case .symbolicLinkToFolder: "symbolic link to a folder, not followed"
        case .symbolicLink: "symbolic link, not followed"
        case .notRegularFile: "not a regular file"
        case .nameNotUTF8(let isFolder):
            "name is not valid UTF-8 (bytes shown as \\xNN); rename the \(isFolder ? "folder" : "file") to a UTF-8 name to sync \(isFolder ? "the notebooks in it" : "it")"
        }
    }

    /// The problem's line (without the `pnmerge: ` that `errorLine` adds).
    static func problem(_ problem: FolderSyncReport.Problem) -> String {
        switch problem {
        case .nameNotUTF8(let entry):
            return "\(path(entry)): \(reason(entry)); left alone"
        case .unreadable(let path, let error):
            return "\(path): \(error.message); left alone"
        case .damaged(let path, let error):
            // The way back, said on every run while the file is there.
            return "\(path): \(error.toolText); left alone" + SalvageHint.suffix(for: error, path: path)
        case .unrelated(let first, let firstID, let other, let otherID, let relation, let samePlace):
            let a = Inputs.displayName(first), b = Inputs.displayName(other)
            return samePlace
                ? Inputs.unrelatedReason(a, firstID, b, otherID, relation: relation, action: "sync \(b) with \(a)", nothingWritten: false) + "; neither was merged into the other"
                : Inputs.unrelatedReason(a, firstID, b, otherID, relation: relation, action: "sync \(b)", nothingWritten: false) + "; left alone"
        case .conflictCopyOfOther(let path, let tool, let original, let id, let otherID):
            let same = id == otherID ? ", no shared history" : ""
            return "\(path): \(tool == .rsyncBackup ? "an" : "a") \(tool) of \(original), but a different notebook (\(id.uuidString.lowercased()) vs \(otherID.uuidString.lowercased())\(same)); left alone"
        case .lockFailed(let error, let leftovers):
            if leftovers { return "\(error.description); files left by interrupted writes beside it not cleaned up" }
            return error.description + (error.aftermath == .unstated ? "; not written" : "")
        case .writeFailed(let error):
            return error.describe(mergedBy: "pnmerge sync", statingNotWritten: true)
        case .removeFailed(let path, let why):
            return "\(path): cannot remove it: \(why); its changes are merged"
        case .convertFailed(let error):
            return "\(conversionText(error)); not converted into a notebook folder (it synced as a single file)"
        }
    }

    /// A failed conversion (`sync --convert`) in the tools' words: a notebook that does not
    /// load is repaired with `pnmerge salvage`; a file that changed meanwhile, by running sync again.
    static func conversionText(_ error: FileError) -> String {
        switch error {
        case .doesNotLoad(let path, let e): "\(path): \(e); not changed (repair it first: pnmerge salvage)"
        case .conversionFailed(let path, .changedMeanwhile): "\(path): changed while it was being converted; run sync again; not changed"
        default: error.description
        }
    }

    static func kept(_ why: FolderSyncReport.KeptReason) -> String {
        switch why {
        case .keepRequested: "kept (--keep)"
        case .besideIsDifferent(let original): "kept: \(original) beside it is a different notebook"
        case .besideUnreadable(let original): "kept: \(original) beside it could not be read or is damaged"
        case .besideLeftAlone(let original): "kept: \(original) beside it was left alone"
        case .besideIsLink(let original, let toFolder): "kept: \(original) beside it is a \(toFolder ? "symbolic link to a folder" : "symbolic link"), not followed"
        case .noOriginal(let original): "kept: there is no \(original) beside it (its changes went to the other copies)"
        case .noOriginalNorCopy(let original): "kept: there is no \(original) beside it, and no other copy of this notebook (its changes are only in this file)"
        case .readOnly: "kept: read-only (its changes are merged; remove it yourself)"
        case .changedMeanwhile: "kept: changed while syncing (run sync again)"
        }
    }

    static func leftover(_ leftover: FolderSyncReport.Leftover, dryRun: Bool) -> String {
        switch leftover {
        case .removed(let path): "\(dryRun ? "would remove" : "removed") \(path)"
        case .madeConflictCopy(let from, let to, let notebook):
            "\(dryRun ? "would make" : "made") \(from) a conflict copy\(to.map { " \($0)" } ?? "") (it holds changes \(notebook) lacks; \(dryRun ? "sync would then merge it" : "merged below"))"
        case .left(let path): "left \(path): a write in progress, or less than 10 s old (a later sync removes it)"
        case .notebookLocked(let notebook): "left the files beside \(notebook): another pnmerge or peernote is writing it (a later sync cleans up)"
        }
    }

    /// What one copy received, counted on one line: notes added, restored, edited, moved and
    /// deleted, a retitled notebook, conflicts new to the copy, places to check. Nil when none.
    static func counts(_ update: FolderSyncReport.CopyUpdate) -> String? {
        var parts: [String] = []
        if !update.diff.titleBefore.hasSameScalars(as: update.diff.titleAfter) { parts.append("notebook retitled") }
        var added = 0, restored = 0, edited = 0, moved = 0, deleted = 0
        for change in update.diff.changes {
            switch change {
            case .added: added += 1
            case .restored: restored += 1
            case .edited: edited += 1
            case .moved: moved += 1
            case .deleted: deleted += 1
            }
        }
        let notes = [(added, "added"), (restored, "restored"), (edited, "edited"), (moved, "moved"), (deleted, "deleted")]
            .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        if !notes.isEmpty { parts.append("notes " + notes.joined(separator: ", ")) }
        let new = newConflicts(update).count
        if new > 0 { parts.append(Text.count(new, "new conflict")) }
        if !update.overlaps.isEmpty { parts.append(Text.count(update.overlaps.count, "place", "places") + " to check") }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    static func earlierConflicts(_ update: FolderSyncReport.CopyUpdate) -> Set<Conflict> {
        ConflictAge.earlier(update.conflicts, had: update.conflictsBefore)
    }

    static func newConflicts(_ update: FolderSyncReport.CopyUpdate) -> [Conflict] {
        let earlier = earlierConflicts(update)
        return update.conflicts.filter { !earlier.contains($0) }
    }

    /// The copy whose conflicts a resolving command names: the copy once written (not in a
    /// dry run, nor a device).
    static func resolvable(_ update: FolderSyncReport.CopyUpdate) -> String? {
        update.bytesWritten == nil || Inputs.isNotAFile(update.path) ? nil : update.path
    }

    /// What one copy received, listed as merge lists it (the lines under its `wrote` line), each
    /// conflict with the command that resolves it in that copy once written.
    static func details(_ update: FolderSyncReport.CopyUpdate, style: RenderStyle) -> [String] {
        var lines = DiffRendering.lines(update.diff, style: style)
        lines += MergeReport.checkLines(update.overlaps, style: style)
        lines += MergeReport.conflictLines(update.conflicts, earlier: earlierConflicts(update), in: update.notebook, style: style,
                                           resolvingIn: resolvable(update)) { n in
            "\(Text.count(n, "conflict")) from before this sync \(n == 1 ? "is" : "are") still open."
        }
        return lines
    }

    static func action(_ action: FolderSyncReport.Action, dryRun: Bool, style: RenderStyle, verbose: Bool) -> [String] {
        switch action {
        case .wrote(let update):
            let added = "+\(Text.count(update.changes, "change")) (\(Text.authors(update.changesByAuthor)))"
            var line: String
            if update.isFolder {
                // A notebook folder gains one chunk; nothing in it is rewritten.
                line = update.bytesWritten == nil ? "would add a chunk to \(update.path) (notebook folder): \(added)"
                    : "added a chunk to \(update.path) (notebook folder): \(added), \(Text.count(update.bytesWritten ?? 0, "byte"))"
                    + (update.chunk.map { " (\($0))" } ?? "")
            } else if let size = update.bytesWritten {
                line = "wrote \(update.path): \(added), \(update.bytesBefore) → \(Text.count(size, "byte"))"
                if update.changedMeanwhile { line += "; it changed while syncing; run sync again to take its new changes to the other copies" }
            } else {
                line = "would write \(update.path): \(added)"
            }
            var lines = ["  " + DisplayText.oneLine(line)]
            if verbose {
                lines += details(update, style: style).map { "    " + $0 }
            } else if let counts = counts(update) {
                lines.append("    " + DisplayText.oneLine(counts))
            }
            return lines
        case .rewrote(let path, let before, let written, let changedMeanwhile):
            var line = written.map { "rewrote \(path) in canonical form, the same bytes as the other copies: \(before) → \(Text.count($0, "byte"))" }
                ?? "would rewrite \(path) in canonical form, the same bytes as the other copies"
            if changedMeanwhile { line += "; it changed while syncing; run sync again to take its new changes to the other copies" }
            return ["  " + DisplayText.oneLine(line)]
        case .removed(let path, let tool):
            return ["  " + DisplayText.oneLine("\(dryRun ? "would remove" : "removed") \(path) (\(tool), merged)")]
        case .kept(let path, let why):
            return ["  " + DisplayText.oneLine("\(kept(why)): \(path)")]
        case .goneMeanwhile(let path):
            return ["  " + DisplayText.oneLine("gone: removed meanwhile by another program (its changes are merged): \(path)")]
        }
    }

    static func text(_ report: FolderSyncReport, style: RenderStyle, verbose: Bool) -> String {
        var lines: [String] = []
        if report.filesFound == 0 {
            lines.append("No .peernote files found in \(report.roots.joined(separator: ", ")).")
        }
        for notebook in report.notebooks where !notebook.actions.isEmpty {
            var head = "\(notebook.title.isEmpty ? "(untitled notebook)" : Text.quoted(notebook.title)) (\(notebook.id.uuidString.lowercased().prefix(8))): \(Text.count(notebook.copies, "copy", "copies"))"
            if notebook.conflictCopies > 0 { head += " and \(Text.count(notebook.conflictCopies, "conflict copy", "conflict copies"))" }
            if notebook.conflicts > 0 { head += "; \(Text.count(notebook.conflicts, "conflict")) kept in the notebook (pnmerge show lists them)" }
            lines.append(style.paint(head, .bold))
            for action in notebook.actions { lines += self.action(action, dryRun: report.dryRun, style: style, verbose: verbose) }
        }
        if !report.conversions.isEmpty {
            lines.append(style.paint("Converted into notebook folders:", .bold))
            lines += report.conversions.map { "  " + DisplayText.oneLine(conversion($0, dryRun: report.dryRun)) }
        }
        if !report.leftovers.isEmpty {
            lines.append(style.paint("Left by interrupted writes:", .bold))
            lines += report.leftovers.map { "  " + DisplayText.oneLine(leftover($0, dryRun: report.dryRun)) }
        }
        if !report.skipped.isEmpty {
            lines.append(style.paint("Skipped:", .bold))
            lines += report.skipped.map { "  " + DisplayText.oneLine("\(path($0)): \(reason($0))") }
        }
        let verb = report.dryRun ? "would be " : ""
        let singleFiles = report.filesFound - report.foldersFound
        let copies = [singleFiles > 0 || report.foldersFound == 0 ? Text.count(singleFiles, "file") : nil,
                      report.foldersFound > 0 ? Text.count(report.foldersFound, "notebook folder") : nil].compactMap { $0 }
        var summary = "\(Text.count(report.notebooks.count, "notebook")) in \(copies.joined(separator: " and ")): "
        summary += "\(report.written) \(verb)written, \(report.upToDate) already up to date, "
        if report.rewritten > 0 { summary += "\(report.rewritten) \(verb)rewritten to the same bytes as the other copies, " }
        summary += "\(Text.count(report.removed, "conflict copy", "conflict copies")) \(verb)removed"
        if report.kept > 0 { summary += ", \(report.kept) kept" }
        if report.leftoversRemoved > 0 { summary += ", \(Text.count(report.leftoversRemoved, "file")) left by interrupted writes \(verb)removed" }
        if !report.problems.isEmpty { summary += "; \(Text.count(report.problems.count, "problem")) (on standard error)" }
        lines.append(summary + ".")
        if report.dryRun { lines.append("Dry run: nothing was written or removed.") }
        if let hint = report.syncedFolder { lines.append(DisplayText.oneLine(syncedFolderHint(hint))) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One converted notebook: where it is, and what became of the file it was.
    static func conversion(_ c: InPlaceConversion, dryRun: Bool) -> String {
        if dryRun { return "would convert \(c.path) into a notebook folder of the same name" }
        var line = "converted \(c.path) into a notebook folder of the same name (root chunk \(c.chunk))"
        if c.addedLate { line += "; changes a sync client wrote into the file meanwhile were added as one more chunk" }
        if let kept = c.keptFile {
            line += "; the file is kept as \(kept) (the folder could not be shown to hold all of it: check, then remove it)"
        } else {
            line += "; the file was removed once the folder was read back holding all of it"
        }
        return line
    }

    /// The one hint of a run that found single-file notebooks in folders a sync service
    /// manages: what they risk there, and the command that makes a notebook folder of one.
    static func syncedFolderHint(_ hint: SyncedFolderHint) -> String {
        let place: String
        switch hint.evidence {
        case .marker(let path, let service): place = "a folder \(service) syncs (\(path))"
        case .conflictCopies(let count, let tool):
            place = "a synced folder (\(Text.count(count, "conflict copy", "conflict copies")) seen, the first a \(tool))"
        }
        let first = hint.singleFiles[0]
        let which = hint.singleFiles.count == 1 ? "\(first) is a single-file notebook in"
            : "\(Text.count(hint.singleFiles.count, "single-file notebook")) (\(first) and \(hint.singleFiles.count - 1) more) are in"
        return "Hint: \(which) \(place); when two devices change one file before they see each other's change, the service keeps "
            + "a conflict copy, and it caps, overwrites or skips those, so edits can be lost. A notebook folder is never written by two devices: "
            + "pnmerge sync --convert \(convertCommandFolders(hint)) makes each one a folder of the same name, "
            + "or pnmerge convert \(GitSetupOperation.shellQuoted(first)) NEW.peernote makes one beside it (see docs/SYNC.md)."
    }

    /// The folders to give `sync --convert`: each single file's folder, shell-quoted, once each.
    static func convertCommandFolders(_ hint: SyncedFolderHint) -> String {
        var seen = Set<String>()
        let folders = hint.singleFiles.map { path -> String in
            let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            let folder = parts.joined(separator: "/")
            return folder.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : folder
        }.filter { seen.insert($0).inserted }
        return folders.map(GitSetupOperation.shellQuoted).joined(separator: " ")
    }

    /// `syncedFolder` in the JSON report: null, or the single-file notebooks and the evidence.
    static func syncedFolderJSON(_ hint: SyncedFolderHint?) -> JSONValue {
        guard let hint else { return .null }
        var fields: [(String, JSONValue)] = [("singleFiles", .strings(hint.singleFiles))]
        switch hint.evidence {
        case .marker(let path, let service):
            fields += [("evidence", .string("marker")), ("service", .string(service.description)), ("marker", .string(path))]
        case .conflictCopies(let count, let tool):
            fields += [("evidence", .string("conflictCopies")), ("conflictCopies", .int(count)), ("tool", .string(tool.description))]
        }
        fields.append(("convert", .string("pnmerge sync --convert \(convertCommandFolders(hint))")))
        return .object(fields)
    }

    /// The schema is documented in man/pnmerge.1 (SYNC REPORT); a copy written has the keys of
    /// merge's report (`changes`, `authors`, `bytesWritten`, `notebookTitle`, `notes`,
    /// `conflicts`, `overlaps`).
    static func json(_ report: FolderSyncReport, style: RenderStyle) -> JSONValue {
        func file(_ action: FolderSyncReport.Action) -> JSONValue {
            switch action {
            case .wrote(let u):
                return .object([
                    ("file", .string(u.path)), ("action", .string(report.dryRun ? "wouldWrite" : "written")),
                    ("folder", .bool(u.isFolder)), ("chunk", .optional(u.chunk)),
                    ("changes", .int(u.changes)), ("authors", DiffRendering.authorsJSON(u.changesByAuthor)),
                    ("bytesBefore", .int(u.bytesBefore)), ("bytesWritten", .optional(u.bytesWritten)),
                    ("changedMeanwhile", .bool(u.changedMeanwhile)),
                    ("notebookTitle", DiffRendering.titleJSON(u.diff)),
                    ("notes", .array(u.diff.changes.map(DiffRendering.json))),
                    ("conflicts", MergeReport.conflictsJSON(u.conflicts, earlier: earlierConflicts(u), in: u.notebook, style: style,
                                                            resolvingIn: resolvable(u))),
                    ("overlaps", MergeReport.overlapsJSON(u.overlaps)),
                ])
            case .rewrote(let path, let before, let written, let changedMeanwhile):
                return .object([("file", .string(path)), ("action", .string(report.dryRun ? "wouldRewrite" : "rewritten")),
                                ("bytesBefore", .int(before)), ("bytesWritten", .optional(written)), ("changedMeanwhile", .bool(changedMeanwhile))])
            case .removed(let path, let tool):
                return .object([("file", .string(path)), ("action", .string(report.dryRun ? "wouldRemove" : "removed")), ("tool", .string(tool.description))])
            case .kept(let path, let why):
                return .object([("file", .string(path)), ("action", .string("kept")), ("reason", .string(kept(why)))])
            case .goneMeanwhile(let path):
                return .object([("file", .string(path)), ("action", .string("gone"))])
            }
        }
        func problemKind(_ kind: FolderSyncReport.Problem.Kind) -> String {
            switch kind {
            case .unrelated: "unrelated"
            case .unreadable: "unreadable"
            case .damaged: "damaged"
            case .writeFailed: "writeFailed"
            }
        }
        return .object([
            ("roots", .strings(report.roots)),
            ("dryRun", .bool(report.dryRun)),
            ("notebooks", .array(report.notebooks.map { n in
                .object([("document", .string(n.id.uuidString.lowercased())), ("title", .string(n.title)),
                         ("copies", .int(n.copies)), ("conflictCopies", .int(n.conflictCopies)), ("openConflicts", .int(n.conflicts)),
                         ("files", .array(n.actions.map(file)))])
            })),
            ("leftovers", .strings(report.leftovers.map { leftover($0, dryRun: report.dryRun) })),
            ("folderWarnings", .strings(report.folderWarnings.map(folderWarning))),
            ("conversions", .array(report.conversions.map { c in
                .object([("file", .string(c.path)), ("action", .string(report.dryRun ? "wouldConvert" : "converted")),
                         ("chunk", .optional(report.dryRun ? nil : c.chunk)), ("keptFile", .optional(c.keptFile)), ("addedLate", .bool(c.addedLate))])
            })),
            ("skipped", .array(report.skipped.map { .object([("file", .string(path($0))), ("reason", .string(reason($0)))]) })),
            ("problems", .array(report.problems.map { .object([("kind", .string(problemKind($0.kind))), ("message", .string(problem($0)))]) })),
            ("filesFound", .int(report.filesFound)),
            ("foldersFound", .int(report.foldersFound)),
            ("written", .int(report.written)),
            ("upToDate", .int(report.upToDate)),
            ("rewritten", .int(report.rewritten)),
            ("removed", .int(report.removed)),
            ("kept", .int(report.kept)),
            ("leftoversRemoved", .int(report.leftoversRemoved)),
            ("syncedFolder", syncedFolderJSON(report.syncedFolder)),
        ])
    }
}

/// A progress line on standard error, only when it is a terminal and only once work has taken a moment.
final class SyncProgress {
    private let start = Date()
    private var last = Date.distantPast
    private var shown = false

    /// A progress line when standard error is a terminal and the process's own streams are in use; else nil.
    static func forCurrentConsole() -> SyncProgress? {
        guard Console.current is StandardStreams, isatty(2) == 1 else { return nil }
        return SyncProgress()
    }

    func update(_ text: String) {
        let now = Date()
        guard now.timeIntervalSince(start) > 0.3, now.timeIntervalSince(last) > 0.1 else { return }
        last = now
        shown = true
        writeAll(Array(("\r\u{1B}[K" + text).utf8), to: 2)
    }

    /// Clears the line (if one was shown) before the summary is printed.
    func finish() {
        if shown { writeAll(Array("\r\u{1B}[K".utf8), to: 2) }
        shown = false
    }
}
