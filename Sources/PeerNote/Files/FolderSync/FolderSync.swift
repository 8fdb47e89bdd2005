#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder sync `pnmerge sync` runs, for any app: finds every copy of every notebook under
/// some folders (a USB stick and a notes folder, a Syncthing or Dropbox folder), and the
/// conflict copies sync tools left beside them; groups them by document (id and first change,
/// not by name); merges each group; writes every copy that lacks something through the one
/// write loop (`Document.write(over:loaded:)`, under the copy's `FileLock`), in the canonical
/// compact form; and removes each conflict copy once the notebook beside it holds all its changes.
///
/// Copies of one notebook that a run leaves holding the same changes hold the same bytes (the
/// canonical form: peernote(5), CANONICAL FORM), unless another program wrote one while the
/// run did: a copy written gets the canonical form, and an up-to-date copy whose bytes differ
/// from another copy's is rewritten in it. So a second run writes nothing, and rsync or Unison
/// between the folders find nothing to move. A lone copy that only gains nothing is not touched.
///
/// Symbolic links are never followed, hidden files and folders are skipped, and nothing outside
/// the folders is written. Damaged or unreadable files, conflict copies of a different notebook,
/// and different notebooks at the same place in two folders are reported
/// (`FolderSyncReport.Problem`) and left as they are; everything else still syncs.
public enum FolderSync {
    /// What the sync is doing, for a progress line.
    public enum Step: Sendable {
        case scanning(found: Int)
        case cleaningUp(beside: String)
        case reading(index: Int, count: Int, path: String)
        case merging(notebook: Int, notebooks: Int, copy: Int, copies: Int)
        case updating(notebook: Int, notebooks: Int, copy: Int, copies: Int, path: String)
    }

    /// Syncs every notebook under `roots`. With `dryRun`, nothing is written or removed: the
    /// report says what would be. With `keep`, merged conflict copies are kept. `waitingForLock`
    /// is told a copy's path and its lock file when another process holds the lock (the sync
    /// then waits). `beforeRemoving` is called with a merged conflict copy's path just before it
    /// is checked and removed (tests change or remove the file there, as another program may).
    /// Throws only when a folder given cannot be searched.
    public static func run(_ roots: [String], dryRun: Bool = false, keep: Bool = false, convert: Bool = false,
                           progress: @escaping (Step) -> Void = { _ in },
                           waitingForLock: ((String, String) -> Void)? = nil,
                           beforeRemoving: (String) -> Void = { _ in }) throws(FolderSyncError) -> FolderSyncReport {
        var run = Run(dryRun: dryRun, keep: keep, convert: convert, progress: progress, waitingForLock: waitingForLock, report: FolderSyncReport(roots: roots, dryRun: dryRun))
        try run.perform(roots, beforeRemoving: beforeRemoving)
        return run.report
    }
}

extension FolderSync {
    /// The folder part of `path`: `a/b/c` → `a/b`, `c` → "", `/c` → `/`.
    static func folder(of path: String) -> String { Run.deletingLastComponent(path) }
}

/// One copy sync read and verified: a file, a notebook folder (`reading`), or a conflict copy.
private final class SyncCopy {
    let file: FoundFile
    /// The file's bytes (a conflict copy of a chunk: the chunk's own bytes); empty for a folder.
    let bytes: [UInt8]
    let document: Document
    /// A notebook folder's reading.
    let reading: NotebookFolder.Reading?
    /// What became of it.
    var outcome: Outcome = .pending

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

    init(file: FoundFile, bytes: [UInt8], document: Document, reading: NotebookFolder.Reading? = nil) {
        self.file = file
        self.bytes = bytes
        self.document = document
        self.reading = reading
    }

    var isConflictCopy: Bool { file.isConflictCopy }
    var isFolder: Bool { file.isFolder }
    /// Its size as read: a folder's valid chunks added up.
    var byteCount: Int { reading?.byteCount ?? bytes.count }
    var key: GroupKey { GroupKey(id: document.id, genesis: document.genesis) }
    var location: Location { Location(root: file.root, relative: file.relative) }
}

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

private struct Run {
    let dryRun: Bool
    let keep: Bool
    let convert: Bool
    let progress: (FolderSync.Step) -> Void
    let waitingForLock: ((String, String) -> Void)?
    var report: FolderSyncReport
    /// The notebooks beside which the last scan saw a name a killed writer leaves
    /// (`FolderScan.sawLeftovers(of:)`), by path: a write of any other takes its lock without
    /// reading its folder again (`FileLock(for:cleaningUp:)`).
    var notebooksWithLeftovers = Set<String>()

