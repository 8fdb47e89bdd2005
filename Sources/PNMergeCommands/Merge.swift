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
    /// `pnmerge merge MINE THEIRS... [-o OUT] [--dry-run] [--json]`.
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Merge other copies of a notebook into yours.",
            discussion: """
            Every change of each THEIRS that MINE lacks is added to MINE. The result is \
            written atomically back to MINE (as an appended block, so the file only grows) \
            or, with -o, to OUT in compact form ('-o -' writes it to standard output and the \
            report to standard error). An OUT that exists is replaced only when the result holds \
            all it holds (an earlier run's result); a copy with changes of its own, another \
            notebook or any other file is refused (exit 73) and left unchanged. The report says \
            how many changes each file brought and from whom, which notes were added, restored, \
            edited, moved or deleted, every conflict of the result that MINE did not have (made by the \
            merge or brought by a THEIRS) with each value and the one shown, every such note \
            deleted on one copy while edited on another, and how many conflicts MINE already had.

            When MINE already has every change, the merge succeeds with "Already up to date" \
            and MINE is not touched. Copies that share no history are refused (exit 2) and \
            nothing is written. So are copies that hold different values of one field a newer \
            version of PeerNote wrote (exit 65, though neither is damaged): this version cannot \
            tell which value to keep; a newer pnmerge merges them.
            """
        )

        @Argument(help: ArgumentHelp("Your copy; the merged result replaces it unless -o is given ('-' for standard input, with -o or --dry-run).", valueName: "MINE"))
        var mine: String

        @Argument(help: ArgumentHelp("The copies to merge into MINE ('-' for standard input).", valueName: "THEIRS"))
        var theirs: [String]

        @Option(name: .shortAndLong, help: ArgumentHelp("Write the result to OUT instead of MINE ('-' for standard output); an existing OUT must hold nothing the result lacks.", valueName: "OUT"))
        var output: String?

        @Flag(name: .long, help: "Report what the merge would do; write nothing.")
        var dryRun = false

        @OptionGroup var format: JSONOption

        func run() throws {
            try FileNameArgument.require([mine] + theirs, output: output)
            let report = try MergeOperation.perform(mine: mine, theirs: theirs, output: output, dryRun: dryRun)
            let toStdout = report.output != "-" || dryRun
            let style = toStdout ? RenderStyle.current : RenderStyle(color: false, timeZone: Console.current.timeZone)
            let text = format.json ? report.json(style: style).rendered : report.text(style: style)
            if toStdout { try Console.current.emit(text) } else { Console.current.writeError(text) }
        }
    }
}

