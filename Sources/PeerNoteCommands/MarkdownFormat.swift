#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

/// The Markdown form of a notebook, written by `peernote export` and read by `peernote import`.
///
/// Written form (man/peernote.1, MARKDOWN FORMAT, is the reference):
///
///     # Notebook title            (only when the title is not empty)
///
///     ## Note title
///     Tags: a, b · Priority: high · Created: 2024-05-01T09:30:00Z
///                                 (each part only when there are tags, the priority is not
///                                  normal, the creation time is known)
///
///     body, then one blank line (nothing when the body is empty)
///
/// Reading: every line starting with `# ` or `## ` (after at most three spaces; a lone `#` or
/// `##` too) starts a note, and runs to the next such line. The first heading is the notebook
/// title instead when it is a `# ` heading with only blank lines under it and every later
/// heading is a `## ` heading. The line right under a note heading is metadata when it reads
/// `Tags: …`, `Priority: …`, `Created: …` or several of them joined by `·` (a note without
/// `Created:` is dated when it is imported). Of the rest, one leading blank line and up to two
/// trailing newlines are layout; everything else is the body.
///
/// Line ends: a file whose every line ends in CRLF is read as if it used LF. In any other
/// file, the lines that give the structure (headings, the metadata line, the blank layout
/// lines) drop one CR before their LF, and body lines keep theirs (a body may hold CRLF).
///
/// Escapes keep every body, title and tag intact:
/// - a body line that would read as such a heading once its leading backslashes are removed
///   (`# x`, `\## x`, `  \\# x`, …) gets one more backslash before its first `#` or `\`;
///   reading removes one;
/// - in headings, `\` is written `\\`, a line break `\n` and a carriage return `\r`;
/// - in tags, `\`, `,` and `·` are escaped with `\`, a line break is `\n`, a carriage return
///   `\r`, a leading or trailing space or tab is escaped, and an empty tag is `\e`.
/// Text before the first heading becomes an untitled note.
public enum MarkdownFormat {
    typealias Line = [Unicode.Scalar]

    // MARK: Writing

    public static func render(_ notebook: NotebookContent) -> String {
        notebook.notes.reduce(into: heading(notebook.title)) { $0 += render($1) }
    }

    /// `render(NotebookContent(document.notebook))`, written a note at a time, each note made
    /// as it is written (`Document.forEachNote`).
    static func write(_ document: Document, to out: inout ChunkedWriter) throws(CLIFailure) {
        try out.append(heading(document.title))
        try document.forEachNote { (note: Note) throws(CLIFailure) in try out.append(render(NoteContent(note))) }
    }

    /// The notebook's `# Title` and the blank line after it; nothing for an empty title.
    private static func heading(_ title: String) -> String {
        title.isEmpty ? "" : "# " + escapeHeading(title) + "\n\n"
    }

    /// One note: its `## Title`, metadata line, a blank line, and its body and a blank line.
    private static func render(_ note: NoteContent) -> String {
        var out = "## " + escapeHeading(note.title) + "\n"
        if let meta = metadataLine(tags: note.tags, priority: note.priority, created: note.created) { out += meta + "\n" }
        out += "\n"
        if !note.body.isEmpty { out += escapeBody(note.body) + "\n\n" }
        return out
    }

    /// `Tags: a, b · Priority: high · Created: 2024-05-01T09:30:00Z`, or nil when there are no
    /// tags, the priority is normal and the creation time is not known.
    static func metadataLine(tags: [String], priority: Priority, created: Date?) -> String? {
        var parts: [String] = []
        if !tags.isEmpty { parts.append("Tags: " + tags.map(escapeTag).joined(separator: ", ")) }
        if priority != .normal { parts.append("Priority: " + priority.rawValue) }
        if let created { parts.append("Created: " + TimeText.iso8601(created)) }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }

    static func escapeHeading(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            switch s {
            case "\\": out.appendScalars(of: "\\\\")
            case "\n": out.appendScalars(of: "\\n")
            // A heading line drops a CR before its LF: one that ends a title would be lost.
            case "\r": out.appendScalars(of: "\\r")
            default: out.append(s)
            }
        }
        return String(out)
    }

    static func escapeTag(_ tag: String) -> String {
        let scalars = Array(tag.unicodeScalars)
        if scalars.isEmpty { return "\\e" }
        var out = String.UnicodeScalarView()
        for (i, s) in scalars.enumerated() {
            let atEnd = i == 0 || i == scalars.count - 1
            if s == "\n" {
                out.appendScalars(of: "\\n")
            } else if s == "\r" {
                // The metadata line drops a CR before its LF: one that ends the last tag would be lost.
                out.appendScalars(of: "\\r")
            } else if s == "\\" || s == "," || s == "·" || (atEnd && (s == " " || s == "\t")) {
                out.append("\\")
                out.append(s)
            } else {
                out.append(s)
            }
        }
        return String(out)
    }

    /// Body lines that would read as headings get one more backslash (shared with `pnmerge show`).
    static func escapeBody(_ body: String) -> String { MarkdownHeading.escapeBody(body) }

    // MARK: Reading

    /// Reads a notebook; `warnings` say where text was interpreted in a way the user may not expect.
    public static func parse(_ source: String) -> (notebook: NotebookContent, warnings: [String]) {
        var scalars = Array(source.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        scalars = normalizingCRLF(scalars)
        let lines = split(scalars)
        let headings = lines.indices.filter { marker(lines[$0]).map { $0.backslashes == 0 } ?? false }
        var warnings: [String] = []
        // A heading inside a fenced code block still starts a note (the format has no code
        // blocks), which a shell comment in a pasted script would do by surprise: say so.
        // (Only between an opening fence and its closing one: a body with a lone fence, which
        // export writes as it is, does not make the next notes' headings suspect.)
        var open: (line: Int, fence: Unicode.Scalar)?
        var nextHeading = 0
        for (n, line) in lines.enumerated() {
            guard let f = fenceMarker(line) else { continue }
            guard let o = open else { open = (n, f); continue }
            guard o.fence == f else { continue }
            while nextHeading < headings.count && headings[nextHeading] < n {
                let h = headings[nextHeading]
                if h > o.line {
                    warnings.append("line \(h + 1) is inside a code block but starts with '#', so it starts a new note; write '\\#' to keep it in the note's text")
                }
                nextHeading += 1
            }
            open = nil
        }

        /// The text between the end of line `start - 1` and the start of line `end`.
        func text(from start: Int, to end: Int) -> Line {
            let ls = lines[start ..< end]
            return end < lines.count ? ls.flatMap { $0 + ["\n"] } : join(Array(ls))
        }

        var notes: [NoteContent] = []
        let firstHeading = headings.first ?? lines.count
        let preamble = text(from: 0, to: firstHeading)
        if !isBlank(preamble) {
            notes.append(NoteContent(title: "", body: noteBody(preamble, metadata: false).body))
            let where_ = firstHeading == lines.count ? "the file has no `# ` or `## ` heading; its text" : "text before the first heading (lines 1-\(firstHeading))"
            warnings.append("\(where_) became an untitled note")
        }
        var title = ""
        var noteHeadings = headings[...]
        if let first = headings.first, let m = marker(lines[first]), m.level == 1,
           headings.dropFirst().allSatisfy({ marker(lines[$0])?.level == 2 }),
           isBlank(text(from: first + 1, to: headings.count > 1 ? headings[1] : lines.count)) {
            title = headingText(lines[first])
            noteHeadings = headings.dropFirst()
        }
        for (k, h) in noteHeadings.enumerated() {
            let nextIndex = noteHeadings.index(noteHeadings.startIndex, offsetBy: k + 1)
            let end = nextIndex < noteHeadings.endIndex ? noteHeadings[nextIndex] : lines.count
            let (body, meta) = noteBody(text(from: h + 1, to: end), metadata: true)
            if meta == nil, h + 1 < end, looksLikeMetadata(lines[h + 1]) {
                warnings.append("line \(h + 2) starts like a note's 'Tags: … · Priority: … · Created: …' line but is not one (tags are separated by ',', the priority is low, normal or high, the date is like 2024-05-01T09:30:00Z), so it was kept as the note's text")
            }
            notes.append(NoteContent(title: headingText(lines[h]), body: body, tags: meta?.tags ?? [], priority: meta?.priority ?? .normal,
                                     created: meta?.created))
        }
        return (NotebookContent(title: title, notes: notes), warnings)
    }

    /// Splits a note's text (after its heading line) into metadata and body.
    /// The metadata line, the blank line after it and the trailing blank line are structural:
    /// each drops one CR before its LF (a file that is all CRLF has none left by then).
    private static func noteBody(_ chunk: Line, metadata: Bool) -> (body: String, meta: Metadata?) {
        var rest = chunk[...]
        var meta: Metadata?
        if metadata {
            let lineEnd = rest.firstIndex(of: "\n") ?? rest.endIndex
            if let m = parseMetadata(withoutCR(Array(rest[..<lineEnd]))) {
                meta = m
                rest = lineEnd < rest.endIndex ? rest[(lineEnd + 1)...] : rest[rest.endIndex...]
            }
        }
        // One leading blank line.
        if rest.first == "\n" {
            rest = rest.dropFirst()
        } else if rest.starts(with: ["\r", "\n"]) {
            rest = rest.dropFirst(2)
        }
        // Up to two trailing newlines: the blank line after the body (with its CR, when it is
        // the last line of the chunk and holds only a CR), then the body's last line break.
        // Export ends a body with "\n\n", so a CR in the body is never taken for the blank line's.
        if rest.last == "\n" {
            rest = rest.dropLast()
            if rest.last == "\r", rest.dropLast().last == "\n" { rest = rest.dropLast() }
            if rest.last == "\n" { rest = rest.dropLast() }
        }
        let lines = split(Array(rest)).map { line -> Line in
            guard let m = marker(line), m.backslashes > 0 else { return line }
            var l = line
            l.remove(at: m.indent)
            return l
        }
        return (string(join(lines)), meta)
    }

    /// `` ` `` or `~` when `line` opens or closes a fenced code block (up to three spaces, then at
    /// least three backticks or tildes), else nil.
    static func fenceMarker(_ line: Line) -> Unicode.Scalar? {
        var i = 0
        while i < line.count && i < 3 && line[i] == " " { i += 1 }
        guard i < line.count, line[i] == "`" || line[i] == "~" else { return nil }
        let c = line[i]
        var n = 0
        while i < line.count && line[i] == c { i += 1; n += 1 }
        return n >= 3 ? c : nil
    }

    /// A heading marker (`MarkdownHeading.Marker`): up to three spaces, backslashes, then `#` or
    /// `##` and a space, tab or the end of the line.
    typealias Marker = MarkdownHeading.Marker

    static func marker(_ line: Line) -> Marker? { MarkdownHeading.marker(line) }

    /// A heading's text with `\\`, `\n` and `\r` decoded (other backslashes are kept).
    static func headingText(_ line: Line) -> String {
        guard let m = marker(line) else { return string(line) }
        let raw = line[m.textStart ..< m.end]
        var out = String.UnicodeScalarView()
        var i = raw.startIndex
        while i < raw.endIndex {
            if raw[i] == "\\", i + 1 < raw.endIndex, raw[i + 1] == "\\" || raw[i + 1] == "n" || raw[i + 1] == "r" {
                out.append(raw[i + 1] == "n" ? "\n" : raw[i + 1] == "r" ? "\r" : "\\")
                i += 2
            } else {
                out.append(raw[i])
                i += 1
            }
        }
        return String(out)
    }

    /// One scalar of a metadata line after escapes are decoded; `scalar` is nil for `\e` (an empty tag).
    private struct Cell {
        var scalar: Unicode.Scalar?
        var escaped: Bool
    }

    /// Whether `line` starts with `Tags:` or `Priority:` (any case, after spaces): a line meant
    /// as a note's metadata, which `parseMetadata` may still refuse.
    static func looksLikeMetadata(_ line: Line) -> Bool {
        let start = line.drop { $0 == " " || $0 == "\t" }
        let word = String(String.UnicodeScalarView(start.prefix { $0 != ":" })).lowercased()
        return start.contains(":") && (word == "tags" || word == "priority" || word == "created")
    }

    /// A note's metadata line, read.
    struct Metadata {
        var tags: [String]
        var priority: Priority
        /// Nil when the line has no `Created:` part.
        var created: Date?
    }

    /// `line` (without its line break or a CR before it) as metadata: `Tags:`, `Priority:` and
    /// `Created:` parts, each at most once, in any order, joined by `·`; nil when it is not that.
    static func parseMetadata(_ line: Line) -> Metadata? {
        var cells: [Cell] = []
        var i = 0
        while i < line.count {
            if line[i] == "\\", i + 1 < line.count {
                let next = line[i + 1]
                cells.append(Cell(scalar: next == "n" ? "\n" : next == "r" ? "\r" : next == "e" ? nil : next, escaped: true))
                i += 2
            } else {
                cells.append(Cell(scalar: line[i], escaped: false))
                i += 1
            }
        }
        func splitCells(_ cells: [Cell], on separator: Unicode.Scalar) -> [[Cell]] {
            var parts: [[Cell]] = [[]]
            for c in cells {
                if !c.escaped && c.scalar == separator { parts.append([]) } else { parts[parts.count - 1].append(c) }
            }
            return parts
        }
        func trimmed(_ cells: [Cell]) -> ArraySlice<Cell> {
            var s = cells[...]
            func isSpace(_ c: Cell) -> Bool { !c.escaped && (c.scalar == " " || c.scalar == "\t") }
            while let f = s.first, isSpace(f) { s = s.dropFirst() }
            while let l = s.last, isSpace(l) { s = s.dropLast() }
            return s
        }
        func text(_ cells: some Collection<Cell>) -> String {
            String(String.UnicodeScalarView(cells.compactMap(\.scalar)))
        }
        var tags: [String]?
        var priority: Priority?
        var created: Date?
        for segment in splitCells(cells, on: "·") {
            let s = trimmed(segment)
            guard let colon = s.firstIndex(where: { !$0.escaped && $0.scalar == ":" }),
                  s[..<colon].allSatisfy({ !$0.escaped }) else { return nil }
            let value = trimmed(Array(s[(colon + 1)...]))
            switch text(s[..<colon]).lowercased() {
            case "tags" where tags == nil:
                tags = splitCells(Array(value), on: ",").compactMap { token in
                    let t = trimmed(token)
                    return t.isEmpty ? nil : text(t)
                }
            case "priority" where priority == nil:
                guard value.allSatisfy({ !$0.escaped }), let p = Priority(rawValue: text(value).lowercased()) else { return nil }
                priority = p
            case "created" where created == nil:
                guard value.allSatisfy({ !$0.escaped }), let date = TimeText.parseISO8601(text(value)) else { return nil }
                created = date
            default:
                return nil
            }
        }
        return Metadata(tags: tags ?? [], priority: priority ?? .normal, created: created)
    }

    // MARK: Helpers

    private static func split(_ scalars: Line) -> [Line] {
        scalars.split(separator: "\n", omittingEmptySubsequences: false).map(Array.init)
    }

    private static func join(_ lines: [Line]) -> Line {
        Array(lines.joined(separator: ["\n"]))
    }

    private static func string(_ scalars: Line) -> String {
        // Encoded into the string's own storage: appending scalars to a `UnicodeScalarView` one
        // at a time was a fifth of an import.
        let count = scalars.reduce(0) { $0 + UTF8.width($1) }
        return String(unsafeUninitializedCapacity: count) { buffer in
            var i = 0
            for s in scalars {
                UTF8.encode(s) { unit in
                    buffer[i] = unit
                    i += 1
                }
            }
            return i
        }
    }

    /// `line` without one CR at its end (a structural line's, before its LF).
    private static func withoutCR(_ line: Line) -> Line {
        line.last == "\r" ? Array(line.dropLast()) : line
    }

    private static func isBlank(_ scalars: Line) -> Bool {
        scalars.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    }

    /// A file whose every line break is CRLF (as saved on Windows) is read as if it used LF.
    /// Exported files always hold a bare LF (a heading's or a tag's CR is escaped), so this never
    /// changes a round trip. Other files keep their CRs here: the reader drops one from each
    /// structural line (`marker`, `noteBody`), and body lines keep theirs.
    private static func normalizingCRLF(_ scalars: Line) -> Line {
        var breaks = 0
        for (i, s) in scalars.enumerated() where s == "\n" {
            guard i > 0 && scalars[i - 1] == "\r" else { return scalars }
            breaks += 1
        }
        guard breaks > 0 else { return scalars }
        var out: Line = []
        out.reserveCapacity(scalars.count)
        for (i, s) in scalars.enumerated() where !(s == "\r" && i + 1 < scalars.count && scalars[i + 1] == "\n") {
            out.append(s)
        }
        return out
    }
}