    mutating func perform(_ roots: [String], beforeRemoving: (String) -> Void) throws(FolderSyncError) {
        let progress = self.progress
        var scanner = FolderScan { progress(.scanning(found: $0)) }
        try scanner.scan(roots)
        // 0. What killed writers left beside the notebooks. A version with changes a notebook
        // lacks becomes a conflict copy: found by scanning again, and merged below.
        if cleanUpLeftovers(scanner) {
            scanner = FolderScan { progress(.scanning(found: $0)) }
            try scanner.scan(roots)
        }
        notebooksWithLeftovers = Set(scanner.files.filter { scanner.sawLeftovers(of: $0) }.map(\.path))
        report.skipped = scanner.skipped
        report.syncedFolder = SyncedFolderHint.find(scanner.files)
        report.filesFound = scanner.files.count + scanner.notebooksNamedNotUTF8
        report.foldersFound = scanner.files.count(where: \.isFolder)
        // A name that is not UTF-8 cannot be opened by its String path: like an unreadable file.
        for entry in scanner.namesNotUTF8 { report.problems.append(.nameNotUTF8(entry)) }

        // 1. Read and verify every file and notebook folder.
        var copies: [SyncCopy] = []
        var failedLocations = Set<Location>()
        var folderReadings: [Location: NotebookFolder.Reading] = [:]
        // The sync tools' conflict copies of chunk files, by the notebook folder they are in.
        var chunkCopies: [Location: Set<String>] = [:]
        for file in scanner.files {
            if let folder = file.chunkCopyIn { chunkCopies[Location(root: file.root, relative: folder), default: []].insert(FolderScan.lastComponent(file.relative)) }
        }
        for (i, file) in scanner.files.enumerated() {
            progress(.reading(index: i + 1, count: scanner.files.count, path: file.path))
            if file.isFolder {
                do {
                    let reading = try NotebookFolder(file.path).read()
                    // A sync tool's conflict copy of a chunk is folded below, not just ignored: not warned of.
                    let folded = chunkCopies[Location(root: file.root, relative: file.relative)] ?? []
                    let damaged = Set(reading.damaged)
                    for (line, name) in zip(reading.warnings, reading.warningFiles) where !folded.contains(name) {
                        report.folderWarnings.append(FolderSyncReport.FolderWarning(folder: file.path, line: line,
                                                                                   damagedChunk: damaged.contains(name) ? name : nil))
                    }
                    folderReadings[Location(root: file.root, relative: file.relative)] = reading
                    copies.append(SyncCopy(file: file, bytes: [], document: reading.document, reading: reading))
                } catch {
                    switch error {
                    case .file(let e): report.problems.append(.unreadable(path: file.path, e))
                    case .document(_, let e): report.problems.append(.damaged(path: file.path, e))
                    }
                    failedLocations.insert(Location(root: file.root, relative: file.relative))
                }
                continue
            }
            let bytes: [UInt8]
            do { bytes = try FileStore.read(file.path) } catch {
                report.problems.append(.unreadable(path: file.path, error))
                failedLocations.insert(Location(root: file.root, relative: file.relative))
                continue
            }
            if let folder = file.chunkCopyIn {
                // A conflict copy of a chunk: read as the chain it would end (its parent's chain,
                // then its bytes), so that its changes can be merged as any conflict copy's.
                guard let reading = folderReadings[Location(root: file.root, relative: folder)] else { continue }
                guard case .conflictCopy(let chunk, _) = file.kind, let name = NotebookFolder.ChunkName(chunk) else { continue }
                guard let chain = name.parent.map({ reading.validChain(to: $0) }) ?? [] else {
                    report.problems.append(.damaged(path: file.path, .invalidDocument(offset: nil, message: "a copy of chunk \(chunk), whose parent chunk is not in the folder or is damaged; it cannot be read")))
                    continue
                }
                do {
                    copies.append(SyncCopy(file: file, bytes: bytes, document: try Document.load(chain + bytes)))
                } catch {
                    report.problems.append(.damaged(path: file.path, error))
                }
                continue
            }
            do {
                copies.append(SyncCopy(file: file, bytes: bytes, document: try Document.load(bytes)))
            } catch {
                report.problems.append(.damaged(path: file.path, error))
                failedLocations.insert(Location(root: file.root, relative: file.relative))
            }
        }

        // 2. Group by document (id and first change), notebooks before conflict copies.
        var order: [GroupKey] = []
        var groups: [GroupKey: [SyncCopy]] = [:]
        for copy in copies {
            if groups[copy.key] == nil { order.append(copy.key) }
            groups[copy.key, default: []].append(copy)
        }
        var groupOf: [Location: GroupKey] = [:]
        for copy in copies { groupOf[copy.location] = copy.key }

        // 3. Merge each group and write every copy that lacks something.
        var notebookIndex: [GroupKey: Int] = [:]
        for (n, key) in order.enumerated() {
            let members = (groups[key] ?? []).filter { !$0.isConflictCopy } + (groups[key] ?? []).filter(\.isConflictCopy)
            notebookIndex[key] = report.notebooks.count
            report.notebooks.append(sync(members, notebook: n + 1, of: order.count))
        }

        // 4. Conflict copies: removed once the notebook beside them holds all their changes.
        for copy in copies {
            guard case .conflictCopy(let marked, let tool) = copy.file.kind, copy.outcome == .merged else { continue }
            let key = copy.key
            guard let index = notebookIndex[key] else { continue }
            let parent = Self.deletingLastComponent(copy.file.relative)
            // A copy of a chunk belongs to the notebook folder it is in; any other, to the notebook beside it.
            var original = marked
            var place = copy.file.chunkCopyIn.map { Location(root: copy.file.root, relative: $0) }
                ?? Location(root: copy.file.root, relative: parent.isEmpty ? original : parent + "/" + original)
            // A notebook whose name is too long for the marks: the copy shows it shortened.
            if copy.file.chunkCopyIn == nil, groupOf[place] == nil,
               let long = (groups[key] ?? []).first(where: { other in
                   !other.isConflictCopy && other.file.root == copy.file.root && Self.deletingLastComponent(other.file.relative) == parent
                       && FileStore.nameBehindConflictCopy(of: FolderScan.lastComponent(other.file.relative)) == original
               }) {
                place = long.location
                original = FolderScan.lastComponent(long.file.relative)
            }
            let originalPath = copy.file.chunkCopyIn.map { FolderScan.join(copy.file.root, $0) } ?? Self.deletingLastComponent(copy.file.path) + "/" + original
            let besideName = copy.file.chunkCopyIn.map(FolderScan.lastComponent) ?? original
            let beside = (groups[key] ?? []).first { $0.location == place && !$0.isConflictCopy }
            var keptReason: FolderSyncReport.KeptReason?
            if let beside, beside.outcome == .written || beside.outcome == .upToDate {
                if keep { keptReason = .keepRequested }
            } else if let other = groupOf[place], other != key {
                report.problems.append(.conflictCopyOfOther(path: copy.file.path, tool: tool, original: originalPath, id: copy.document.id, otherID: other.id))
                keptReason = .besideIsDifferent(original: besideName)
            } else if failedLocations.contains(place) {
                keptReason = .besideUnreadable(original: besideName)
            } else if let beside, beside.outcome == .leftAlone {
                keptReason = .besideLeftAlone(original: besideName)
            } else if let toFolder = scanner.linksPassedOver[copy.file.root + "/" + (parent.isEmpty ? original : parent + "/" + original)] {
                keptReason = .besideIsLink(original: besideName, toFolder: toFolder)
            } else if (groups[key] ?? []).contains(where: { !$0.isConflictCopy }) {
                keptReason = .noOriginal(original: besideName)
            } else {
                keptReason = .noOriginalNorCopy(original: besideName)
            }
            if let keptReason {
                report.kept += 1
                report.notebooks[index].actions.append(.kept(path: copy.file.path, why: keptReason))
                continue
            }
            // A read-only file is left alone, as every write leaves it (its changes are merged).
            var st = stat()
            if lstat(copy.file.path, &st) == 0, st.st_mode & 0o222 == 0 {
                report.kept += 1
                report.notebooks[index].actions.append(.kept(path: copy.file.path, why: .readOnly))
                continue
            }
            if dryRun {
                report.removed += 1
                report.notebooks[index].actions.append(.removed(path: copy.file.path, tool: tool))
                continue
            }
            // It must still be the file that was merged.
            beforeRemoving(copy.file.path)
            guard (try? FileStore.read(copy.file.path)) == copy.bytes else {
                var st = stat()
                if lstat(copy.file.path, &st) != 0 && errno == ENOENT {
                    // Another run (a second sync) merged and removed it meanwhile.
                    report.notebooks[index].actions.append(.goneMeanwhile(path: copy.file.path))
                    continue
                }
                report.kept += 1
                report.notebooks[index].actions.append(.kept(path: copy.file.path, why: .changedMeanwhile))
                continue
            }
            if unlink(copy.file.path) == 0 {
                report.removed += 1
                report.notebooks[index].actions.append(.removed(path: copy.file.path, tool: tool))
            } else {
                report.problems.append(.removeFailed(path: copy.file.path, FileStore.errnoText()))
            }
        }

        // 5. With `convert`: each single file the hint names, once it is up to date, becomes a
        // notebook folder of the same name; the hint then names only those left.
        if convert, let hint = report.syncedFolder {
            var left: [String] = []
            let current = Set(copies.filter { !$0.isFolder && ($0.outcome == .written || $0.outcome == .upToDate) }.map(\.file.path))
            for path in hint.singleFiles {
                guard current.contains(path) else {
                    left.append(path)
                    continue
                }
                if dryRun {
                    report.conversions.append(InPlaceConversion(path: path, chunk: "", keptFile: nil, addedLate: false))
                    continue
                }
                do throws(FileError) {
                    let waiting = waitingForLock
                    let lock = try FileLock(for: path) { lockFile in waiting?(path, lockFile) }
                    try withExtendedLifetime(lock) { () throws(FileError) in
                        report.conversions.append(try InPlaceConversion.convert(path, date: InPlaceConversion.today()))
                    }
                } catch {
                    report.problems.append(.convertFailed(error))
                    left.append(path)
                }
            }
            report.syncedFolder = left.isEmpty ? nil : SyncedFolderHint(evidence: hint.evidence, singleFiles: left)
        }

        // 6. Different notebooks at the same place in two folders.
        var byRelative: [String: [SyncCopy]] = [:]
        for copy in copies where !copy.isConflictCopy { byRelative[copy.file.relative, default: []].append(copy) }
        for relative in byRelative.keys.sorted() {
            guard let same = byRelative[relative], let first = same.first else { continue }
            // Copies of one group that disagree were reported while merging it.
            for other in same.dropFirst() where other.file.root != first.file.root && other.key != first.key {
                report.problems.append(.unrelated(first: first.file.path, firstID: first.document.id, other: other.file.path, otherID: other.document.id,
                                                  relation: first.document.relation(to: other.document), samePlace: true))
            }
        }
    }