/// The merge itself, apart from argument parsing: load, check, merge, write.
enum MergeOperation {
    static func perform(mine: String, theirs: [String], output: String?, dryRun: Bool) throws(CLIFailure) -> MergeReport {
        try Inputs.checkStandardInputUsedOnce([mine] + theirs)
        if output == "-" && !dryRun { try Console.checkBinaryOutputAllowed() }
        let inPlace = output == nil || (output != "-" && output.map { Inputs.sameFile(Inputs.writeTarget($0), Inputs.writeTarget(mine)) } == true)
        // OUT itself, when it is MINE by another name: a symbolic link is written through (the
        // link stays), and a hard link's name gets the result (an atomic write replaces the file
        // that one name gives; MINE's name keeps the bytes it had, as any other link's would).
        let target = output ?? mine
        if mine == "-" && inPlace && !dryRun {
            throw CLIFailure(.usage, "cannot write the result back to standard input; give -o OUT (or -o - for standard output)")
        }

        // Every input is read and verified, and every copy's identity (document id and first
        // change) checked, before anything is locked or written. The comparison of the changes
        // both copies hold is the merge's own (once per pair); a copy that fails it is refused
        // before anything is written.
        // (All at once: a second core reads the second copy.)
        // A pipe (`<(git show other:notes.peernote)`) is read like a file, except as a MINE the
        // result is written back to.
        let writesMine = inPlace && !dryRun
        // (A dry run says so too: it reports what the run would do.)
        if inPlace, Inputs.isPipe(mine) {
            throw CLIFailure(.noInput, "\(Inputs.displayName(mine)): is a pipe, and a merge in place writes the result back to MINE: give -o OUT (or -o - for standard output); nothing was written")
        }
        var others = try Inputs.loadAll(theirs + [mine], regularOnly: writesMine ? [mine] : [])
        var base = others.removeLast()
        for other in others {
            let identity = base.document.identityRelation(to: other.document)
            guard identity == .shared else {
                throw CLIFailure(.unrelated, Inputs.unrelatedReason(base, other, relation: identity,
                                                                    action: "merge \(other.name) into \(base.name)", nothingWritten: true))
            }
        }

        // Hold the target's lock across load, merge and write, so a concurrent run loses nothing:
        // when writing in place, MINE is read again under the lock (and parsed again only if another
        // writer changed it in between).
        let writePath = Inputs.writeTarget(target)
        var lock: FileLock?
        if !dryRun && target != "-" {
            do { lock = try Inputs.lock(writePath) } catch { throw CLIFailure(writing: error) }
            if inPlace {
                let now = try Inputs.readBytes(target, pipes: false)
                if now != base.bytes { base = LoadedDocument(path: mine, bytes: now, document: try Inputs.parse(now, from: target)) }
            }
        }
        defer { withExtendedLifetime(lock) {} }

        // The result is built from whichever copy has the longer history (the merge's work grows
        // with the changes taken in); a compact save does not depend on the order they came in,
        // and an incremental one appends to MINE's bytes the block MINE lacks.
        var merged = try combine(base, others, output: target, dryRun: dryRun, appendingToMine: inPlace && !dryRun)
        let document = merged.document
        // An OUT that exists is replaced only when the result holds all it holds: read under the
        // lock, before anything is written (in a dry run here; else once the result's bytes
        // are made, below, which settles the usual case, a run of the same merge again).
        let checksOutput = !inPlace && target != "-"
        if checksOutput && dryRun {
            try checkReplaceable(target, at: writePath, by: document, bytes: nil, command: [mine] + theirs)
        }
        // The copies as read are not needed any more: let their histories go before the save
        // (the merged one was copied from one of them).
        let loaded = base.bytes
        others.removeAll()
        base = LoadedDocument(path: base.path, bytes: [], document: document)

        // Already up to date: MINE stays untouched; an explicit OUT still receives the document.
        guard !dryRun, !(merged.report.upToDate && inPlace) else { return merged.finished() }
        if inPlace {
            // A sync client that replaced MINE while this ran is not overwritten: what it wrote
            // is merged in too (and the report says so).
            do throws(FileError) {
                let outcome = try merged.finishing { () throws(FileError) in
                    try document.write(over: writePath, loaded: loaded, mode: .incremental)
                }
                merged.report.bytesWritten = outcome.byteCount
                merged.report.mineChangedMeanwhile = outcome.mergedMeanwhile > 0
            } catch { throw CLIFailure(writing: error) }
            return merged.report
        }
        let bytes = merged.finishing { document.save(.compact) }
        do throws(FileError) { try Document.checkLoadable(bytes, writingTo: target) } catch { throw CLIFailure(writing: error) }
        if checksOutput {
            try checkReplaceable(target, at: writePath, by: document, bytes: bytes, command: [mine] + theirs)
        }
        var report = merged.report
        if target == "-" {
            try Console.current.writeBytes(bytes)
        } else {
            // A new OUT is no more readable than MINE (a private notebook's merge stays private).
            do { try FileStore.writeAtomically(bytes, to: writePath, permissionsLike: mine == "-" ? nil : mine) } catch {
                throw CLIFailure(writing: error)
            }
        }
        report.bytesWritten = bytes.count
        return report
    }

