import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension PNMerge {
    /// `pnmerge log FILE [--graph] [--json]`.
    struct Log: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "log",
            abstract: "Show the history of changes, newest first.",
            discussion: """
            Lists every change like 'git log': its id (SEQ@REPLICA, usable with 'show --at'), \
            author, time, message and a one-line summary of what it did in note terms. A \
            change that depends on several others (the first edit after a merge) lists them. \
            --graph prints one change per line with the branches and merges of the history \
            drawn beside it, as 'git log --graph' does.
            """
        )

        @Argument(help: ArgumentHelp("The document ('-' for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Flag(name: .long, help: "Draw the branches and merges of the history.")
        var graph = false

        @OptionGroup var format: JSONOption

        func validate() throws {
            if graph && format.json { throw ValidationError("--graph and --json cannot be combined") }
        }

        func run() throws {
            try FileNameArgument.require([file])
            let input = try Inputs.load(file)
            let history = HistoryView(input.document)
            let style = RenderStyle.current
            let text: String
            if format.json {
                text = history.json.rendered
            } else if graph {
                text = history.graphText(style: style)
            } else {
                text = history.text(style: style)
            }
            try Console.current.emit(text)
        }
    }
}

/// A document's history arranged for `log`: entries, their dependency graph and display orders.
struct HistoryView {
    let entries: [HistoryEntry]
    let heads: Set<ChangeID>
    /// Dependencies as entry indices, the one by the same replica first.
    let parents: [[Int]]
    /// 0 for the newest entry (by time, then change id).
    let rank: [Int]
    /// A note's title now (deleted notes' too), for the notes each change touched.
    let titles: (NoteID) -> String?

    init(_ document: Document) {
        self.init(entries: document.history, heads: document.heads, titles: document.noteTitle)
    }

    init(entries: [HistoryEntry], heads: [ChangeID], titles: @escaping (NoteID) -> String? = { _ in nil }) {
        self.entries = entries
        self.titles = titles
        self.heads = Set(heads)
        var index: [ChangeID: Int] = [:]
        for (i, e) in entries.enumerated() { index[e.id] = i }
        let newestFirst = entries.indices.sorted { (entries[$0].time, entries[$0].id) > (entries[$1].time, entries[$1].id) }
        var rank = [Int](repeating: 0, count: entries.count)
        for (r, i) in newestFirst.enumerated() { rank[i] = r }
        self.rank = rank
        parents = entries.map { e in
            let ps = e.dependencies.compactMap { index[$0] }
            let own = ps.filter { entries[$0].id.replica == e.id.replica }
            let others = ps.filter { entries[$0].id.replica != e.id.replica }.sorted { rank[$0] < rank[$1] }
            return own + others
        }
    }

    var graph: LogGraph { LogGraph(parents: parents) }

    /// Newest first, never a change before one that depends on it.
    var dateOrder: [Int] { graph.dateOrder(rank: rank) }

    func text(style: RenderStyle) -> String {
        var lines: [String] = []
        for i in dateOrder {
            let e = entries[i]
            let head = heads.contains(e.id) ? " " + style.paint("(head)", .cyan) : ""
            lines.append(style.paint("change \(e.id)", .yellow) + head)
            if e.dependencies.count > 1 { lines.append("Merge:  " + e.dependencies.map(\.description).joined(separator: " ")) }
            lines.append("Author: \(Text.author(e.author))")
            lines.append("Date:   \(style.fullDateTime(e.time))")
            lines.append("")
            // As git log: every line of the message indented; an empty line stays empty.
            lines += DisplayText.lines(e.message).map { $0.isEmpty ? "" : "    " + $0 }
            if !e.summary.isEmpty && e.summary != e.message { lines.append("    " + style.paint(DisplayText.oneLine(Self.shortSummary(e)), .dim)) }
            if e.message.isEmpty && e.summary.isEmpty { lines.append("    (\(Text.count(e.operationCount, "operation")))") }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    /// One line per change (plus its summary when it has a message), with the graph beside it.
    /// Further lines of a multi-line message follow the first, indented by four spaces, each
    /// beside the graph's lanes.
    func graphText(style: RenderStyle) -> String {
        let g = graph
        let drawn = g.renderCountingFolds(order: g.topoOrder(rank: rank)) { i in
            let e = entries[i]
            let headline = e.message.isEmpty ? [DisplayText.oneLine(Self.shortSummary(e))] : DisplayText.lines(e.message)
            var first = style.paint(e.id.description, .yellow) + " " + style.dateTime(e.time) + " " + Text.author(e.author)
            if heads.contains(e.id) { first += " " + style.paint("(head)", .cyan) }
            if let line = headline.first, !line.isEmpty { first += ": " + line }
            let more = headline.dropFirst().map { $0.isEmpty ? "" : "    " + $0 }
            let detail = !e.message.isEmpty && !e.summary.isEmpty && e.summary != e.message ? [style.paint(DisplayText.oneLine(Self.shortSummary(e)), .dim)] : []
            return [first] + more + detail
        }
        var lines = drawn.lines
        if drawn.folded > 0 {
            lines.append("(more than \(g.laneLimit) lines of work side by side: \(Text.count(drawn.folded, "change")) on the others are drawn in the column marked \":\", whose joins are not drawn)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A change's summary for one line of text: whole when it is at most `width` characters,
    /// else its first parts (at least one, while they fit in `width` less room for the rest),
    /// then how many notes more and what was done to them, e.g. `added "Note 0"; added "Note 1";
    /// and 4998 more notes added` (an import). The JSON keeps the summary whole.
    static func shortSummary(_ e: HistoryEntry, width: Int = 120) -> String {
        let parts = e.summaryParts
        guard parts.count > 1, e.summary.count > width else { return e.summary }
        var shown: [String] = []
        var length = 0
        for part in parts {
            let more = (shown.isEmpty ? 0 : 2) + part.text.count
            if !shown.isEmpty && length + more > width - 40 { break }
            shown.append(part.text)
            length += more
        }
        let rest = parts.dropFirst(shown.count)
        // Counted in place: an import's rest is every note but a few, and copies of it filtered
        // by kind would each be as large.
        var byKind = (added: 0, deleted: 0, changed: 0)
        for part in rest {
            switch part.kind {
            case .added: byKind.added += 1
            case .deleted: byKind.deleted += 1
            case .changed: byKind.changed += 1
            case .newerFormat, .notebookTitle: break
            }
        }
        let notes = byKind.added + byKind.deleted + byKind.changed
        if notes > 0 {
            let counts = [(byKind.added, "added"), (byKind.deleted, "deleted"), (byKind.changed, "changed")].filter { $0.0 > 0 }
            let more = "and \(notes) more \(notes == 1 ? "note" : "notes")"
            shown.append(counts.count == 1 ? "\(more) \(counts[0].1)" : "\(more): " + counts.map { "\($0.0) \($0.1)" }.joined(separator: ", "))
        }
        // What no note part tells (a newer version's ops) is never left out.
        shown += rest.filter { $0.kind == .newerFormat || $0.kind == .notebookTitle }.map(\.text)
        return shown.joined(separator: "; ")
    }

    /// Newest first; the schema is documented in man/pnmerge.1 (LOG).
    var json: JSONValue {
        .array(dateOrder.map { i in HistoryJSON.change(entries[i], isHead: heads.contains(entries[i].id), titles: titles) })
    }
}