    /// Cleans up what writers killed mid-write (Ctrl-C, a crash, a full disk) left beside the
    /// notebooks `scanner` found, under each one's lock, as every writer of the notebook does when
    /// it takes the lock (`FileStore.cleanUpLeftovers`): sync must not wait for a write that an
    /// up-to-date copy never gets. Only notebooks beside which the scan saw such a name are
    /// locked (told from the scan's reading of each folder, not from one more per notebook);
    /// one another program holds locked now is left for a later run. True when a leftover with
    /// changes its notebook lacks was made a conflict copy (which the scan has not seen).
    private mutating func cleanUpLeftovers(_ scanner: FolderScan) -> Bool {
        var madeConflictCopy = false
        // A notebook folder too: a single file that became one (`sync --convert`) may have left
        // them beside it.
        for file in scanner.files where file.kind == .notebook {
            guard scanner.sawLeftovers(of: file) else { continue }
            progress(.cleaningUp(beside: file.path))
            let cleanup: FileStore.LeftoverCleanup
            if dryRun {
                cleanup = FileStore.cleanUpLeftovers(of: file.path, dryRun: true)
            } else {
                let lock: FileLock?
                do { lock = try FileLock.ifFree(for: file.path) } catch {
                    report.problems.append(.lockFailed(error, leftovers: true))
                    continue
                }
                guard let lock else {
                    report.leftovers.append(.notebookLocked(notebook: file.path))
                    continue
                }
                cleanup = lock.leftoverCleanup
            }
            for path in cleanup.removed { report.leftovers.append(.removed(path: path)) }
            for kept in cleanup.keptAsConflictCopies {
                madeConflictCopy = true
                report.leftovers.append(.madeConflictCopy(from: kept.from, to: kept.to, notebook: file.path))
            }
            for path in cleanup.left { report.leftovers.append(.left(path: path)) }
        }
        return madeConflictCopy && !dryRun
    }

