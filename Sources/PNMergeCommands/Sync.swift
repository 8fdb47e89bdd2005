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
            something, atomically and as an appended block. Copies that already have every \
            change are not touched.

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
            """
        )

        @Argument(help: ArgumentHelp("The folders to search (searched recursively).", valueName: "DIR"))
        var dirs: [String]

        @Flag(name: .long, help: "Report what would be merged, written and removed; change nothing.")
        var dryRun = false

        @Flag(name: .long, help: "Keep conflict copies after merging them.")
        var keep = false

        func run() throws {
            let progress = SyncProgress.forCurrentConsole()
            let report = try SyncOperation.perform(roots: dirs, dryRun: dryRun, keep: keep, progress: progress)
            progress?.finish()
            let console = Console.current
            for problem in report.problems { console.writeError(errorLine(problem.message)) }
            try console.emit(report.text(style: .current))
            let status = report.exitStatus
            if status != .success { throw status.exitCode }
        }
    }
}

/// One file that `sync` read and verified.
final class SyncCopy {
    let file: FoundFile
    let bytes: [UInt8]
    let document: Document
    /// What became of it.
    var outcome: Outcome = .pending

    /// What `sync` did with one copy.
    enum Outcome: Equatable {
        case pending
        /// It already had every change.
        case upToDate
        /// It was (or, in a dry run, would be) written.
        case written
        /// It shares no history with the rest of its group, or could not be written: left as it was.
        case leftAlone
        /// A conflict copy, merged into the group (removal is decided afterwards).
        case merged
    }

    init(file: FoundFile, bytes: [UInt8], document: Document) {
        self.file = file
        self.bytes = bytes
        self.document = document
    }

    var isConflictCopy: Bool { if case .conflictCopy = file.kind { true } else { false } }
}

/// What `sync` did (or would do), for the summary.
struct SyncReport {
    /// Something left alone, with the line printed on standard error.
    struct Problem: Error {
        /// Why, which sets the exit status.
        enum Kind { case damaged, unreadable, unrelated, writeFailed }
        var kind: Kind
        var message: String
    }

    /// One notebook (a group of copies sharing history) and what happened to its files.
    struct Notebook {
        var id: UUID
        var title: String
        var copies: Int
        var conflictCopies: Int
        var conflicts: Int
        /// `wrote PATH (+N changes, A → B bytes)`, `removed PATH (…)`, `kept PATH: why`.
        var actions: [String] = []
    }

    var roots: [String]
    var dryRun: Bool
    var notebooks: [Notebook] = []
    var skipped: [SkippedEntry] = []
    var problems: [Problem] = []
    var filesFound = 0
    var written = 0
    var upToDate = 0
    var removed = 0
    var kept = 0
    /// What became of the files interrupted writes left beside the notebooks (see `SyncOperation.cleanUpLeftovers`).
    var leftovers: [String] = []
    /// How many of those were (or would be) removed.
    var leftoversRemoved = 0

    var exitStatus: ExitStatus {
        let kinds = problems.map(\.kind)
        if kinds.contains(.writeFailed) { return .ioError }
        if kinds.contains(.damaged) { return .invalidInput }
        if kinds.contains(.unreadable) { return .noInput }
        if kinds.contains(.unrelated) { return .unrelated }
        return .success
    }

    func text(style: RenderStyle) -> String {
        var lines: [String] = []
        if filesFound == 0 {
            lines.append("No .peernote files found in \(roots.joined(separator: ", ")).")
        }
        for notebook in notebooks where !notebook.actions.isEmpty {
            var head = "\(notebook.title.isEmpty ? "(untitled notebook)" : Text.quoted(notebook.title)) (\(notebook.id.uuidString.lowercased().prefix(8))): \(Text.count(notebook.copies, "copy", "copies"))"
            if notebook.conflictCopies > 0 { head += " and \(Text.count(notebook.conflictCopies, "conflict copy", "conflict copies"))" }
            if notebook.conflicts > 0 { head += "; \(Text.count(notebook.conflicts, "conflict")) kept in the notebook (pnmerge show lists them)" }
            lines.append(style.paint(head, .bold))
            lines += notebook.actions.map { "  " + DisplayText.oneLine($0) }
        }
        if !leftovers.isEmpty {
            lines.append(style.paint("Left by interrupted writes:", .bold))
            lines += leftovers.map { "  " + DisplayText.oneLine($0) }
        }
        if !skipped.isEmpty {
            lines.append(style.paint("Skipped:", .bold))
            lines += skipped.map { "  " + DisplayText.oneLine("\($0.path): \($0.reason)") }
        }
        let verb = dryRun ? "would be " : ""
        var summary = "\(Text.count(notebooks.count, "notebook")) in \(Text.count(filesFound, "file")): "
        summary += "\(written) \(verb)written, \(upToDate) already up to date, "
        summary += "\(Text.count(removed, "conflict copy", "conflict copies")) \(verb)removed"
        if kept > 0 { summary += ", \(kept) kept" }
        if leftoversRemoved > 0 { summary += ", \(Text.count(leftoversRemoved, "file")) left by interrupted writes \(verb)removed" }
        if !problems.isEmpty { summary += "; \(Text.count(problems.count, "problem")) (on standard error)" }
        lines.append(summary + ".")
        if dryRun { lines.append("Dry run: nothing was written or removed.") }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The folder sync itself: scan, read, group by document, merge, write, fold in conflict copies.
enum SyncOperation {
    /// A document's identity for grouping: copies with the same id and first change share history.
    private struct GroupKey: Hashable {
        var id: UUID
        var genesis: ChangeID
    }

    /// A file's place: the folder it was found under and its path inside it.
    private struct Location: Hashable {
        var root: String
        var relative: String
    }

    /// `beforeRemoving` is called with a merged conflict copy's path just before it is checked
    /// and removed (tests change or remove the file there, as another program may).
    static func perform(roots: [String], dryRun: Bool, keep: Bool, progress: SyncProgress?,
                        beforeRemoving: (String) -> Void = { _ in }) throws(CLIFailure) -> SyncReport {
        var scanner = SyncScanner(progress: progress)
        try scanner.scan(roots)
        var report = SyncReport(roots: roots, dryRun: dryRun)
        // 0. What killed writers left beside the notebooks. A version with changes a notebook
        // lacks becomes a conflict copy: found by scanning again, and merged below.
        if cleanUpLeftovers(scanner, dryRun: dryRun, report: &report, progress: progress) {
            scanner = SyncScanner(progress: progress)
            try scanner.scan(roots)
        }
        report.skipped = scanner.skipped
        report.filesFound = scanner.files.count + scanner.notebooksNamedNotUTF8
        // A name that is not UTF-8 cannot be opened by its String path: like an unreadable file.
        for entry in scanner.namesNotUTF8 {
            report.problems.append(.init(kind: .unreadable, message: "\(entry.path): \(entry.reason); left alone"))
        }

        // 1. Read and verify every file.
        var copies: [SyncCopy] = []
        var failedLocations = Set<Location>()
        for (i, file) in scanner.files.enumerated() {
            progress?.update("reading \(i + 1)/\(scanner.files.count): \(file.path)")
            let bytes: [UInt8]
            do { bytes = try FileStore.read(file.path) } catch {
                report.problems.append(.init(kind: .unreadable, message: "\(file.path): \(error.message); left alone"))
                failedLocations.insert(Location(root: file.root, relative: file.relative))
                continue
            }
            do {
                copies.append(SyncCopy(file: file, bytes: bytes, document: try Document.load(bytes)))
            } catch {
                // The way back, said on every run while the file is there.
                let hint = SalvageHint.suffix(for: error, bytes: bytes, path: file.path)
                report.problems.append(.init(kind: .damaged, message: "\(file.path): \(error); left alone\(hint)"))
                failedLocations.insert(Location(root: file.root, relative: file.relative))
            }
        }

        // 2. Group by document (id and first change), notebooks before conflict copies.
        var order: [GroupKey] = []
        var groups: [GroupKey: [SyncCopy]] = [:]
        for copy in copies {
            let key = GroupKey(id: copy.document.id, genesis: copy.document.genesis)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(copy)
        }
        var groupOf: [Location: GroupKey] = [:]
        for copy in copies {
            groupOf[Location(root: copy.file.root, relative: copy.file.relative)] = GroupKey(id: copy.document.id, genesis: copy.document.genesis)
        }

        // 3. Merge each group and write every copy that lacks something.
        var notebookIndex: [GroupKey: Int] = [:]
        for (n, key) in order.enumerated() {
            let members = (groups[key] ?? []).filter { !$0.isConflictCopy } + (groups[key] ?? []).filter(\.isConflictCopy)
            notebookIndex[key] = report.notebooks.count
            report.notebooks.append(sync(members, dryRun: dryRun, report: &report) { step in
                progress?.update("notebook \(n + 1)/\(order.count): \(step)")
            })
        }

        // 4. Conflict copies: removed once the notebook beside them holds all their changes.
        for copy in copies {
            guard case .conflictCopy(let original, let tool) = copy.file.kind, copy.outcome == .merged else { continue }
            let key = GroupKey(id: copy.document.id, genesis: copy.document.genesis)
            guard let index = notebookIndex[key] else { continue }
            let parent = PathText.deletingLastComponent(copy.file.relative)
            let place = Location(root: copy.file.root, relative: parent.isEmpty ? original : parent + "/" + original)
            let originalPath = PathText.deletingLastComponent(copy.file.path) + "/" + original
            let beside = (groups[key] ?? []).first { Location(root: $0.file.root, relative: $0.file.relative) == place && !$0.isConflictCopy }
            var keptReason: String?
            if let beside, beside.outcome == .written || beside.outcome == .upToDate {
                if keep { keptReason = "kept (--keep)" }
            } else if let other = groupOf[place], other != key {
                report.problems.append(.init(kind: .unrelated, message: "\(copy.file.path): \(tool.hasPrefix("rsync") ? "an" : "a") \(tool) of \(originalPath), but a different notebook (\(copy.document.id.uuidString.lowercased()) vs \(other.id.uuidString.lowercased())\(other.id == key.id ? ", no shared history" : "")); left alone"))
                keptReason = "kept: \(original) beside it is a different notebook"
            } else if failedLocations.contains(place) {
                keptReason = "kept: \(original) beside it could not be read or is damaged"
            } else if let beside, beside.outcome == .leftAlone {
                keptReason = "kept: \(original) beside it was left alone"
            } else if let link = scanner.linksPassedOver[copy.file.root + "/" + (parent.isEmpty ? original : parent + "/" + original)] {
                keptReason = "kept: \(original) beside it is a \(link), not followed"
            } else if (groups[key] ?? []).contains(where: { !$0.isConflictCopy }) {
                keptReason = "kept: there is no \(original) beside it (its changes went to the other copies)"
            } else {
                keptReason = "kept: there is no \(original) beside it, and no other copy of this notebook (its changes are only in this file)"
            }
            if let keptReason {
                report.kept += 1
                report.notebooks[index].actions.append("\(keptReason): \(copy.file.path)")
                continue
            }
            // A read-only file is left alone, as every write leaves it (its changes are merged).
            var st = stat()
            if lstat(copy.file.path, &st) == 0, st.st_mode & 0o222 == 0 {
                report.kept += 1
                report.notebooks[index].actions.append("kept: read-only (its changes are merged; remove it yourself): \(copy.file.path)")
                continue
            }
            if dryRun {
                report.removed += 1
                report.notebooks[index].actions.append("would remove \(copy.file.path) (\(tool), merged)")
                continue
            }
            // It must still be the file that was merged.
            beforeRemoving(copy.file.path)
            guard (try? FileStore.read(copy.file.path)) == copy.bytes else {
                var st = stat()
                if lstat(copy.file.path, &st) != 0 && errno == ENOENT {
                    // Another run (a second sync) merged and removed it meanwhile.
                    report.notebooks[index].actions.append("gone: removed meanwhile by another program (its changes are merged): \(copy.file.path)")
                    continue
                }
                report.kept += 1
                report.notebooks[index].actions.append("kept: changed while syncing (run sync again): \(copy.file.path)")
                continue
            }
            if unlink(copy.file.path) == 0 {
                report.removed += 1
                report.notebooks[index].actions.append("removed \(copy.file.path) (\(tool), merged)")
            } else {
                report.problems.append(.init(kind: .writeFailed, message: "\(copy.file.path): cannot remove it: \(String(cString: strerror(errno))); its changes are merged"))
            }
        }

        // 5. Different notebooks at the same place in two folders.
        var byRelative: [String: [SyncCopy]] = [:]
        for copy in copies where !copy.isConflictCopy { byRelative[copy.file.relative, default: []].append(copy) }
        for relative in byRelative.keys.sorted() {
            guard let same = byRelative[relative], let first = same.first else { continue }
            let firstKey = GroupKey(id: first.document.id, genesis: first.document.genesis)
            // Copies of one group that disagree were reported while merging it.
            for other in same.dropFirst() where other.file.root != first.file.root && GroupKey(id: other.document.id, genesis: other.document.genesis) != firstKey {
                let a = LoadedDocument(path: first.file.path, bytes: first.bytes, document: first.document)
                let b = LoadedDocument(path: other.file.path, bytes: other.bytes, document: other.document)
                let reason = Inputs.unrelatedReason(a, b, relation: first.document.relation(to: other.document),
                                                    action: "sync \(b.name) with \(a.name)", nothingWritten: false)
                report.problems.append(.init(kind: .unrelated, message: reason + "; neither was merged into the other"))
            }
        }
        return report
    }

    /// Cleans up what writers killed mid-write (Ctrl-C, a crash, a full disk) left beside the
    /// notebooks `scanner` found, under each one's lock, as every writer of the notebook does when
    /// it takes the lock (`FileStore.cleanUpLeftovers`): sync must not wait for a write that an
    /// up-to-date copy never gets. Only notebooks in a folder holding such a name are looked at,
    /// and only those with one beside them are locked; one another program holds locked now is
    /// left for a later run. Records what was done in `report`; true when a leftover with changes
    /// its notebook lacks was made a conflict copy (which the scan has not seen).
    private static func cleanUpLeftovers(_ scanner: SyncScanner, dryRun: Bool, report: inout SyncReport, progress: SyncProgress?) -> Bool {
        var madeConflictCopy = false
        for file in scanner.files where file.kind == .notebook {
            let parent = PathText.deletingLastComponent(file.relative)
            guard scanner.foldersWithLeftovers.contains(file.root + "\u{0}" + parent),
                  !FileStore.leftoverCandidates(of: file.path).isEmpty else { continue }
            progress?.update("cleaning up beside \(file.path)")
            let cleanup: FileStore.LeftoverCleanup
            if dryRun {
                cleanup = FileStore.cleanUpLeftovers(of: file.path, dryRun: true)
            } else {
                let lock: FileLock?
                do { lock = try FileLock.ifFree(for: file.path) } catch {
                    report.problems.append(.init(kind: .writeFailed, message: "\(error.description); files left by interrupted writes beside it not cleaned up"))
                    continue
                }
                guard let lock else {
                    report.leftovers.append("left the files beside \(file.path): another pnmerge or peernote is writing it (a later sync cleans up)")
                    continue
                }
                cleanup = lock.leftoverCleanup
            }
            for path in cleanup.removed {
                report.leftoversRemoved += 1
                report.leftovers.append("\(dryRun ? "would remove" : "removed") \(path)")
            }
            for kept in cleanup.keptAsConflictCopies {
                madeConflictCopy = true
                let copy = kept.to.map { " \($0)" } ?? ""
                report.leftovers.append("\(dryRun ? "would make" : "made") \(kept.from) a conflict copy\(copy) (it holds changes \(file.path) lacks; \(dryRun ? "sync would then merge it" : "merged below"))")
            }
            for path in cleanup.left {
                report.leftovers.append("left \(path): a write in progress, or less than 10 s old (a later sync removes it)")
            }
        }
        return madeConflictCopy && !dryRun
    }

    /// Merges one group and writes the copies that lack something; records what happened.
    private static func sync(_ members: [SyncCopy], dryRun: Bool, report: inout SyncReport, progress: (String) -> Void) -> SyncReport.Notebook {
        guard let first = members.first else {
            return SyncReport.Notebook(id: UUID(), title: "", copies: 0, conflictCopies: 0, conflicts: 0)
        }
        // Everything every copy has (each merge built from the longer history: see merged(with:)).
        var all = first.document.fork()
        var included = [first]
        for (i, copy) in members.enumerated().dropFirst() {
            progress("merging copy \(i + 1)/\(members.count)")
            let relation = all.relation(to: copy.document)
            guard relation == .shared else {
                copy.outcome = .leftAlone
                let a = LoadedDocument(path: first.file.path, bytes: first.bytes, document: first.document)
                let b = LoadedDocument(path: copy.file.path, bytes: copy.bytes, document: copy.document)
                report.problems.append(.init(kind: .unrelated, message: Inputs.unrelatedReason(a, b, relation: relation, action: "sync \(b.name)", nothingWritten: false) + "; left alone"))
                continue
            }
            do { (all, _) = try all.merged(with: copy.document) } catch {
                copy.outcome = .leftAlone
                report.problems.append(.init(kind: .damaged, message: "\(copy.file.path): \(error); left alone"))
                continue
            }
            included.append(copy)
        }
        var notebook = SyncReport.Notebook(id: all.id, title: all.title, copies: included.filter { !$0.isConflictCopy }.count,
                                           conflictCopies: included.filter(\.isConflictCopy).count, conflicts: all.conflicts.count)

        for (i, copy) in included.enumerated() {
            if copy.isConflictCopy { copy.outcome = .merged; continue }
            progress("updating copy \(i + 1)/\(included.count): \(copy.file.path)")
            // A new document built from `all` that appends to the copy's file what it lacks (the
            // copy's own merge would take all of it in first).
            let summary: MergeSummary, updated: Document
            do { (updated, summary) = try copy.document.merged(with: all) } catch {
                copy.outcome = .leftAlone
                report.problems.append(.init(kind: .damaged, message: "\(copy.file.path): \(error); left alone"))
                continue
            }
            if summary.isUpToDate {
                copy.outcome = .upToDate
                report.upToDate += 1
                continue
            }
            let bytes = updated.save(.incremental)
            let added = "+\(Text.count(summary.changeCount, "change")) (\(Text.authors(summary.changesByAuthor)))"
            if dryRun {
                copy.outcome = .written
                report.written += 1
                notebook.actions.append("would write \(copy.file.path): \(added)")
                continue
            }
            switch write(copy, bytes: bytes, all: all) {
            case .success(let (size, note)):
                copy.outcome = .written
                report.written += 1
                notebook.actions.append("wrote \(copy.file.path): \(added), \(copy.bytes.count) → \(Text.count(size, "byte"))" + (note.map { "; \($0)" } ?? ""))
            case .failure(let problem):
                copy.outcome = .leftAlone
                report.problems.append(problem)
            }
        }
        return notebook
    }

    /// `description` with "; not written" added, unless it already says the file was not changed.
    private static func notWritten(_ description: String) -> String {
        description.contains("not changed") ? description : description + "; not written"
    }

    /// Writes `bytes` over the copy under its lock, unless the file changed since it was read:
    /// then the fresh file gets everything instead (nothing that arrived meanwhile is lost).
    /// While other writers keep changing the file, it merges and tries again for as long as
    /// `FileStore.Contention` says (a version it took out of place is another writer's, which
    /// that writer was told is written). `replace` stands in for
    /// `FileStore.replace(_:at:expecting:)`, and `patience` for the contention's (tests race
    /// writers through them).
    static func write(_ copy: SyncCopy, bytes: [UInt8], all: Document, patience: Double = FileStore.Contention.patience,
                      replace: ([UInt8], String, [UInt8]) throws(FileError) -> FileStore.ReplaceOutcome = { (b, p, e) throws(FileError) in try FileStore.replace(b, at: p, expecting: e) })
        -> Result<(Int, String?), SyncReport.Problem> {
        let path = copy.file.path
        let lock: FileLock
        do { lock = try Inputs.lock(path) } catch {
            return .failure(.init(kind: .writeFailed, message: notWritten(error.description)))
        }
        return withExtendedLifetime(lock) { () -> Result<(Int, String?), SyncReport.Problem> in
            var output = bytes
            var note: String?
            var expected = copy.bytes
            // Versions another writer put in place that the write took out again (see
            // `FileStore.ReplaceOutcome.changedTwice`): merged into what is written, and their
            // kept copies removed once it is written (made conflict copies if it is not).
            var takenOut: [Document] = [], keptAside: [String] = []
            func failure(_ kind: SyncReport.Problem.Kind, _ message: String) -> Result<(Int, String?), SyncReport.Problem> {
                let kept = keptAside.map { FileStore.keepAsConflictCopy($0, of: path) }
                return .failure(.init(kind: kind, message: message + (kept.isEmpty ? "" : " (a version written meanwhile is kept as \(kept.joined(separator: ", ")))")))
            }
            // The lock keeps other pnmerge and peernote runs out, not sync clients: whenever the
            // file turns out to have changed (now, or at the moment of the write), the fresh file
            // gets everything instead, so nothing that arrived meanwhile is lost.
            var contention = FileStore.Contention(patience: patience)
            var tries = 0
            while true {
                if tries > 0 && !contention.wait() { break }
                tries += 1
                let now: [UInt8]
                do throws(FileError) { now = try FileStore.read(path) } catch {
                    return failure(.unreadable, notWritten(error.description))
                }
                if now != expected || takenOut.count > 0 {
                    let fresh: Document
                    do throws(PeerNoteError) { fresh = try Document.load(now) } catch {
                        return failure(.damaged, "\(path): changed while syncing and is now damaged (\(error)); left alone")
                    }
                    guard fresh.relation(to: all) == .shared, (try? fresh.merge(all)) != nil,
                          takenOut.allSatisfy({ (try? fresh.merge($0)) != nil }) else {
                        return failure(.unrelated, "\(path): replaced by another notebook while syncing; left alone")
                    }
                    output = fresh.save(.incremental)
                    expected = now
                    note = "it changed while syncing; run sync again to take its new changes to the other copies"
                }
                let outcome: FileStore.ReplaceOutcome
                do throws(FileError) {
                    try Document.checkLoadable(output, writingTo: path)
                    outcome = try replace(output, path, expected)
                } catch {
                    return failure(.writeFailed, notWritten(error.description))
                }
                switch outcome {
                case .replaced:
                    for kept in keptAside { unlink(kept) }
                    return .success((output.count, note))
                case .changed, .missing:
                    // (Missing: the read above says so, and nothing is written.)
                    continue
                case .changedTwice(_, let displaced, let keptAt):
                    keptAside.append(keptAt)
                    let version: Document
                    do throws(PeerNoteError) { version = try Document.load(displaced) } catch {
                        return failure(.damaged, "\(path): a damaged version was written meanwhile (\(error)); not written")
                    }
                    guard version.relation(to: all) == .shared else {
                        return failure(.unrelated, "\(path): another notebook was written meanwhile; not written")
                    }
                    takenOut.append(version)
                }
            }
            // Not "not written": what sync wrote was in place at moments, and other writers may have built on it.
            return failure(.writeFailed, "\(path): other writers kept changing it for \(Int(patience)) s while syncing; it may or may not hold what sync wrote (run sync again)")
        }
    }
}
