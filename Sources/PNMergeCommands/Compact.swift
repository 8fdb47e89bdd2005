import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension PNMerge {
    /// `pnmerge compact FILE...`: rewrite files in canonical compact form.
    struct Compact: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "compact",
            abstract: "Rewrite notebooks in canonical compact form.",
            discussion: """
            Saves that only add changes append a block to the file (so sync tools and git \
            move little); 'compact' rewrites each FILE as one block in canonical form, the \
            same bytes for every copy holding the same changes. Nothing is lost: the history \
            is kept whole. The file is replaced atomically under its lock and its size \
            before and after is reported; a file that is already compact is not touched.

            Every FILE is read and verified first; a damaged or unreadable one is reported \
            and left alone, and the others are still compacted (exit status 65 or 66). \
            --json prints an array with an object for every FILE, in order, a failed one \
            included (its error, as validate --json reports files).

            A FILE that is a notebook folder gets one chunk of this device holding every \
            change; this device's chunks it holds are removed once it has been in the folder \
            for --grace seconds (run again after that). Other devices' chunks are never \
            removed (NOTEBOOK FOLDERS in peernote(5)).
            """
        )

        @Argument(help: ArgumentHelp("The files to rewrite.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var files: [String]

        @Flag(help: "Print the report as JSON.")
        var json = false

        @Option(help: ArgumentHelp("For a notebook folder: remove the chunks a compacted chunk holds only once it has been in the folder this many seconds.", valueName: "SECONDS"))
        var grace: Double = NotebookFolder.defaultGrace

        func run() throws {
            try FileNameArgument.require(files)
            if files.contains("-") { throw CLIFailure(.usage, "cannot rewrite standard input; name a .peernote file") }
            var failures: [CLIFailure] = []
            var reports: [JSONValue] = []
            guard grace >= 0, grace.isFinite else { throw CLIFailure(.usage, "--grace must be a number of seconds, 0 or more") }
            // Several files: each folder is read once for what killed writers left, not once per file.
            let besideLeftovers = files.count > 1 ? FileStore.pathsWithLeftovers(files) : nil
            for file in files {
                let result: CompactOperation.Result
                do { result = try CompactOperation.perform(file, grace: grace, cleaningUp: besideLeftovers.map { $0.contains(file) } ?? true) } catch {
                    Console.current.writeError(errorLine(error.message))
                    failures.append(error)
                    reports.append(.object([("file", .string(file)), ("written", .bool(false)), ("bytesBefore", .null), ("blocksBefore", .null),
                                            ("bytesAfter", .null), ("changedMeanwhile", .bool(false)), ("error", .string(error.message))]))
                    continue
                }
                if json { reports.append(result.json) } else { try Console.current.emit(result.line + "\n") }
            }
            if json { try Console.current.emit(JSONValue.array(reports).rendered) }
            let statuses = failures.map(\.status)
            for status in [ExitStatus.ioError, .invalidInput, .noInput] where statuses.contains(status) { throw status.exitCode }
        }
    }
}

/// Rewriting one file in compact form.
enum CompactOperation {
    /// What compacting one file did.
    struct Result {
        var file: String
        var before: Int
        var blocksBefore: Int
        var after: Int
        var written: Bool
        /// Whether another program (a sync client) wrote the file while this ran; what it then
        /// held was merged in before writing.
        var changedMeanwhile = false
        /// For a notebook folder: what its compaction did (`before`/`after` then count the bytes of
        /// its readable chunks, `blocksBefore` its chunks).
        var folder: NotebookFolder.Compaction?

        /// `{"file", "written", "bytesBefore", "blocksBefore", "bytesAfter", "changedMeanwhile", "error": null}`.
        var json: JSONValue {
            .object([("file", .string(file)), ("written", .bool(written)), ("bytesBefore", .int(before)), ("blocksBefore", .int(blocksBefore)),
                     ("bytesAfter", .int(after)), ("changedMeanwhile", .bool(changedMeanwhile)), ("error", .null)])
        }