    /// Merges one group and writes the copies that lack something; records what happened.
    private mutating func sync(_ members: [SyncCopy], notebook n: Int, of count: Int) -> FolderSyncReport.NotebookSync {
        guard let first = members.first else {
            return FolderSyncReport.NotebookSync(id: UUID(), title: "", copies: 0, conflictCopies: 0, conflicts: 0)
        }
        // Everything every copy has (each merge built from the longer history: see merged(with:)).
        var all = first.document.fork()
        var included = [first]
        for (i, copy) in members.enumerated().dropFirst() {
            progress(.merging(notebook: n, notebooks: count, copy: i + 1, copies: members.count))
            let relation = all.relation(to: copy.document)
            guard relation == .shared else {
                copy.outcome = .leftAlone
                report.problems.append(.unrelated(first: first.file.path, firstID: first.document.id, other: copy.file.path, otherID: copy.document.id,
                                                  relation: relation, samePlace: false))
                continue
            }
            do { (all, _) = try all.merged(with: copy.document) } catch {
                copy.outcome = .leftAlone
                report.problems.append(.damaged(path: copy.file.path, error))
                continue
            }
            included.append(copy)
        }
        var notebook = FolderSyncReport.NotebookSync(id: all.id, title: all.title, copies: included.filter { !$0.isConflictCopy }.count,
                                                     conflictCopies: included.filter(\.isConflictCopy).count, conflicts: all.conflicts.count)
        // Every copy written gets the canonical form of everything the group holds, so that
        // copies holding the same changes hold the same bytes whatever order they were merged
        // in (an appended block would follow each copy's own history, and rsync and Unison
        // would never see two such copies as equal). Made once per group, when first needed.
        var canonicalBytes: [UInt8]?
        func canonical() -> [UInt8] {
            if let canonicalBytes { return canonicalBytes }
            let bytes = all.save(.compact)
            canonicalBytes = bytes
            return bytes
        }

        for (i, copy) in included.enumerated() {
            if copy.isConflictCopy { copy.outcome = .merged; continue }
            progress(.updating(notebook: n, notebooks: count, copy: i + 1, copies: included.count, path: copy.file.path))
            // A new document built from `all` that appends to the copy's file what it lacks (the
            // copy's own merge would take all of it in first).
            // What the merge may change in the copy, taken before it: the notes `all`'s changes
            // that the copy lacks name (`MergeBaseline`), so that its whole notebook is not made.
            let baseline = copy.document.mergeBaseline(for: [all])
            let summary: MergeSummary, updated: Document
            do { (updated, summary) = try copy.document.merged(with: all) } catch {
                copy.outcome = .leftAlone
                report.problems.append(.damaged(path: copy.file.path, error))
                continue
            }
            if summary.isUpToDate {
                copy.outcome = .upToDate
                report.upToDate += 1
                continue
            }
            let conflicts = updated.conflicts
            var update = FolderSyncReport.CopyUpdate(
                path: copy.file.path, changesByAuthor: summary.changesByAuthor, bytesBefore: copy.byteCount,
                diff: NotebookDiff(from: baseline, to: updated), notebook: updated.notebook(forConflicts: conflicts), conflicts: conflicts,
                conflictsBefore: copy.document.conflicts, overlaps: updated.textOverlaps(of: summary))
            update.isFolder = copy.isFolder
            if dryRun {
                copy.outcome = .written
                report.written += 1
                notebook.actions.append(.wrote(update))
                continue
            }
            if copy.isFolder {
                switch add(to: copy, updated) {
                case .added(let added):
                    copy.outcome = .written
                    report.written += 1
                    update.bytesWritten = added.byteCount
                    update.chunk = added.chunk
                    notebook.actions.append(.wrote(update))
                case .failed(let problem):
                    copy.outcome = .leftAlone
                    report.problems.append(problem)
                }
                continue
            }
            switch write(copy, bytes: canonical(), document: updated) {
            case .written(let outcome):
                copy.outcome = .written
                report.written += 1
                update.bytesWritten = outcome.byteCount
                update.changedMeanwhile = outcome.mergedMeanwhile > 0
                notebook.actions.append(.wrote(update))
            case .failed(let problem):
                copy.outcome = .leftAlone
                report.problems.append(problem)
            }
        }
        // Single files only: a notebook folder holds chunks, and folders that hold the same chunks are
        // already identical.
        rewriteUpToDateCopies(included.filter { !$0.isConflictCopy && !$0.isFolder }, canonical: canonical, into: &notebook)
        return notebook
    }