    /// Refuses (73) to replace `output`, an existing regular file at `path` (its link's target),
    /// unless the result holds all it holds: it must be a copy of this notebook (`relation(to:)`)
    /// with no change and no payload field that `result` lacks, such as an earlier run's result
    /// of the same merge. Another notebook, a file that is not a notebook, one that cannot be read,
    /// or a copy with changes of its own is left as it is, and the message says what to do
    /// (`command`: MINE and THEIRS as given, for the merge that takes OUT in too). A missing OUT,
    /// and a FIFO or a character device (written into, never replaced), pass; so do a file that is
    /// not a regular file and a read-only one, which the write refuses (74, as before).
    /// `bytes`, the result's compact save when it is made already: an OUT holding exactly those
    /// bytes (the same merge run again; a compact save depends only on the changes it holds)
    /// passes without being loaded.
    static func checkReplaceable(_ output: String, at path: String, by result: Document, bytes resultBytes: [UInt8]?,
                                 command: [String]) throws(CLIFailure) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            // A symbolic link that loops: renaming over it would replace the link with a file.
            if errno == ELOOP {
                throw CLIFailure(.cannotCreate, "\(Inputs.displayName(output)): already exists and cannot be read (\(String(cString: strerror(ELOOP)))); not replaced (choose another output)")
            }
            return
        }
        if st.st_mode & S_IFMT == S_IFDIR {
            throw CLIFailure(.cannotCreate, "\(Inputs.displayName(output)): is a directory; not replaced (name a file as OUT)")
        }
        guard st.st_mode & S_IFMT == S_IFREG, st.st_mode & 0o222 != 0, access(path, W_OK) == 0 else { return }
        let name = Inputs.displayName(output)
        let other = "choose another output, or remove \(name) first if it is not needed"
        let bytes: [UInt8]
        do { bytes = try FileStore.read(path) } catch {
            throw CLIFailure(.cannotCreate, "\(name): already exists and cannot be read (\(error.message)); not replaced (\(other))")
        }
        if let resultBytes, bytes == resultBytes { return }
        let existing: Document
        do { existing = try Document.load(bytes) } catch {
            throw CLIFailure(.cannotCreate, "\(name): already exists and is not a copy of this notebook (it does not load: \(error)); not replaced (\(other))")
        }
        guard result.relation(to: existing) == .shared else {
            throw CLIFailure(.cannotCreate, "\(name): already exists and is not a copy of this notebook; not replaced (\(other))")
        }
        let lacking = result.lacking(from: existing)
        let changes = lacking.changesByAuthor.reduce(0) { $0 + $1.count }
        guard changes > 0 || lacking.fields > 0 else { return }
        var held: [String] = []
        if changes > 0 { held.append("\(Text.count(changes, "change")) the result lacks (\(Text.authors(lacking.changesByAuthor)))") }
        if lacking.fields > 0 { held.append("\(Text.count(lacking.fields, "field")) of a newer version the result lacks") }
        let again = (["pnmerge", "merge"] + (command + [output]).map(ShellQuote.path) + ["-o", ShellQuote.path(output)]).joined(separator: " ")
        throw CLIFailure(.cannotCreate, "\(name): already exists and holds \(held.joined(separator: " and ")); "
                         + "merge it too (\(DisplayText.oneLine(again))) or choose another output")
    }

    /// A merge's report, and the search for the places where the last merge met both sides' text
    /// edits, which the caller runs: beside the save (`finishing`), or at once (`finished`).
    struct Combined {
        /// The merged document (a new one: MINE's stays as it was read).
        let document: Document
        var report: MergeReport
        var pendingSearch: OverlapSearch?

        /// The report with the pending search's places.
        consuming func finished() -> MergeReport {
            if let search = pendingSearch { report.overlaps += search.run() }
            pendingSearch = nil
            return report
        }

        /// Runs `work` (the save) here while the pending search runs on another core, adds the
        /// places to the report (whether or not `work` throws), and returns what `work` returned.
        mutating func finishing<T, E: Error>(_ work: () throws(E) -> T) throws(E) -> T {
            guard let search = pendingSearch else { return try work() }
            pendingSearch = nil
            let (result, places) = Concurrently.run({ Result { () throws(E) in try work() } }, alongside: { search.run() })
            report.overlaps += places
            return try result.get()
        }
    }

    /// Merges `base.document` and every change of `others` it lacks into one document, built from
    /// whichever of MINE and the first of `others` has the longer history, which takes in the
    /// other's changes itself (`Document.mergedInPlace(with:keepingFile:)`: in memory, nothing is
    /// written; the callers let go of the copies as read), and describes the result.
    /// With `appendingToMine`, its incremental save appends to MINE's bytes (else it is compact).
    /// `output` is where the caller will write it (MINE, OUT or `-`).
    /// The last merge's overlap search is left to the caller (`Combined`), so that it can run beside
    /// the save: it reads the merged document, the save only writes bytes.
    /// Unrelated copies are refused with exit 2 (the message ends "nothing was written" when
    /// `nothingWrittenNote`), a change that cannot be applied with exit 65.
    static func combine(_ base: LoadedDocument, _ others: [LoadedDocument], output: String, dryRun: Bool,
                        appendingToMine: Bool, nothingWrittenNote: Bool = true) throws(CLIFailure) -> Combined {
        var document = base.document
        let before = document.notebook, placesBefore = document.notePlaces, deletedBefore = document.deletedNoteIDs
        // MINE's conflicts as read (the merge below may change MINE in place).
        let mineConflicts = document.conflicts
        var inputs: [MergeReport.Input] = []
        var overlaps: [TextOverlap] = []
        var pending: OverlapSearch?
        for (i, other) in others.enumerated() {
            let summary: MergeSummary
            do throws(PeerNoteError) {
                if i == 0 {
                    // The copies as read are let go once merged (the caller keeps the result):
                    // the longer one takes in the other's changes itself, its history not copied.
                    (document, summary) = try document.mergedInPlace(with: other.document, keepingFile: appendingToMine)
                } else {
                    summary = try document.merge(other.document)
                }
            } catch {
                if case .unrelated(let relation) = error {
                    throw CLIFailure(.unrelated, Inputs.unrelatedReason(base, other, relation: relation,
                                                                        action: "merge \(other.name) into \(base.name)", nothingWritten: nothingWrittenNote))
                }
                throw CLIFailure(.invalidInput, "\(other.name): \(error)")
            }
            inputs.append(.init(file: other.path, changesByAuthor: summary.changesByAuthor, fieldsAdded: summary.fieldsAdded))
            if i == others.count - 1 {
                pending = document.overlapSearch(of: summary)
            } else {
                overlaps += document.textOverlaps(of: summary)
            }
        }
        let after = document.notebook, conflicts = after.conflicts
        let report = MergeReport(documentID: document.id, mine: base.path, output: output, dryRun: dryRun, inputs: inputs,
                                 diff: NotebookDiff(from: before, placed: placesBefore, to: after, placed: document.notePlaces, deletedBefore: deletedBefore), notebook: after, conflicts: conflicts,
                                 // Only MINE's: a conflict a THEIRS brought is news to MINE's owner.
                                 earlierConflicts: ConflictAge.earlier(conflicts, had: mineConflicts),
                                 overlaps: overlaps, sharedTitles: SharedTitle.newlyShared(before: before, after: after))
        return Combined(document: document, report: report, pendingSearch: pending)
    }
}