        var line: String {
            if let folder {
                let wrote = folder.wroteRoot ? "wrote \(folder.root)" : "\(folder.root) there already"
                let waiting = folder.waiting > 0 ? "; \(Text.count(folder.waiting, "chunk")) left until the compacted chunk is older than the grace period (run again later)" : ""
                return "\(Inputs.displayName(file)): \(Text.count(blocksBefore, "chunk")), \(Text.count(before, "byte")); \(wrote), removed \(Text.count(folder.removed.count, "chunk"))\(waiting)"
            }
            let blocks = Text.count(blocksBefore, "block")
            let meanwhile = changedMeanwhile ? "; it changed while this ran (another program wrote it), and what it held then was merged in too" : ""
            return written
                ? "\(Inputs.displayName(file)): \(Text.count(before, "byte")) (\(blocks)) → \(Text.count(after, "byte")) (1 block)" + meanwhile
                : "\(Inputs.displayName(file)): already compact (\(Text.count(before, "byte")))"
        }
    }

    /// `cleaningUp: false` when the caller has just seen nothing beside `file` that a killed
    /// writer leaves (`FileStore.pathsWithLeftovers`): its lock is then taken without looking again.
    static func perform(_ file: String, grace: Double = NotebookFolder.defaultGrace, cleaningUp: Bool = true) throws(CLIFailure) -> Result {
        if NotebookFolder.isFolder(file) { return try performFolder(file, grace: grace, cleaningUp: cleaningUp) }
        let target = Inputs.writeTarget(file)
        // Not kept to the process's end (as `Inputs.load` keeps a document): each file's
        // notebook goes before the next file is read, so that many files cost one's memory.
        var input = try Inputs.loadAll([file], regularOnly: [file])[0]
        var compact = input.document.save(.compact)
        if compact == input.bytes { return try result(file, input.bytes, compact, written: false) }

        // Under the lock, read again: a change that arrived meanwhile is kept.
        let lock: FileLock
        do { lock = try Inputs.lock(target, cleaningUp: cleaningUp) } catch { throw CLIFailure(writing: error) }
        return try withExtendedLifetime(lock) { () throws(CLIFailure) -> Result in
            let now = try Inputs.readBytes(file, pipes: false)
            if now != input.bytes {
                input = LoadedDocument(path: file, bytes: now, document: try Inputs.parse(now, from: file))
                compact = input.document.save(.compact)
                if compact == now { return try result(file, now, compact, written: false) }
            }
            // A sync client that replaced the file meanwhile is not overwritten: its copy is merged in.
            let outcome: WriteOutcome
            do throws(WriteError) {
                outcome = try input.document.write(over: target, loaded: input.bytes, mode: .compact, saved: compact)
            } catch {
                throw CLIFailure(writing: error)
            }
            var r = try result(file, input.bytes, compact, written: true, size: outcome.byteCount)
            r.changedMeanwhile = outcome.mergedMeanwhile > 0
            return r
        }
    }

    /// Compacts a notebook folder (`NotebookFolder.compact`) under its lock.
    static func performFolder(_ file: String, grace: Double, cleaningUp: Bool = true) throws(CLIFailure) -> Result {
        let lock: FileLock
        do { lock = try Inputs.lock(Inputs.writeTarget(file), cleaningUp: cleaningUp) } catch { throw CLIFailure(writing: error) }
        return try withExtendedLifetime(lock) { () throws(CLIFailure) -> Result in
            let before = try Inputs.readFolder(file)
            let done: NotebookFolder.Compaction
            do throws(FileError) { done = try NotebookFolder(file).compact(grace: grace) } catch { throw CLIFailure(writing: error) }
            var r = Result(file: file, before: before.byteCount, blocksBefore: before.chunks.count, after: 0,
                           written: done.wroteRoot || !done.removed.isEmpty)
            r.folder = done
            let after = (try? NotebookFolder(file).read()).map(\.byteCount) ?? 0
            r.after = after
            return r
        }
    }

    private static func result(_ file: String, _ before: [UInt8], _ after: [UInt8], written: Bool, size: Int? = nil) throws(CLIFailure) -> Result {
        let blocks: Int
        do { blocks = try Document.blockCount(before) } catch {
            throw CLIFailure(.invalidInput, "\(file): \(error)")
        }
        return Result(file: file, before: before.count, blocksBefore: blocks, after: size ?? after.count, written: written)
    }
}