    /// Copies that had every change but not the bytes of the others: rewritten in the canonical
    /// form, so that two copies holding the same changes end byte-identical (a sync tool then
    /// sees nothing to move). Only when the notebook has two copies or more and they would
    /// otherwise differ: a copy written this run holds the canonical form, or the up-to-date
    /// copies differ among themselves. A lone copy, or copies already identical, are left as
    /// they are.
    private mutating func rewriteUpToDateCopies(_ copies: [SyncCopy], canonical: () -> [UInt8],
                                                into notebook: inout FolderSyncReport.NotebookSync) {
        let upToDate = copies.filter { $0.outcome == .upToDate }
        guard copies.count > 1, !upToDate.isEmpty else { return }
        let anyWritten = copies.contains { $0.outcome == .written }
        guard anyWritten || Set(upToDate.map(\.bytes)).count > 1 else { return }
        let bytes = canonical()
        for copy in upToDate where copy.bytes != bytes {
            if dryRun {
                report.upToDate -= 1
                report.rewritten += 1
                notebook.actions.append(.rewrote(path: copy.file.path, bytesBefore: copy.bytes.count, bytesWritten: nil, changedMeanwhile: false))
                continue
            }
            switch write(copy, bytes: bytes, document: copy.document) {
            case .written(let outcome):
                copy.outcome = .written
                report.upToDate -= 1
                report.rewritten += 1
                notebook.actions.append(.rewrote(path: copy.file.path, bytesBefore: copy.bytes.count, bytesWritten: outcome.byteCount,
                                                 changedMeanwhile: outcome.mergedMeanwhile > 0))
            case .failed(let problem):
                report.problems.append(problem)
            }
        }
    }

