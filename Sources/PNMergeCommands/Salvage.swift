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
    /// `pnmerge salvage DAMAGED -o OUT [--json]`.
    struct Salvage: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "salvage",
            abstract: "Recover every intact change of a damaged file into a new file.",
            discussion: """
            Reads DAMAGED block by block, resynchronising after damage on the block magic bytes. \
            Only blocks whose checksum and contents are intact are used; a damaged block is \
            dropped whole, even if part of it still reads. Changes whose history is incomplete \
            (they depend on a lost change, or follow a lost change of the same replica) are \
            dropped too. The recovered changes are verified like any document and written to \
            OUT, which must not exist ('-o -' writes to standard output and the report to \
            standard error). DAMAGED is never modified.

            The report lists every stretch of the file (kept blocks and damaged bytes, with \
            offsets and the reason), how many changes were recovered and lost and by whom, and \
            the recovered notebook. An intact file is copied unchanged. When nothing can be \
            recovered (no intact base block), the exit status is 65 and OUT is not written.
            """
        )

        @Argument(help: ArgumentHelp("The damaged document ('-' for standard input).", valueName: "damaged"))
        var damaged: String

        @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the recovered document (must not exist; '-' for standard output).", valueName: "out"))
        var output: String

        @OptionGroup var format: JSONOption

        func run() throws {
            let report = try SalvageOperation.perform(input: damaged, output: output)
            let toStdout = output != "-"
            let style = toStdout ? RenderStyle.current : RenderStyle(color: false, timeZone: Console.current.timeZone)
            let text = format.json ? report.json.rendered : report.text(style: style)
            if toStdout { try Console.current.emit(text) } else { Console.current.writeError(text) }
        }
    }
}

/// Salvage apart from argument parsing: read, recover, write a new file.
enum SalvageOperation {
    static func perform(input: String, output: String) throws(CLIFailure) -> SalvageReport {
        if output == "-" { try Console.checkBinaryOutputAllowed() }
        if output != "-" && exists(output) {
            throw CLIFailure(.cannotCreate, "\(output): already exists; salvage writes a new file and never replaces one")
        }
        let bytes = try Inputs.readBytes(input)
        let result: SalvageResult
        do { result = try Document.salvage(bytes) } catch {
            throw CLIFailure(.invalidInput, "\(Inputs.displayName(input)): \(error)")
        }
        if output == "-" {
            try Console.current.writeBytes(result.bytes)
        } else {
            try createExclusively(result.bytes, at: output, permissionsLike: input == "-" ? nil : input)
        }
        return SalvageReport(file: input, output: output, fileSize: bytes.count, result: result)
    }

    /// Whether anything (even a dangling symbolic link) is at `path`.
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Writes `bytes` to a new file at `path` (`FileStore.create`: written and synced under a
    /// temporary name, then hard-linked into place, which fails if anything appeared at `path`
    /// meanwhile, so no race can make salvage replace a file; a temporary left by a killed run
    /// is one `FileStore` cleans up).
    static func createExclusively(_ bytes: [UInt8], at path: String, permissionsLike source: String? = nil) throws(CLIFailure) {
        do { try FileStore.create(bytes, at: path, permissionsLike: source) } catch {
            if exists(path) { throw CLIFailure(.cannotCreate, "\(path): already exists; salvage writes a new file and never replaces one") }
            throw CLIFailure(.ioError, "\(path): \(error.message)")
        }
    }
}

/// What `salvage` prints: the stretches of the file, what was recovered, what was lost.
struct SalvageReport {
    var file: String
    var output: String
    var fileSize: Int
    var result: SalvageResult

    /// The authors of the recovered changes, in replica order, without repeats.
    var recoveredAuthors: [String] {
        var out: [String] = []
        for r in result.document.replicas { for a in r.authors where !out.containsScalars(of: a) { out.append(a) } }
        return out
    }

    /// Dropped changes per author, in order of first appearance.
    var droppedByAuthor: [(author: String, count: Int)] {
        var out: [(author: String, count: Int)] = []
        for d in result.droppedChanges {
            if let i = out.firstIndex(where: { $0.author.hasSameScalars(as: d.author) }) { out[i].count += 1 } else { out.append((d.author, 1)) }
        }
        return out
    }

    /// Replicas that lost changes (dropped ones; those in damaged bytes are not known), with their authors.
    var droppedReplicas: [(replica: ReplicaID, authors: [String])] {
        var out: [(replica: ReplicaID, authors: [String])] = []
        for d in result.droppedChanges {
            if let i = out.firstIndex(where: { $0.replica == d.id.replica }) {
                if !out[i].authors.containsScalars(of: d.author) { out[i].authors.append(d.author) }
            } else {
                out.append((d.id.replica, [d.author]))
            }
        }
        return out
    }

    /// `kept` (every change recovered), `lost` (damaged, or no change recovered) or `part`.
    static func label(_ region: SalvageRegion) -> String {
        if region.kind == .damaged || (region.keptChanges == 0 && region.changeCount != 0) { return "lost" }
        return region.keptChanges == region.changeCount ? "kept" : "part"
    }

    /// Regions with runs of append blocks that fared alike (same label and problem) put together.
    static func groups(_ regions: [SalvageRegion]) -> [[SalvageRegion]] {
        var out: [[SalvageRegion]] = []
        for region in regions {
            if let last = out.last?.last, last.kind == .appendBlock, region.kind == .appendBlock,
               label(last) == label(region), last.problem == region.problem, last.offset + last.length == region.offset {
                out[out.count - 1].append(region)
            } else {
                out.append([region])
            }
        }
        return out
    }

