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
            standard error). DAMAGED is never modified. A second base block starts another \
            notebook (or another copy of this one) glued on after the first: it is left out \
            with the blocks after it (its changes counted as lost unless the output holds \
            them), and the report says which bytes hold it and how to get it back.

            The report lists every stretch of the file (kept blocks and damaged bytes, with \
            offsets and the reason), how many changes were recovered and lost and by whom, and \
            the recovered notebook. An intact file is copied unchanged. When nothing can be \
            recovered (no intact base block), the exit status is 65 and OUT is not written.
            """
        )

        @Argument(help: ArgumentHelp("The damaged document ('-' for standard input).", valueName: "DAMAGED"), completion: .file(extensions: ["peernote"]))
        var damaged: String

        @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the recovered document (must not exist; '-' for standard output).", valueName: "OUT"), completion: .file(extensions: ["peernote"]))
        var output: String

        @OptionGroup var format: JSONOption

        func run() throws {
            try FileNameArgument.require([damaged], output: output)
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
        // A notebook folder: the chain that ends at its first damaged chunk; a chunk of one
        // (FOLDER/NAME.pnchunk): the chain that ends at it. Merge the result into the folder.
        var damagedChain: [UInt8]?
        if NotebookFolder.isFolder(input) {
            let reading = try Inputs.readFolder(input)
            damagedChain = reading.damaged.first.flatMap(reading.chainToSalvage)
        } else if input.hasSuffix(NotebookFolder.chunkSuffix), let slash = input.lastIndex(of: "/"),
                  case let folder = String(input[..<slash]), NotebookFolder.isFolder(folder) {
            let reading = try Inputs.readFolder(folder)
            let name = String(input[input.index(after: slash)...])
            guard let chain = reading.chainToSalvage(name) else {
                throw CLIFailure(.invalidInput, "\(Inputs.displayName(input)): not a chunk of \(Inputs.displayName(folder)) whose chunks above it are intact; nothing to salvage it with")
            }
            damagedChain = chain
        }
        let bytes: [UInt8]
        if let damagedChain { bytes = damagedChain } else { bytes = try Inputs.readBytes(input) }
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

    /// `kept` (every change recovered), `lost` (damaged, or no change recovered), `part`, `copy`
    /// (left out, but every change of it is in the output anyway) or `junk` (damaged bytes that
    /// cannot have held a change).
    static func label(_ region: SalvageRegion) -> String {
        if region.kind == .damaged {
            if let n = region.changeCount, n > 0, region.alreadyRecovered == n { return "copy" }
            return region.changeCount == 0 ? "junk" : "lost"
        }
        if region.keptChanges == 0, let n = region.changeCount, n > 0, region.alreadyRecovered == n { return "copy" }
        if region.keptChanges == 0 && region.changeCount != 0 { return "lost" }
        return region.keptChanges == region.changeCount ? "kept" : "part"
    }

    /// Regions with runs of append blocks that fared alike (same label, and the same problem or
    /// both changes dropped for an incomplete history) put together.
    static func groups(_ regions: [SalvageRegion]) -> [[SalvageRegion]] {
        var out: [[SalvageRegion]] = []
        for region in regions {
            if let last = out.last?.last, last.kind == .appendBlock, region.kind == .appendBlock,
               label(last) == label(region), last.problem == region.problem || (last.droppedChanges > 0 && region.droppedChanges > 0),
               last.offset + last.length == region.offset {
                out[out.count - 1].append(region)
            } else {
                out.append([region])
            }
        }
        return out
    }

    /// What a group of regions says went wrong: the counts of the whole group for dropped changes.
    static func problem(of group: [SalvageRegion]) -> String? {
        let dropped = group.reduce(0) { $0 + $1.droppedChanges }
        let already = group.reduce(0) { $0 + $1.alreadyRecovered }
        if group.count > 1, dropped == 0, already > 0, let p = group[0].problem {
            // The first block's own "already in the output" is replaced by the whole run's.
            let own = SalvageRegion.alreadyText(group[0].alreadyRecovered, of: group[0].changeCount ?? 0)
            let stem = p.hasSuffix(own) ? String(p.dropLast(own.count)) : p
            return stem + SalvageRegion.alreadyText(already, of: group.reduce(0) { $0 + ($1.changeCount ?? 0) }, blocks: group.count)
        }
        guard group.count > 1, dropped > 0 else { return group[0].problem }
        return SalvageRegion.droppedProblem(dropped, of: group.reduce(0) { $0 + ($1.changeCount ?? 0) }, blocks: group.count)
    }

    /// `bytes 311-621`.
    static func bytes(_ range: Range<Int>) -> String { range.count > 0 ? "bytes \(range.lowerBound)-\(range.upperBound - 1)" : "offset \(range.lowerBound)" }

    /// A left-out part in a few words, e.g. `of another notebook ("Home", id …) at bytes 311-621`.
    static func describe(_ part: SalvageLeftOut) -> String {
        let at = bytes(part.range)
        switch part.kind {
        case .otherDocument:
            let id = part.documentID.map { "id \($0.uuidString.lowercased())" } ?? "id unknown"
            return "of another notebook (\(part.onItsOwn.map { "\(Text.quoted($0.title)), " } ?? "")\(id)) at \(at)"
        case .copy: return "of a second copy of this notebook at \(at)"
        case .orphanAppends: return "in append blocks at \(at) whose base block is lost (their history is lost)"
        case .unplacedAppends: return "in append blocks at \(at) whose rows overlap the blocks before them"
        }
    }

    /// Authors of the changes of a left-out part that the output does not hold, in order of first appearance.
    static func missingAuthors(_ part: SalvageLeftOut) -> [(author: String, count: Int)] {
        var out: [(author: String, count: Int)] = []
        for c in part.missing {
            if let i = out.firstIndex(where: { $0.author == c.author }) { out[i].count += 1 } else { out.append((c.author, 1)) }
        }
        return out
    }

    /// Damaged bytes that cannot have held a change, described (`11 bytes of trailing data that hold no block`).
    var bytesWithoutChangesText: String? {
        let n = result.bytesWithoutChanges
        guard n > 0 else { return nil }
        let trailing = result.regions.last.map { $0.kind == .damaged && $0.changeCount == 0 && $0.length == n } ?? false
        return "\(Text.count(n, "byte")) of \(trailing ? "trailing " : "")data that \(n == 1 ? "holds" : "hold") no block"
    }

    var lostLine: String {
        let r = result
        var parts: [String] = []
        let damaged = r.damagedBytes - r.bytesWithoutChanges - r.damagedBytesOfLeftOut - r.damagedBytesAlreadyRecovered
        if damaged > 0 || r.unreadableChanges > 0 || !r.unreadableChangesExact {
            let count = r.unreadableChangesExact
                ? Text.count(r.unreadableChanges, "change")
                : (r.unreadableChanges > 0 ? "at least \(Text.count(r.unreadableChanges, "change"))" : "an unknown number of changes")
            let why = r.uncounted.map { reason -> String in
                switch reason {
                case .truncated: return "the file ends inside damaged bytes, so what they held cannot be counted"
                case .noLaterBlock: return "no later block of this notebook follows them, so what they held cannot be counted"
                case .beforeBase:
                    return "damaged bytes before the base block at offset \(r.baseOffset) held the start of the notebook the file starts with, "
                        + (r.unreadableChanges > 0 ? "whose next intact block numbers its rows from \(r.unreadableChanges)" : "and nothing tells how many changes it had")
                }
            }
            parts.append("\(count) in \(Text.count(damaged, "damaged byte"))" + (r.unreadableChangesExact && r.unreadableChanges == 0 ? "" : " (authors unknown)")
                         + why.map { "; \($0)" }.joined())
        }
        if !r.droppedChanges.isEmpty {
            let n = r.droppedChanges.count
            parts.append("\(Text.count(n, "intact change")) dropped because \(n == 1 ? "its history is" : "their history is") incomplete (\(Text.authors(droppedByAuthor)))")
        }
        for part in r.leftOut where !part.missing.isEmpty {
            parts.append("\(Text.count(part.missing.count, "intact change")) \(Self.describe(part)), left out (\(Text.authors(Self.missingAuthors(part))))")
        }
        if let junk = bytesWithoutChangesText {
            parts.append(parts.isEmpty ? "\(junk); no change lost" : junk)
        }
        return parts.isEmpty ? "nothing" : parts.joined(separator: "; ")
    }

    /// For each left-out notebook (or copy) whose changes are not in the output: where it is and how to get it back.
    var leftOutLines: [String] {
        var lines: [String] = []
        let target = Inputs.displayName(output)
        for part in result.leftOut where part.kind == .otherDocument || part.kind == .copy {
            let missing = part.missing.count
            guard missing > 0 else { continue }
            let name = "notebook-at-\(part.range.lowerBound).peernote"
            let cut: String
            if file == "-" {
                cut = "save the input to a file and cut \(Self.bytes(part.range)) out of it into \(name)"
            } else {
                cut = "tail -c +\(part.range.lowerBound + 1) \(GitSetupOperation.shellQuoted(file))"
                    + (part.range.upperBound < fileSize ? " | head -c \(part.range.count)" : "") + " > \(name)"
            }
            var line: String
            if part.kind == .otherDocument {
                line = "another notebook" + (part.onItsOwn.map { ", \(Text.quoted($0.title)) (\(Text.count($0.changes, "change")) recoverable)," } ?? "")
                    + " starts at offset \(part.range.lowerBound) (\(Self.bytes(part.range))) and is not in the output"
            } else {
                line = "a second copy of this notebook starts at offset \(part.range.lowerBound) (\(Self.bytes(part.range))); "
                    + "\(Text.count(missing, "change")) of it \(missing == 1 ? "is" : "are") not in the output"
            }
            if let alone = part.onItsOwn {
                line += "; to get \(part.kind == .copy && missing > 1 ? "them" : "it") back: \(cut)"
                // A salvaged copy is written under a new name: salvage never replaces a file.
                let recovered = alone.intact ? name : "notebook-at-\(part.range.lowerBound)-salvaged.peernote"
                if !alone.intact { line += ", then pnmerge salvage \(name) -o \(recovered)" }
                if part.kind == .copy {
                    line += output == "-"
                        ? ", then save what salvage wrote to standard output as a file and merge \(recovered) into that file with pnmerge merge"
                        : ", then pnmerge merge \(GitSetupOperation.shellQuoted(target)) \(recovered)"
                }
            } else {
                line += "; nothing can be recovered from it on its own"
            }
            lines.append(line)
        }
        return lines
    }

    /// What the file starts with, when that is not the recovered notebook's base block.
    func startLine(_ start: SalvageStart) -> String {
        let base = "the recovered notebook starts at offset \(result.baseOffset)"
        switch start {
        case .earlierCopy:
            return "the file does not start with the recovered notebook's base block: it starts with an earlier copy of this notebook whose base block is lost; \(base)"
        case .unknownNotebook:
            return "the file does not start with the recovered notebook: the base block of the notebook it starts with is lost, "
                + "and nothing tells which notebook that was, so the output may be a different notebook; \(base)"
        }
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
            let range = Self.bytes(first.offset ..< end)
            let label = Self.label(first)
            let kind = label == "lost" ? style.paint(label, .red) : style.paint(label, label == "kept" ? .green : .yellow)
            var what = group.count == 1 ? first.kind.rawValue : "\(group.count) \(first.kind.rawValue)s"
            if first.kind != .damaged, first.changeCount != nil {
                let n = group.reduce(0) { $0 + ($1.changeCount ?? 0) }
                what += ", \(group.reduce(0) { $0 + $1.keptChanges }) of \(Text.count(n, "change")) recovered"
            }
            if let p = Self.problem(of: group) { what += ": \(p)" }
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
        if let start = r.start { lines.append(startLine(start)) }
        lines += leftOutLines
        lines.append("wrote \(target): \(Text.count(r.bytes.count, "byte")), notebook \(summary)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// One left-out part in the JSON report.
    static func json(_ part: SalvageLeftOut) -> JSONValue {
        let document: JSONValue = part.documentID.map { .string($0.uuidString.lowercased()) } ?? .null
        var alone = JSONValue.null
        if let a = part.onItsOwn { alone = .object([("title", .string(a.title)), ("changes", .int(a.changes)), ("intact", .bool(a.intact))]) }
        return .object([
            ("kind", .string(part.kind.rawValue)), ("offset", .int(part.range.lowerBound)), ("length", .int(part.range.count)),
            ("document", document), ("changes", .int(part.changes.count)), ("alreadyRecovered", .int(part.changes.count - part.missing.count)),
            ("authors", DiffRendering.authorsJSON(missingAuthors(part))), ("onItsOwn", alone),
        ])
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
                         ("alreadyRecovered", .int(region.alreadyRecovered)), ("problem", .optional(region.problem))])
            })),
            ("recovered", .object([("changes", .int(r.document.changeCount)), ("authors", .strings(recoveredAuthors))])),
            ("lost", .object([
                ("damagedBytes", .int(r.damagedBytes)),
                ("unreadableChanges", .int(r.unreadableChanges)),
                ("unreadableChangesExact", .bool(r.unreadableChangesExact)),
                ("uncounted", .strings(r.uncounted.map(\.rawValue))),
                ("start", r.start.map { .string($0.rawValue) } ?? .null),
                ("baseOffset", .int(r.baseOffset)),
                ("dropped", .array(r.droppedChanges.map { d in
                    .object([("id", .string(d.id.fullDescription)), ("author", .string(d.author)), ("time", .string(Text.iso(d.time))),
                             ("message", .string(d.message)), ("reason", .string(d.reason))])
                })),
                ("replicas", .array(droppedReplicas.map { .object([("id", .string($0.replica.description)), ("authors", .strings($0.authors))]) })),
                ("bytesWithoutChanges", .int(r.bytesWithoutChanges)),
                ("leftOutChanges", .int(r.leftOutChanges)),
                ("leftOut", .array(r.leftOut.map(Self.json))),
            ])),
            ("notebook", .object([("title", .string(notebook.title)), ("notes", .int(notebook.notes.count)),
                                  ("deletedNotes", .int(r.document.deletedNotes.count)), ("conflicts", .int(notebook.conflicts.count))])),
            ("bytesWritten", .int(r.bytes.count)),
        ])
    }
}
