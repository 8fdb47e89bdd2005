import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension PNMerge {
    /// `pnmerge inspect FILE [--json]`.
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "inspect",
            abstract: "Show what a .peernote file holds: identity, history, replicas and storage.",
            discussion: """
            Prints the document id, notebook title, format version, file size and blocks, \
            the numbers of changes and op units, the replicas (editing sessions) with the \
            authors they recorded, the heads of the history, the numbers of notes and \
            deleted notes, the open conflicts, and how the bytes divide between history, text \
            and metadata.
            """
        )

        @Argument(help: ArgumentHelp("The document ('-' for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @OptionGroup var format: JSONOption

        func run() throws {
            try FileNameArgument.require([file])
            let info = try InspectReport.read(file)
            try Console.current.emit(format.json ? info.json.rendered : info.text(style: .current))
        }
    }
}

/// The facts `inspect` prints about one file.
struct InspectReport {
    /// What the loaded document tells of itself.
    struct Facts {
        var documentID: UUID
        var title: String
        var changes: Int
        var operations: Int
        var replicas: [(replica: ReplicaID, authors: [String])]
        var heads: [ChangeID]
        var notes: Int
        var deletedNotes: Int
        var conflicts: Int

        init(_ d: Document) {
            documentID = d.id
            title = d.title
            changes = d.changeCount
            operations = d.operationCount
            replicas = d.replicas
            heads = d.heads
            notes = d.noteCount
            deletedNotes = d.deletedNoteSummaries(matching: NoteFilter()).count
            conflicts = d.conflicts.count
        }
    }

    var file: String
    var facts: Facts
    var storage: StorageReport

    var documentID: UUID { facts.documentID }
    var title: String { facts.title }
    var changes: Int { facts.changes }
    var operations: Int { facts.operations }
    var replicas: [(replica: ReplicaID, authors: [String])] { facts.replicas }
    var heads: [ChangeID] { facts.heads }
    var notes: Int { facts.notes }
    var deletedNotes: Int { facts.deletedNotes }
    var conflicts: Int { facts.conflicts }

    /// Measures the storage in `file`'s bytes, then loads (verifies) them and takes the facts
    /// from the document, which it lets go: the measuring decodes every block, which beside the
    /// notebook, or in the memory it left, would add to the command's memory. A file that does
    /// not verify fails as a load fails, whatever the measuring found.
    static func read(_ file: String) throws(CLIFailure) -> InspectReport {
        let bytes = try Inputs.readBytes(file)
        // Measured before the document is built, and kept only once the load has verified the
        // same bytes: measured after, in the memory the notebook left, the heap grew past both.
        let storage = Document.storageReport(verified: bytes)
        // (Not kept to the process's end, as `Inputs.load` keeps a document: it goes here.)
        let facts = Facts(try Inputs.parse(bytes, from: file))
        guard let storage else {
            throw CLIFailure(.invalidInput, "\(Inputs.displayName(file)): its blocks cannot be read again")
        }
        return InspectReport(file: file, facts: facts, storage: storage)
    }

    /// How many replicas the text lists one per line when there are more than two more.
    static let replicasListed = 10

    /// Every author, in the order the replicas list them, without repeats.
    var authors: [String] {
        var out: [String] = []
        for r in replicas { for a in r.authors where !out.containsScalars(of: a) { out.append(a) } }
        return out
    }

    func text(style: RenderStyle) -> String {
        func row(_ label: String, _ value: String) -> String {
            style.paint(label.padded(toLength: 11), .bold) + value
        }
        var lines = [
            row("file", Inputs.displayName(file)),
            row("document", documentID.uuidString.lowercased()),
            row("title", Text.quoted(title)),
            row("format", "version \(storage.formatVersion)"),
            row("size", "\(Text.count(storage.fileSize, "byte")) in \(Text.count(storage.blockCount, "block"))"),
            row("changes", "\(changes) (\(Text.count(operations, "operation")))"),
            row("replicas", "\(replicas.count)"),
        ]
        // Each run of peernote is a replica of its own, so a notebook edited from the command
        // line has hundreds: the first ones listed, the rest counted by author.
        let listed = replicas.count <= Self.replicasListed + 2 ? replicas.count : Self.replicasListed
        for r in replicas.prefix(listed) {
            lines.append("  " + style.paint(r.replica.short, .yellow) + "  " + r.authors.map(Text.author).joined(separator: ", "))
        }
        if listed < replicas.count {
            var counts: [(author: String, count: Int)] = []
            for r in replicas.dropFirst(listed) {
                let author = r.authors.first ?? ""
                if let i = counts.firstIndex(where: { $0.author.hasSameScalars(as: author) }) { counts[i].count += 1 } else { counts.append((author, 1)) }
            }
            // The authors with most of them first, at most five (the authors row lists every one).
            let ranked = counts.enumerated().sorted { $0.element.count != $1.element.count ? $0.element.count > $1.element.count : $0.offset < $1.offset }
            var byAuthor = ranked.prefix(5).map { "\(Text.author($0.element.author)) \($0.element.count)" }.joined(separator: ", ")
            if ranked.count > 5 { byAuthor += ", \(ranked.count - 5) other authors \(ranked.dropFirst(5).reduce(0) { $0 + $1.element.count })" }
            lines.append("  … \(replicas.count - listed) more (\(byAuthor)); --json lists every one")
        }
        lines += [
            row("authors", authors.map(Text.author).joined(separator: ", ")),
            row("heads", heads.map { style.paint($0.description, .yellow) }.joined(separator: " ")),
            row("notes", "\(notes) (\(deletedNotes) deleted)"),
            row("conflicts", "\(conflicts) open"),
            row("storage", "history \(storage.historyBytes) B, text \(storage.textBytes) B, metadata \(storage.metadataBytes) B"),
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The schema is documented in man/pnmerge.1 (INSPECT).
    var json: JSONValue {
        .object([
            ("file", .string(file)),
            ("document", .string(documentID.uuidString.lowercased())),
            ("title", .string(title)),
            ("formatVersion", .int(Int(clamping: storage.formatVersion))),
            ("fileSize", .int(storage.fileSize)),
            ("blocks", .int(storage.blockCount)),
            ("changes", .int(changes)),
            ("operations", .int(operations)),
            ("replicas", .array(replicas.map { .object([("id", .string($0.replica.description)), ("authors", .strings($0.authors))]) })),
            ("authors", .strings(authors)),
            ("heads", .strings(heads.map(\.fullDescription))),
            ("notes", .int(notes)),
            ("deletedNotes", .int(deletedNotes)),
            ("conflicts", .int(conflicts)),
            ("storage", .object([("history", .int(storage.historyBytes)), ("text", .int(storage.textBytes)),
                                 ("metadata", .int(storage.metadataBytes))])),
        ])
    }
}