    var lostLine: String {
        let r = result
        var parts: [String] = []
        if r.damagedBytes > 0 {
            let count = r.unreadableChangesExact
                ? Text.count(r.unreadableChanges, "change")
                : (r.unreadableChanges > 0 ? "at least \(Text.count(r.unreadableChanges, "change"))" : "an unknown number of changes")
            parts.append("\(count) in \(Text.count(r.damagedBytes, "damaged byte")) (authors unknown)"
                         + (r.unreadableChangesExact ? "" : "; the file ends inside damaged bytes, so what they held cannot be counted"))
        }
        if !r.droppedChanges.isEmpty {
            parts.append("\(Text.count(r.droppedChanges.count, "intact change")) dropped because their history is incomplete (\(Text.authors(droppedByAuthor)))")
        }
        return parts.isEmpty ? "nothing" : parts.joined(separator: "; ")
    }

    func text(style: RenderStyle) -> String {
        let r = result
        let name = Inputs.displayName(file)
        let target = output == "-" ? "standard output" : Inputs.displayName(output)
        let notebook = r.document.notebook
        let summary = "\(Text.quoted(notebook.title)): \(Text.count(notebook.notes.count, "note")) (\(r.document.deletedNotes.count) deleted), \(Text.count(notebook.conflicts.count, "conflict"))"
        if r.isIntact {
            return "\(name) is intact (\(Text.count(fileSize, "byte")), \(Text.count(r.document.changeCount, "change"))): nothing was lost; copied it unchanged to \(target)\n"
                + "notebook \(summary)\n"
        }
        var lines = ["salvage of \(name) (\(Text.count(fileSize, "byte")))"]
        for group in Self.groups(r.regions) {
            let first = group[0]
            let end = group[group.count - 1].offset + group[group.count - 1].length
            let range = end > first.offset ? "bytes \(first.offset)-\(end - 1)" : "offset \(first.offset)"
            let label = Self.label(first)
            let kind = label == "lost" ? style.paint(label, .red) : style.paint(label, label == "kept" ? .green : .yellow)
            var what = group.count == 1 ? first.kind.rawValue : "\(group.count) \(first.kind.rawValue)s"
            if first.changeCount != nil {
                let n = group.reduce(0) { $0 + ($1.changeCount ?? 0) }
                what += ", \(group.reduce(0) { $0 + $1.keptChanges }) of \(Text.count(n, "change")) recovered"
            }
            if let p = first.problem { what += ": \(p)" }
            lines.append("  \(kind)  \(range.padded(toLength: 22)) \(what)")
        }
        let authors = recoveredAuthors.map(Text.author).joined(separator: ", ")
        lines.append("recovered: \(Text.count(r.document.changeCount, "change"))" + (authors.isEmpty ? "" : " by \(authors)"))
        lines.append("lost: \(lostLine)")
        for d in r.droppedChanges {
            let when = style.dateTime(d.time)
            lines.append("  dropped \(style.paint(d.id.description, .yellow)) by \(Text.author(d.author)), \(when.isEmpty ? "time \(Int64(d.time.timeIntervalSince1970)) s" : when)"
                         + (d.message.isEmpty ? "" : " \(Text.quoted(d.message))") + ": \(d.reason)")
        }
        let replicas = droppedReplicas
        if !replicas.isEmpty {
            lines.append("replicas that lost changes: " + replicas.map { "\($0.replica.short) (\($0.authors.map(Text.author).joined(separator: ", ")))" }.joined(separator: ", "))
        }
        lines.append("wrote \(target): \(Text.count(r.bytes.count, "byte")), notebook \(summary)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The schema is documented in man/pnmerge.1 (SALVAGE REPORT).
    var json: JSONValue {
        let r = result
        let notebook = r.document.notebook
        return .object([
            ("file", .string(file)),
            ("output", .string(output)),
            ("fileSize", .int(fileSize)),
            ("intact", .bool(r.isIntact)),
            ("regions", .array(r.regions.map { region in
                .object([("offset", .int(region.offset)), ("length", .int(region.length)), ("kind", .string(region.kind.rawValue)),
                         ("changes", region.changeCount.map(JSONValue.int) ?? .null), ("kept", .int(region.keptChanges)),
                         ("problem", .optional(region.problem))])
            })),
            ("recovered", .object([("changes", .int(r.document.changeCount)), ("authors", .strings(recoveredAuthors))])),
            ("lost", .object([
                ("damagedBytes", .int(r.damagedBytes)),
                ("unreadableChanges", .int(r.unreadableChanges)),
                ("unreadableChangesExact", .bool(r.unreadableChangesExact)),
                ("dropped", .array(r.droppedChanges.map { d in
                    .object([("id", .string(d.id.fullDescription)), ("author", .string(d.author)), ("time", .string(Text.iso(d.time))),
                             ("message", .string(d.message)), ("reason", .string(d.reason))])
                })),
                ("replicas", .array(droppedReplicas.map { .object([("id", .string($0.replica.description)), ("authors", .strings($0.authors))]) })),
            ])),
            ("notebook", .object([("title", .string(notebook.title)), ("notes", .int(notebook.notes.count)),
                                  ("deletedNotes", .int(r.document.deletedNotes.count)), ("conflicts", .int(notebook.conflicts.count))])),
            ("bytesWritten", .int(r.bytes.count)),
        ])
    }
}
