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
            Git runs it as 'pnmerge git-driver %O %A %B -- %P' for paths marked \
            'merge=peernote' in .gitattributes ('pnmerge git-setup' does that). Every change \
            of THEIRS that OURS lacks is added and the result is written atomically into \
            OURS, as an appended block when OURS already holds the older changes; the exit \
            status is 0 and git records the merge. BASE is not needed (both sides carry \
            their whole history) and may be empty or missing, as in an add/add merge. \
            Conflicting values (two titles, say) are kept in the notebook as conflicts, as \
            'pnmerge merge' does; they are not a git conflict. Those OURS did not have (this \
            merge made them, or THEIRS had them) are listed on standard error; those OURS \
            already had are counted on one line.

            A damaged side (a commit of a file cut short or corrupted) is not refused whole: \
            its intact changes are recovered as 'pnmerge salvage' would and merged, the result \
            is written into OURS, a line per damaged side says what was wrong and how many \
            changes were kept, and the exit status is 1, so git marks the path as conflicted \
            with that result in the work tree ('git add' keeps it; 'git checkout --ours' \
            would drop what the other side's intact changes brought).

            When the sides cannot be merged (different documents created at one path on two \
            branches, or a side with nothing to recover), OURS is left byte-identical, one line \
            naming PATH (or OURS without PATH) explains why on standard error, and the exit \
            status is 1, so git marks the path as conflicted. No lock file is created: git owns \
            the temporary files it passes.
            """
        )

        @Argument(help: ArgumentHelp("The common ancestor (%O); unused, may be empty or missing.", valueName: "BASE"), completion: .file())
        var base: String

        @Argument(help: ArgumentHelp("Our version (%A); the merged result replaces it.", valueName: "OURS"), completion: .file())
        var ours: String

        @Argument(help: ArgumentHelp("Their version (%B).", valueName: "THEIRS"), completion: .file())
        var theirs: String

        @Argument(help: ArgumentHelp("The path in the repository (%P), used in messages.", valueName: "PATH"))
        var path: String?

        func run() throws {
            let name = path ?? ours
            let console = Console.current
            let outcome: GitMergeDriver.Outcome
            // Without PATH, THEIRS is named by its own file (OURS names the path).
            do { outcome = try GitMergeDriver.merge(ours: ours, theirs: theirs, name: name, theirsName: path == nil ? theirs : nil) } catch {
                throw CLIFailure(.conflict, "\(error.message); left our version of \(name) as it was, for git to mark as a conflict")
            }
            let report = outcome.report
            // Conflicts are named when this merge brought something (not on every no-op merge):
            // those OURS lacked (made here, or THEIRS had them) in full, those OURS already had
            // (committed before) counted.
            let conflicts = report.newConflicts, earlier = report.earlierConflicts.count
            let see = "(see: pnmerge show \(DisplayText.oneLine(ShellQuote.path(name))))"
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
            // A damaged side: what could be read is merged and written, and git is told of a
            // conflict, so that someone looks before the merge is committed.
            guard !outcome.salvaged.isEmpty else { return }
            for side in outcome.salvaged { console.writeError("pnmerge: \(side.line)\n") }
            let shown = DisplayText.oneLine(ShellQuote.path(name))
            throw CLIFailure(.conflict, "\(Inputs.displayName(name)): the merge of what could be read is in the work tree, for git to mark as a conflict: "
                             + "check it (pnmerge show \(shown)), then 'git add \(shown)' to keep it")
        }
    }
}

/// The merge git asks for: OURS and THEIRS are git's temporary copies, named in messages by the tracked path.
enum GitMergeDriver {
    /// A side that did not load and whose intact changes were recovered (`Document.salvage`).
    struct SalvagedSide {
        /// The side as messages name it (`PATH (theirs)`), and whether it is OURS.
        var label: String, isOurs: Bool
        /// Why it did not load (the loader's message, with the offset where known).
        var problem: String
        /// The changes recovered, and those known lost (at least that many when not `exact`).
        var kept: Int, lost: Int, exact: Bool
        /// THEIRS: how many of the recovered changes OURS lacked (the merge brought them).
        var brought = 0

        /// The line that reports it (after `pnmerge: `).
        var line: String {
            let lostText = switch (lost, exact) {
            case (0, true): "no change was lost"
            case (0, false): "what the damaged bytes held is lost"
            case (_, true): "\(Text.count(lost, "change")) \(lost == 1 ? "is" : "are") lost"
            case (_, false): "at least \(Text.count(lost, "change")) are lost"
            }
            let kept = Text.count(self.kept, "intact change")
            let done = isOurs ? "kept its \(kept)"
                : brought == 0 ? "recovered its \(kept), none of them new to ours" : "recovered its \(kept), \(brought) of them new to ours and merged"
            return "\(label): \(problem); \(done) (\(lostText); 'pnmerge salvage' on that commit's file, from 'git show COMMIT:PATH', says more)"
        }
    }

    /// What the driver did: the merge's report, and the damaged sides it recovered.
    struct Outcome {
        var report: MergeReport
        var salvaged: [SalvagedSide]
    }

    /// Merges THEIRS into OURS and writes OURS (atomically, appended) unless it already has every
    /// change. A side that does not load as a document (`invalidDocument`: damaged bytes) is
    /// salvaged and its intact changes are merged (`Outcome.salvaged`; OURS is then written,
    /// compact when OURS itself was the damaged side). Any other failure leaves OURS untouched.
    /// `theirsName` names THEIRS in messages when given (else `name` does).
    static func merge(ours: String, theirs: String, name: String, theirsName: String? = nil) throws(CLIFailure) -> Outcome {
        let paths = [ours, theirs], labels = ["\(name) (ours)", "\(theirsName ?? name) (theirs)"]
        var bytes: [[UInt8]] = []
        for (path, label) in zip(paths, labels) { bytes.append(try Inputs.readBytes(path, label: label)) }
        var loaded: [LoadedDocument] = []
        var salvaged: [SalvagedSide] = []
        // THEIRS is read first and, once verified, held as its history alone unless its file is
        // the larger (the result may then be built from it), so that OURS is read beside that
        // history rather than beside a second notebook; of that history, only what comes after
        // the blocks both files start with (both sides appended to the file they share).
        // Failures are reported OURS first.
        var theirsSource: MergeSource?
        let theirsResult = Result { () throws(PeerNoteError) in try Document.load(bytes[1]) }.map { document -> Document? in
            guard !LoadedTheirs.keepsWhole(theirsBytes: bytes[1].count, mineBytes: bytes[0].count) else { return document }
            theirsSource = MergeSource.keepingHistory(of: document, sharingFileWith: bytes[0])
            return nil
        }
        let oursResult = Result { () throws(PeerNoteError) in try Document.load(bytes[0]) }
        for (i, result) in [oursResult.map(Optional.some), theirsResult].enumerated() {
            switch result {
            case .success(let document?):
                loaded.append(LoadedDocument(path: paths[i], bytes: bytes[i], document: document, label: labels[i]))
            case .success(nil):
                break
            case .failure(let error):
                // Only damage is salvaged: a newer format version, say, is refused as before.
                guard case .invalidDocument = error, let rescue = try? Document.salvage(bytes[i]), !rescue.isIntact else {
                    throw CLIFailure(.invalidInput, "\(labels[i]): \(error)")
                }
                let lost = rescue.unreadableChanges + rescue.droppedChanges.count + rescue.leftOutChanges
                salvaged.append(SalvagedSide(label: labels[i], isOurs: i == 0, problem: "\(error)", kept: rescue.document.changeCount,
                                             lost: lost, exact: rescue.unreadableChangesExact))
                loaded.append(LoadedDocument(path: paths[i], bytes: rescue.bytes, document: rescue.document, label: labels[i]))
            }
        }
        let mine = loaded[0]
        // A salvaged OURS was not read from the bytes THEIRS was trimmed against: THEIRS whole, then.
        if let source = theirsSource {
            do throws(PeerNoteError) { theirsSource = try source.takenWhole(for: mine.document) } catch {
                throw CLIFailure(.invalidInput, "\(labels[1]): \(error)")
            }
        }
        let other = theirsSource.map { LoadedTheirs(path: theirs, copy: .history($0), label: labels[1]) } ?? LoadedTheirs(loaded[1])
        let oursDamaged = salvaged.contains(where: \.isOurs)
        // The merge checks the shared history (once) and refuses unrelated copies (the driver
        // then exits 1, for git to mark the path as conflicted).
        // (The places where both sides edited one passage are found while the result is saved.)
        // Built from OURS, or from THEIRS when held whole with the longer history; saved as OURS
        // followed by the block OURS lacks.
        // (A salvaged OURS is written whole even when THEIRS brings nothing: its damaged bytes go.)
        var merged = try MergeOperation.combine(mine, [other], output: ours, dryRun: false, appendingToMine: !oursDamaged, nothingWrittenNote: false)
        for i in salvaged.indices where !salvaged[i].isOurs { salvaged[i].brought = merged.report.inputs.first?.changes ?? 0 }
        guard !merged.report.upToDate || oursDamaged else { return Outcome(report: merged.finished(), salvaged: salvaged) }
        let document = merged.document
        let result = merged.finishing { document.save(oursDamaged ? .compact : .incremental) }
        var report = merged.report
        // No FileLock here: git owns OURS (a temporary file in the work tree) and runs one driver
        // per path. Through the one write loop all the same, so that every write of a notebook
        // behaves alike (git's file is not expected to change meanwhile).
        do throws(WriteError) {
            try document.write(over: ours, loaded: bytes[0], mode: oursDamaged ? .compact : .incremental, saved: result)
        } catch { throw CLIFailure(writing: error) }
        report.bytesWritten = result.count
        return Outcome(report: report, salvaged: salvaged)
    }
}
