import ArgumentParser
import PeerNote
import PeerNoteCLISupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PeerNoteCLI {
    /// `peernote list FILE`: one note a line: index, short id, title, tags, priority.
    struct List: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the notes (or those with a tag, a priority, conflicts): index, short id, title, tags, priority.",
            discussion: "One note a line, in aligned columns; '-' stands for no tags. A notebook without notes lists nothing ('(no notes)' when standard output is a terminal). When the notebook has open conflicts, one line on standard error after the list says how many ('peernote conflicts' lists them). --tag (repeatable), --priority and --conflicts keep the notes that match them all, each at its index among all the notes. Line breaks, tabs and other control characters in titles and tags show as \\n, \\t and \\u{1b}. A note's tags that are the same text in other Unicode scalars are each followed by their scalars: caf\\u{e9}."
        )

        @Argument(help: ArgumentHelp("The .peernote file (- for standard input).", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Flag(help: "List the deleted notes instead (index '-'); 'peernote restore' brings them back.")
        var deleted = false

        @Option(name: .customLong("tag"), parsing: .unconditionalSingleValue, help: ArgumentHelp("Only the notes tagged TAG (repeatable: every one).", valueName: "TAG"))
        var tags: [String] = []

        @Option(help: ArgumentHelp("Only the notes of this priority.", valueName: "low|normal|high"))
        var priority: PriorityArgument?

        @Flag(help: "Only the notes with open conflicts ('peernote conflicts' lists them).")
        var conflicts = false

        @Flag(help: "Print JSON: an array of notes, each with its index.")
        var json = false

        func execute() throws {
            let document = try DocumentFile.open(file, pipes: true)
            let filter = NoteFilter(tags: tags, priority: priority?.priority, conflicted: conflicts)
            let conflictCount = document.conflicts.count
            if json {
                // JSON carries each note's body (the text listing shows none, so it makes none),
                // each note made and written in turn, a chunk at a time.
                var out = StandardOutput.chunked()
                try out.appendBytes { (bytes, flush) throws(CLIFailure) in
                    var array = JSONValue.ArrayWriter(indent: 0)
                    func row(_ index: Int?, _ note: Note) throws(CLIFailure) {
                        array.append(NotebookJSONValue.note(note, deleted: true, extra: [("index", .optional(index))]), into: &bytes)
                        if bytes.count >= ChunkedWriter.chunk { try flush(&bytes) }
                    }
                    if deleted {
                        for note in document.deletedNotes(matching: filter) { try row(nil, note) }
                    } else {
                        try document.forEachNote(matching: filter) { (index, note) throws(CLIFailure) in try row(index, note) }
                    }
                    array.finish(into: &bytes)
                }
                try out.line("")
                return try out.finish()
            }
            // The notes read where they lie, each cell as its line is written.
            let color = Terminal.colorEnabled()
            let written = document.withNoteRows(matching: filter, deleted: deleted) { notes in
                Result { () throws(CLIFailure) -> Int in
                    try Self.write(notes, color: color, chunk: Self.outputChunk) { bytes throws(CLIFailure) in
                        try StandardOutput.write(bytes: bytes)
                    }
                    return notes.count
                }
            }
            // "(no notes)" is for the person at the terminal; a script reading the list gets no lines.
            if try written.get() == 0, isatty(1) == 1 {
                try StandardOutput.write(Self.nothingListed(deleted: deleted, filtered: !filter.isEmpty) + "\n")
            }
            // On standard error, so that the list itself stays one note a line for a pipe.
            if let line = Self.conflictsLine(conflictCount, file: file) { Failure.report(line) }
        }

        /// What an empty listing says on a terminal.
        static func nothingListed(deleted: Bool, filtered: Bool = false) -> String {
            filtered ? (deleted ? "(no deleted notes match)" : "(no notes match)") : deleted ? "(no deleted notes)" : "(no notes)"
        }

        /// `FILE: 2 conflicts (see: peernote conflicts FILE)`, FILE quoted for the shell where it needs it
        /// (as pnmerge's lines give such commands), or nil when there are none. Standard input,
        /// read already, has only the count.
        static func conflictsLine(_ count: Int, file: String) -> String? {
            guard count > 0 else { return nil }
            let counted = "\(file == "-" ? "<stdin>" : file): \(count) conflict\(count == 1 ? "" : "s")"
            // No command for standard input or a pipe: what it read is gone by then.
            var st = stat()
            let pipe = stat(file, &st) == 0 && st.st_mode & S_IFMT == S_IFIFO
            return file == "-" || pipe ? counted : counted + " (see: peernote conflicts \(ShellQuote.path(file)))"
        }

        /// The widest the title and tags columns are padded to: a longer cell runs on into the
        /// columns after it on its own line only, so that one long title does not push every
        /// other row's tags and priority far to the right.
        static let widestPadded = 48

        /// The listing's lines for the notes of `document` that `filter` keeps (the deleted ones
        /// with `deleted`), columns padded to the widest cell (titles and tags to at most
        /// `widestPadded` terminal columns): what `execute` writes, whole.
        static func render(_ document: Document, matching filter: NoteFilter = NoteFilter(), deleted: Bool = false, color: Bool) -> String {
            document.withNoteRows(matching: filter, deleted: deleted) { rows in
                var all: [UInt8] = []
                write(rows, color: color, chunk: .max) { all.append(contentsOf: $0) }
                return String(decoding: all, as: UTF8.self)
            }
        }

        /// How many bytes of the listing `execute` writes at a time: a listing of many notes is
        /// not held whole beside the notebook.
        static let outputChunk = 64 * 1024

        /// Hands the listing's lines for `rows` to `emit` (`render`), in pieces of whole lines of
        /// about `chunk` bytes or more.
        /// - Complexity: O(n) in the notes' titles and tags. A row's cells are made once to
        ///   measure the columns and again to write it: only the widths of its title and tags
        ///   are kept between, not every cell of the listing.
        static func write<E: Error>(_ rows: NoteRows, color: Bool, chunk: Int,
                                    _ emit: ([UInt8]) throws(E) -> Void) throws(E) {
            let columnCount = 5
            let rowIndices = 0 ..< rows.count
            let ids = NoteID.shortForms(of: rowIndices.map(rows.id))
            /// Row `r`'s cell in column `c`.
            func cell(_ r: Int, _ c: Int) -> String {
                switch c {
                case 0: rows.index(r).map(String.init) ?? "-"
                case 1: ids[r]
                case 2: DisplayText.oneLine(rows.title(r))
                case 3: tagsCell(rows.tags(r))
                default: rows.priority(r).rawValue
                }
            }
            // Padded by terminal columns (a CJK character or an emoji takes two), not by characters;
            // the index, id and priority are ASCII, a column a byte.
            var widths = [Int](repeating: 0, count: columnCount)
            var measured: [(title: Int32, tags: Int32)] = []
            measured.reserveCapacity(rows.count)
            for r in rowIndices {
                let title = DisplayText.columns(cell(r, 2)), tags = DisplayText.columns(cell(r, 3))
                measured.append((Int32(clamping: title), Int32(clamping: tags)))
                widths[0] = max(widths[0], cell(r, 0).utf8.count)
                widths[1] = max(widths[1], ids[r].utf8.count)
                widths[2] = max(widths[2], title)
                widths[3] = max(widths[3], tags)
                widths[4] = max(widths[4], cell(r, 4).utf8.count)
            }
            widths[2] = min(widths[2], widestPadded)
            widths[3] = min(widths[3], widestPadded)
            var out: [UInt8] = []
            out.reserveCapacity(Swift.min(chunk, rows.count * (4 * 2 + 1 + widths.reduce(0, +))) + 1024)
            for r in rowIndices {
                let priority = rows.priority(r)
                for c in 0 ..< columnCount {
                    let text = cell(r, c)
                    let width = c == 2 ? Int(measured[r].title) : c == 3 ? Int(measured[r].tags) : text.utf8.count
                    let pad = max(0, widths[c] - width)
                    if c > 0 { out.append(0x20); out.append(0x20) }
                    if c == 0 { out.append(contentsOf: repeatElement(0x20, count: pad)) }
                    if color {
                        out.append(contentsOf: paint(text, column: c, priority: priority).utf8)
                    } else {
                        out.append(contentsOf: text.utf8)
                    }
                    if c != 0 && c != columnCount - 1 { out.append(contentsOf: repeatElement(0x20, count: pad)) }
                }
                out.append(0x0A)
                if out.count >= chunk {
                    try emit(out)
                    out.removeAll(keepingCapacity: true)
                }
            }
            if !out.isEmpty { try emit(out) }
        }

        /// A row's tags, or `-` for none.
        private static func tagsCell(_ tags: [String]) -> String { tags.isEmpty ? "-" : DisplayText.tagList(tags) }

        private static func paint(_ text: String, column: Int, priority: Priority) -> String {
            switch column {
            case 0: Terminal.paint(text, .dim, enabled: true)
            case 1: Terminal.paint(text, .yellow, enabled: true)
            case 2: Terminal.paint(text, .bold, enabled: true)
            case 3: Terminal.paint(text, .cyan, enabled: true)
            default:
                switch priority {
                case .high: Terminal.paint(text, .red, enabled: true)
                case .low: Terminal.paint(text, .dim, enabled: true)
                case .normal: text
                }
            }
        }
    }
}
