import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension PNMerge {
    /// `pnmerge git-driver BASE OURS THEIRS [PATH]`: git's merge driver for `.peernote` files (`%O %A %B %P`).
    struct GitDriver: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "git-driver",
            abstract: "Merge driver for git: merge THEIRS into OURS.",
            discussion: """
            Git runs it as 'pnmerge git-driver %O %A %B %P' for paths marked \
            'merge=peernote' in .gitattributes ('pnmerge git-setup' does that). Every change \
            of THEIRS that OURS lacks is added and the result is written atomically into \
            OURS, as an appended block when OURS already holds the older changes; the exit \
            status is 0 and git records the merge. BASE is not needed (both sides carry \
            their whole history) and may be empty or missing, as in an add/add merge. \
            Conflicting values (two titles, say) are kept in the notebook as conflicts, as \
            'pnmerge merge' does; they are not a git conflict. Those OURS did not have (this \
            merge made them, or THEIRS had them) are listed on standard error; those OURS \
            already had are counted on one line.

            When the sides cannot be merged (different documents created at one path on two \
            branches, or a damaged side), OURS is left byte-identical, one line naming PATH \
            (or OURS without PATH) explains why on standard error, and the exit status is 1, \
            so git marks the path as conflicted. No lock file is created: git owns the \
            temporary files it passes.
            """
        )

        @Argument(help: ArgumentHelp("The common ancestor (%O); unused, may be empty or missing.", valueName: "base"))
        var base: String

        @Argument(help: ArgumentHelp("Our version (%A); the merged result replaces it.", valueName: "ours"))
        var ours: String

        @Argument(help: ArgumentHelp("Their version (%B).", valueName: "theirs"))
        var theirs: String

        @Argument(help: ArgumentHelp("The path in the repository (%P), used in messages.", valueName: "path"))
        var path: String?

        func run() throws {
            let name = path ?? ours
            let console = Console.current
            do {
                let report = try GitMergeDriver.merge(ours: ours, theirs: theirs, name: name)
                // Conflicts are named when this merge brought something (not on every no-op merge):
                // those OURS lacked (made here, or THEIRS had them) in full, those OURS already had
                // (committed before) counted.
                let conflicts = report.newConflicts, earlier = report.earlierConflicts.count
                let see = "(see: pnmerge show \(DisplayText.oneLine(ShellQuote.word(name))))"
                if !report.upToDate && !conflicts.isEmpty {
                    let style = RenderStyle(color: false, timeZone: console.timeZone)
                    var lines = ["pnmerge: \(Inputs.displayName(name)): merged; \(Text.count(conflicts.count, "conflict")) kept in the notebook \(see):"]
                    lines += conflicts.map { "  " + ConflictRendering.line($0, in: report.notebook, style: style) }
                    console.writeError(lines.joined(separator: "\n") + "\n")
                }
                if !report.upToDate && earlier > 0 {
                    console.writeError("pnmerge: \(Inputs.displayName(name)): \(Text.count(earlier, "conflict")) from before this merge \(earlier == 1 ? "is" : "are") still open \(see)\n")
                }
                if !report.upToDate && !report.overlaps.isEmpty {
                    var lines = ["pnmerge: \(Inputs.displayName(name)): both sides edited \(Text.count(report.overlaps.count, "place")) in note bodies; every edit is kept, check that they read as meant:"]
                    lines += report.overlaps.map { "  " + MergeReport.line($0) }
                    console.writeError(lines.joined(separator: "\n") + "\n")
                }
            } catch {
                throw CLIFailure(.conflict, "\(error.message); left our version of \(name) as it was, for git to mark as a conflict")
            }
        }
    }
}

/// The merge git asks for: OURS and THEIRS are git's temporary copies, named in messages by the tracked path.
enum GitMergeDriver {
    /// Merges THEIRS into OURS and writes OURS (atomically, appended) unless it already has every change.
    /// Any failure leaves OURS untouched.
    static func merge(ours: String, theirs: String, name: String) throws(CLIFailure) -> MergeReport {
        let loaded = try Inputs.loadAll([ours, theirs], labels: ["\(name) (ours)", "\(name) (theirs)"])
        let mine = loaded[0], other = loaded[1]
        // The merge checks the shared history (once) and refuses unrelated copies (the driver
        // then exits 1, for git to mark the path as conflicted).
        // (The places where both sides edited one passage are found while the result is saved.)
        // Built from the copy with the longer history; saved as OURS followed by the block OURS lacks.
        var merged = try MergeOperation.combine(mine, [other], output: ours, dryRun: false, appendingToMine: true, nothingWrittenNote: false)
        guard !merged.report.upToDate else { return merged.finished() }
        let document = merged.document
        let bytes = merged.finishing { document.save(.incremental) }
        var report = merged.report
        // No FileLock here: git owns OURS (a temporary file in the work tree) and runs one driver per path.
        do { try FileStore.writeAtomically(bytes, to: ours) } catch { throw CLIFailure(writing: error) }
        report.bytesWritten = bytes.count
        return report
    }
}