    /// Writes `bytes` (`document`'s compact save) over the copy under its lock, through the one
    /// write loop (`Document.write(over:loaded:)`): whatever another program wrote there
    /// meanwhile is merged in and kept (and the file is then written compact again).
    private enum CopyWrite {
        case written(WriteOutcome)
        case failed(FolderSyncReport.Problem)
    }

    /// Adds to a notebook folder what `document` holds and it lacks, as one new chunk of this
    /// device (`NotebookFolder.add`, under the folder's lock as the tools take it); no chunk is
    /// rewritten or removed (no compaction either: that is `pnmerge compact`'s).
    private enum FolderAdd {
        case added(NotebookFolder.Added)
        case failed(FolderSyncReport.Problem)
    }

    /// Runs `body` holding the lock of the copy `file` (waiting as `waitingForLock` says), or
    /// gives `failed` the problem when the lock cannot be taken. What killed writers left beside
    /// it is looked for only when the scan saw such a name there (the cleanup before the merges
    /// left it: too young, or another program's); otherwise the scan, moments before, stands
    /// for the look each write would take, so that a folder of n notebooks is read once, not
    /// once per notebook written.
    private func holdingLock<R>(_ file: FoundFile, failed: (FolderSyncReport.Problem) -> R, _ body: () -> R) -> R {
        let lock: FileLock
        let path = file.path
        let cleaningUp = notebooksWithLeftovers.contains(path)
        do {
            let waiting = waitingForLock
            lock = try FileLock(for: path, cleaningUp: cleaningUp) { lockFile in waiting?(path, lockFile) }
        } catch {
            return failed(.lockFailed(error, leftovers: false))
        }
        return withExtendedLifetime(lock, body)
    }

    private func add(to copy: SyncCopy, _ document: Document) -> FolderAdd {
        let path = copy.file.path
        return holdingLock(copy.file, failed: FolderAdd.failed) { () -> FolderAdd in
            do throws(FileError) {
                return .added(try NotebookFolder(path).add(document, autoCompact: false))
            } catch {
                return .failed(.writeFailed(.file(error, takenOut: [])))
            }
        }
    }

    private func write(_ copy: SyncCopy, bytes: [UInt8], document: Document) -> CopyWrite {
        let path = copy.file.path
        return holdingLock(copy.file, failed: CopyWrite.failed) { () -> CopyWrite in
            do throws(WriteError) {
                return .written(try document.write(over: path, loaded: copy.bytes, mode: .compact, saved: bytes))
            } catch {
                return .failed(.writeFailed(error))
            }
        }
    }

    /// `a/b/c` → `a/b`, `c` → "", `/c` → `/` (repeated and trailing slashes ignored).
    static func deletingLastComponent(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard !parts.isEmpty else { return absolute ? "/" : "" }
        let dir = parts.dropLast().joined(separator: "/")
        return absolute ? "/" + dir : dir
    }
}
