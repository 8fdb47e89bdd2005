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
            deleted on one copy while edited on another, and how many conflicts MINE already had; \
            it ends with the 'peernote revert' command that undoes what the merge brought in.

            When MINE already has every change, the merge succeeds with "Already up to date" \
            and MINE is not touched. Copies that share no history are refused (exit 2) and \
            nothing is written. So are copies that hold different values of one field a newer \
            version of PeerNote wrote (exit 65, though neither is damaged): this version cannot \
            tell which value to keep; a newer pnmerge merges them.
            """
        )

        @Argument(help: ArgumentHelp("Your copy; the merged result replaces it unless -o is given ('-' for standard input, with -o or --dry-run).", valueName: "MINE"), completion: .file(extensions: ["peernote"]))
        var mine: String

        @Argument(help: ArgumentHelp("The copies to merge into MINE ('-' for standard input).", valueName: "THEIRS"), completion: .file(extensions: ["peernote"]))
        var theirs: [String]

        @Option(name: .shortAndLong, help: ArgumentHelp("Write the result to OUT instead of MINE ('-' for standard output); an existing OUT must hold nothing the result lacks.", valueName: "OUT"), completion: .file(extensions: ["peernote"]))
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
        // A pipe (`<(git show other:notes.peernote)`) is read like a file, except as a MINE the
        // result is written back to. (A dry run says so too: it reports what the run would do.)
        if inPlace, Inputs.isPipe(mine) {
            throw CLIFailure(.noInput, "\(Inputs.displayName(mine)): is a pipe, and a merge in place writes the result back to MINE: give -o OUT (or -o - for standard output); nothing was written")
        }
        let writePath = Inputs.writeTarget(target)
        let (combined, loaded, lock) = try loadAndCombine(mine: mine, theirs: theirs, target: target, writePath: writePath,
                                                          inPlace: inPlace, dryRun: dryRun)
        defer { withExtendedLifetime(lock) {} }
        // An OUT that exists is replaced only when the result holds all it holds: read under the
        // lock, before anything is written (in a dry run here; else once the result's bytes
        // are made, which settles the usual case, a run of the same merge again).
        let checksOutput = !inPlace && target != "-"
        // A compact save to OUT or standard output lets the result go before it is read back
        // (the read-back then reuses its memory); every other result is freed only by the
        // process's end, when this run ends it (`ProcessEnd`).
        if !dryRun && !inPlace && !(target != "-" && NotebookFolder.isFolder(target)) {
            return try writeCompact(consume combined, to: target, at: writePath, checkingOutput: checksOutput,
                                    permissionsLike: mine == "-" ? nil : mine, command: [mine] + theirs)
        }
        var merged = combined
        ProcessEnd.keep(merged.document)
        if checksOutput && dryRun {
            try checkReplaceable(target, at: writePath, by: merged.document, bytes: nil, command: [mine] + theirs)
        }

        // Already up to date: MINE stays untouched; an explicit OUT still receives the document.
        guard !dryRun, !(merged.report.upToDate && inPlace) else { return merged.finished() }
        if inPlace {
            let document = merged.document
            // A sync client that replaced MINE while this ran is not overwritten: what it wrote
            // is merged in too (and the report says so).
            do throws(WriteError) {
                let outcome = try merged.finishing { () throws(WriteError) in
                    // A notebook folder gets one new chunk; nothing in it is replaced.
                    NotebookFolder.isFolder(target) ? try document.write(to: target)
                        : try document.write(over: writePath, loaded: loaded, mode: .incremental)
                }
                merged.report.bytesWritten = outcome.byteCount
                merged.report.mineChangedMeanwhile = outcome.mergedMeanwhile > 0
            } catch { throw CLIFailure(writing: error) }
            merged.report.revertFile = target
            return merged.report
        }
        // An existing notebook folder as OUT: it gains a chunk holding what it lacks (nothing
        // in it is replaced), if it holds this notebook.
        let document = merged.document
        let existing = try Inputs.readFolder(target).document
        guard existing.relation(to: document) == .shared else {
            throw CLIFailure(.cannotCreate, "\(Inputs.displayName(target)): is a notebook folder of another notebook; refusing to add to it; nothing was written")
        }
        do throws(WriteError) {
            let outcome = try merged.finishing { () throws(WriteError) in try document.write(to: target) }
            merged.report.bytesWritten = outcome.byteCount
        } catch { throw CLIFailure(writing: error) }
        merged.report.revertFile = target
        return merged.report
    }

    /// Saves `merged`'s result compactly to `target` (OUT, or `-` for standard output, at
    /// `writePath`), refusing an OUT that holds more (`checkingOutput`), and lets the result go
    /// before the bytes are read back while they are written (nothing is put in place unless they
    /// load). Returns the report.
    private static func writeCompact(_ merged: consuming Combined, to target: String, at writePath: String, checkingOutput: Bool,
                                     permissionsLike source: String?, command: [String]) throws(CLIFailure) -> MergeReport {
        let (bytes, finished) = try (consume merged).compactSave { (document, bytes) throws(CLIFailure) in
            if checkingOutput { try checkReplaceable(target, at: writePath, by: document, bytes: bytes, command: command) }
        }
        var report = finished
        if target == "-" {
            do throws(FileError) { ProcessEnd.keep(try Document.checkedLoad(bytes, writingTo: target)) } catch { throw CLIFailure(writing: error) }
            try Console.current.writeBytes(bytes)
        } else {
            // A new OUT is no more readable than MINE (a private notebook's merge stays private).
            do throws(FileError) {
                ProcessEnd.keep(try Document.writeLoadable(bytes, to: writePath, namedInErrors: target, permissionsLike: source))
            } catch { throw CLIFailure(writing: error) }
        }
        report.bytesWritten = bytes.count
        // Not for a result written to standard output or a device (`-o /dev/null`): no file to revert in.
        if target != "-" && !Inputs.isNotAFile(target) { report.revertFile = target }
        return report
    }

    /// Reads and verifies MINE and every THEIRS (each THEIRS held as what the merge takes in from
    /// it: `Inputs.loadForMerge`), checks that they are copies of one notebook, takes the lock of
    /// the file written (none for a dry run or standard output), reads MINE again under it when
    /// writing in place, and merges them (`combine`). Returns the result, MINE's bytes as last
    /// read, and the lock; the copies as read are let go when it returns (the result is one of
    /// them, or was built from one).
    private static func loadAndCombine(mine: String, theirs: [String], target: String, writePath: String,
                                       inPlace: Bool, dryRun: Bool) throws(CLIFailure) -> (Combined, [UInt8], FileLock?) {
        let writesMine = inPlace && !dryRun
        var (base, others) = try Inputs.loadForMerge(mine: mine, theirs: theirs, regularOnly: writesMine ? [mine] : [])
        for other in others {
            let identity = base.document.identityRelation(to: other.source)
            guard identity == .shared else {
                throw CLIFailure(.unrelated, Inputs.unrelatedReason(base, other, relation: identity,
                                                                    action: "merge \(other.name) into \(base.name)", nothingWritten: true))
            }
        }

        // Hold the target's lock across load, merge and write, so a concurrent run loses nothing:
        // when writing in place, MINE is read again under the lock (and parsed again only if another
        // writer changed it in between).
        var lock: FileLock?
        if !dryRun && target != "-" {
            do { lock = try Inputs.lock(writePath) } catch { throw CLIFailure(writing: error) }
            if inPlace {
                let now = try Inputs.readBytes(target, pipes: false)
                if now != base.bytes {
                    base = LoadedDocument(path: mine, bytes: now, document: try Inputs.parse(now, from: target))
                    // A THEIRS that kept only what MINE as first read lacked is read whole again
                    // unless MINE still starts with the blocks it let go.
                    for (k, other) in others.enumerated() {
                        guard case .history(let source) = other.copy else { continue }
                        do throws(PeerNoteError) {
                            others[k] = LoadedTheirs(path: other.path, copy: .history(try source.takenWhole(for: base.document)), label: other.label)
                        } catch {
                            throw CLIFailure(.invalidInput, "\(other.name): \(error.toolText)")
                        }
                    }
                }
            }
        }
        // The result is MINE taking in every change, or, when the first THEIRS was kept whole and
        // has the longer history, that copy taking in MINE's (the merge's work grows with the
        // changes taken in); a compact save does not depend on the order they came in, and an
        // incremental one appends to MINE's bytes the block MINE lacks.
        let merged = try combine(base, others, output: target, dryRun: dryRun, appendingToMine: inPlace && !dryRun)
        return (merged, base.bytes, lock)
    }

    /// Refuses (73) to replace `output`, an existing file at `path` (its link's target), unless
    /// the result holds all it holds (`Document.checkReplaceable`), and says what to do instead
    /// (`command`: MINE and THEIRS as given, for the merge that takes OUT in too). `bytes`, the
    /// result's compact save when it is made already.
    static func checkReplaceable(_ output: String, at path: String, by result: Document, bytes resultBytes: [UInt8]?,
                                 command: [String]) throws(CLIFailure) {
        do { try result.checkReplaceable(path, bytes: resultBytes) } catch {
            throw refusal(error, output: output, command: command)
        }
    }

    /// `error` in the words of `merge -o`: 73 for an output refused, naming it as given, with
    /// what to do instead; 74 for a write that failed.
    static func refusal(_ error: OutputError, output: String, command: [String]) -> CLIFailure {
        let name = Inputs.displayName(output)
        let other = "choose another output, or remove \(name) first if it is not needed"
        switch error {
        case .loopingLink:
            return CLIFailure(.cannotCreate, "\(name): already exists and cannot be read (\(String(cString: strerror(ELOOP)))); not replaced (choose another output)")
        case .isDirectory:
            return CLIFailure(.cannotCreate, "\(name): is a directory; not replaced (name a file as OUT)")
        case .unreadable(_, let e):
            return CLIFailure(.cannotCreate, "\(name): already exists and cannot be read (\(e.message)); not replaced (\(other))")
        case .cannotReadHere(_, let e):
            return CLIFailure(.cannotCreate, "\(name): already exists and \(Document.unreadableHere(e) ?? "cannot be read here (\(e))"); not replaced (choose another output)")
        case .notANotebook(_, let e):
            return CLIFailure(.cannotCreate, "\(name): already exists and is not a copy of this notebook (it does not load: \(e)); not replaced (\(other))")
        case .otherNotebook:
            return CLIFailure(.cannotCreate, "\(name): already exists and is not a copy of this notebook; not replaced (\(other))")
        case .holdsMore(_, let changesByAuthor, let fields):
            let changes = changesByAuthor.reduce(0) { $0 + $1.count }
            var held: [String] = []
            if changes > 0 { held.append("\(Text.count(changes, "change")) the result lacks (\(Text.authors(changesByAuthor)))") }
            if fields > 0 { held.append("\(Text.count(fields, "field")) of a newer version the result lacks") }
            let again = (["pnmerge", "merge"] + (command + [output]).map(ShellQuote.path) + ["-o", ShellQuote.path(output)]).joined(separator: " ")
            return CLIFailure(.cannotCreate, "\(name): already exists and holds \(held.joined(separator: " and ")); "
                              + "merge it too (\(DisplayText.oneLine(again))) or choose another output")
        case .write(let e):
            return CLIFailure(writing: e)
        }
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

        /// The result's compact save and the report, the pending search run beside the save;
        /// `check` is given the result and the bytes before they are returned. The result is let
        /// go on return unless the caller holds it elsewhere.
        consuming func compactSave<E: Error>(checking check: (Document, [UInt8]) throws(E) -> Void) throws(E) -> (bytes: [UInt8], report: MergeReport) {
            let document = self.document
            let bytes = finishing { document.save(.compact) }
            try check(document, bytes)
            return (bytes, report)
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

    /// Merges `base.document` and every change of `others` it lacks into one document, and
    /// describes the result. The result is MINE's document taking in the others' changes, or,
    /// when the first of `others` is held whole and has the longer history, that copy taking in
    /// MINE's (`Document.mergedInPlace(with:keepingFile:)`: in memory, nothing is written; the
    /// callers let go of the copies as read); one held as its history alone is only taken in.
    /// With `appendingToMine`, its incremental save appends to MINE's bytes (else it is compact).
    /// `output` is where the caller will write it (MINE, OUT or `-`).
    /// The last merge's overlap search is left to the caller (`Combined`), so that it can run beside
    /// the save: it reads the merged document, the save only writes bytes.
    /// Unrelated copies are refused with exit 2 (the message ends "nothing was written" when
    /// `nothingWrittenNote`), a change that cannot be applied with exit 65.
    static func combine(_ base: LoadedDocument, _ others: [LoadedTheirs], output: String, dryRun: Bool,
                        appendingToMine: Bool, nothingWrittenNote: Bool = true) throws(CLIFailure) -> Combined {
        var document = base.document
        // What the merge may change, taken before it: the notes the others' changes name.
        let baseline = document.mergeBaseline(for: others.map(\.source))
        // MINE's conflicts as read (the merge below may change MINE in place).
        let mineConflicts = document.conflicts
        var inputs: [MergeReport.Input] = []
        var brought: [ChangeRange] = []
        var overlaps: [TextOverlap] = []
        var pending: OverlapSearch?
        for (i, other) in others.enumerated() {
            let summary: MergeSummary
            do throws(PeerNoteError) {
                switch other.copy {
                case .whole(let copy) where i == 0:
                    // The copies as read are let go once merged (the caller keeps the result):
                    // the longer one takes in the other's changes itself, its history not copied.
                    (document, summary) = try document.mergedInPlace(with: copy, keepingFile: appendingToMine)
                case .history(let source) where i == 0:
                    summary = try document.mergedInPlace(with: source, keepingFile: appendingToMine)
                case .whole(let copy):
                    summary = try document.merge(copy)
                case .history(let source):
                    summary = try document.merge(source)
                }
            } catch {
                if case .unrelated(let relation) = error {
                    throw CLIFailure(.unrelated, Inputs.unrelatedReason(base, other, relation: relation,
                                                                        action: "merge \(other.name) into \(base.name)", nothingWritten: nothingWrittenNote))
                }
                throw CLIFailure(.invalidInput, "\(other.name): \(error.toolText)")
            }
            inputs.append(.init(file: other.path, changesByAuthor: summary.changesByAuthor, fieldsAdded: summary.fieldsAdded))
            brought += document.changesBrought(by: summary)
            if i == others.count - 1 {
                pending = document.overlapSearch(of: summary)
            } else {
                overlaps += document.textOverlaps(of: summary)
            }
        }
        let conflicts = document.conflicts
        let diff = NotebookDiff(from: baseline, to: document)
        // The notes' places are read, without their bodies, only for a conflict of concurrent moves.
        let after = document.notebook(forConflicts: conflicts)
        var report = MergeReport(documentID: document.id, mine: base.path, output: output, dryRun: dryRun, inputs: inputs,
                                 diff: diff, notebook: after, conflicts: conflicts,
                                 // Only MINE's: a conflict a THEIRS brought is news to MINE's owner.
                                 earlierConflicts: ConflictAge.earlier(conflicts, had: mineConflicts),
                                 overlaps: overlaps, sharedTitles: SharedTitle.newlyShared(baseline: baseline, diff: diff, after: document))
        report.brought = brought
        return Combined(document: document, report: report, pendingSearch: pending)
    }
}
