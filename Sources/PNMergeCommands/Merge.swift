import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

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
            report to standard error). The report says how many changes each file brought \
            and from whom, which notes were added, edited, moved or deleted, every conflict \
            with each value and the one shown, and every note deleted on one copy while \
            edited on another.

            When MINE already has every change, the merge succeeds with "Already up to date" \
            and MINE is not touched. Copies that share no history are refused (exit 2) and \
            nothing is written.
            """
        )

        @Argument(help: ArgumentHelp("Your copy; the merged result replaces it unless -o is given.", valueName: "mine"))
        var mine: String

        @Argument(help: ArgumentHelp("The copies to merge into MINE.", valueName: "theirs"))
        var theirs: [String]

        @Option(name: .shortAndLong, help: ArgumentHelp("Write the result to OUT instead of MINE ('-' for standard output).", valueName: "out"))
        var output: String?

        @Flag(name: .long, help: "Report what the merge would do; write nothing.")
        var dryRun = false

        @OptionGroup var format: JSONOption

        func run() throws {
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
        let target = inPlace ? mine : (output ?? mine)
        if mine == "-" && inPlace && !dryRun {
            throw CLIFailure(.usage, "cannot write the result back to standard input; give -o OUT (or -o - for standard output)")
        }

        // Every input is read and verified, and every copy's identity (document id and first
        // change) checked, before anything is locked or written. The comparison of the changes
        // both copies hold is the merge's own (once per pair); a copy that fails it is refused
        // before anything is written.
        // (All at once: a second core reads the second copy.)
        var others = try Inputs.loadAll(theirs + [mine])
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
                let now = try Inputs.readBytes(mine)
                if now != base.bytes { base = LoadedDocument(path: mine, bytes: now, document: try Inputs.parse(now, from: mine)) }
            }
        }
        defer { withExtendedLifetime(lock) {} }

        var report = try combine(base, others, output: target, dryRun: dryRun)

        // Already up to date: MINE stays untouched; an explicit OUT still receives the document.
        guard !dryRun, !(report.upToDate && inPlace) else { return report }
        if inPlace {
            // A sync client that replaced MINE while this ran is not overwritten: what it wrote
            // is merged in too (and the report says so).
            do throws(FileError) {
                let outcome = try base.document.write(over: writePath, loaded: base.bytes, mode: .incremental)
                report.bytesWritten = outcome.byteCount
                report.mineChangedMeanwhile = outcome.mergedMeanwhile > 0
            } catch { throw CLIFailure(writing: error) }
            return report
        }
        let bytes = base.document.save(.compact)
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

    /// Merges every change of `others` that `base` lacks into `base.document` (in memory; nothing is
    /// written) and describes the result. `output` is where the caller will write it (MINE, OUT or `-`).
    /// Unrelated copies are refused with exit 2 (the message ends "nothing was written" when
    /// `nothingWrittenNote`), a change that cannot be applied with exit 65.
    static func combine(_ base: LoadedDocument, _ others: [LoadedDocument], output: String, dryRun: Bool,
                        nothingWrittenNote: Bool = true) throws(CLIFailure) -> MergeReport {
        let document = base.document
        let before = document.notebook
        var inputs: [MergeReport.Input] = []
        var overlaps: [TextOverlap] = []
        for other in others {
            let summary: MergeSummary
            do { summary = try document.merge(other.document) } catch {
                if case .unrelated(let relation) = error {
                    throw CLIFailure(.unrelated, Inputs.unrelatedReason(base, other, relation: relation,
                                                                        action: "merge \(other.name) into \(base.name)", nothingWritten: nothingWrittenNote))
                }
                throw CLIFailure(.invalidInput, "\(other.name): \(error)")
            }
            inputs.append(.init(file: other.path, changesByAuthor: summary.changesByAuthor, fieldsAdded: summary.fieldsAdded))
            overlaps += document.textOverlaps(of: summary)
        }
        let after = document.notebook
        return MergeReport(documentID: document.id, mine: base.path, output: output, dryRun: dryRun, inputs: inputs,
                           diff: NotebookDiff(from: before, to: after), notebook: after, conflicts: document.conflicts,
                           overlaps: overlaps)
    }
}
