/// The heading lines of the Markdown the tools write (`peernote export`, `pnmerge show --format
/// markdown`): `# Notebook title` and `## Note title`. A body line that would read as one is
/// escaped, so that it reads as the note's text (man/peernote.1, MARKDOWN FORMAT).
public enum MarkdownHeading {
    /// A heading marker: up to three spaces, backslashes, then `#` or `##` and a space, tab or the
    /// end of the line. `end` is where the heading's text ends: before the line's last scalar
    /// when that is a CR (a heading is a structural line, which drops one CR before its LF).
    public struct Marker: Sendable {
        public var indent: Int
        public var backslashes: Int
        public var level: Int
        public var textStart: Int
        public var end: Int
    }

    /// The heading marker `line` (without its line break) starts with, or nil.
    public static func marker(_ line: [Unicode.Scalar]) -> Marker? {
        let end = line.last == "\r" ? line.count - 1 : line.count
        var i = 0
        while i < end && i < 3 && line[i] == " " { i += 1 }
        let indent = i
        while i < end && line[i] == "\\" { i += 1 }
        let backslashes = i - indent
        let hashes = i
        while i < end && line[i] == "#" { i += 1 }
        let level = i - hashes
        guard level == 1 || level == 2 else { return nil }
        if i == end { return Marker(indent: indent, backslashes: backslashes, level: level, textStart: i, end: end) }
        guard line[i] == " " || line[i] == "\t" else { return nil }
        return Marker(indent: indent, backslashes: backslashes, level: level, textStart: i + 1, end: end)
    }

    /// `body` with one more backslash before the first `#` or `\` of each line that would read as
    /// a heading once its leading backslashes are removed (`# x` → `\# x`, `\## x` → `\\## x`,
    /// `  # x` → `  \# x`); `peernote import` removes one. Other lines are unchanged.
    public static func escapeBody(_ body: String) -> String {
        // Most bodies have no such line: return them as they are, found by reading the UTF-8
        // (every scalar a marker is made of is ASCII, which no other scalar's bytes hold).
        if body.utf8.withContiguousStorageIfAvailable({ !hasHeadingLine($0) }) == true { return body }
        let lines = body.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.contains(where: { marker(Array($0)) != nil }) else { return body }
        let escaped = lines.map { line -> [Unicode.Scalar] in
            var l = Array(line)
            if let m = marker(l) { l.insert("\\", at: m.indent) }
            return l
        }
        return String(String.UnicodeScalarView(escaped.joined(separator: ["\n"])))
    }

    /// Whether a line of `utf8` starts with a heading marker (`marker` of its scalars is not nil).
    static func hasHeadingLine(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r"), space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
        let backslash = UInt8(ascii: "\\"), hash = UInt8(ascii: "#")
        var start = 0
        while start <= utf8.count {
            var lineEnd = start
            while lineEnd < utf8.count && utf8[lineEnd] != lf { lineEnd += 1 }
            let end = lineEnd > start && utf8[lineEnd - 1] == cr ? lineEnd - 1 : lineEnd
            var i = start
            while i < end && i - start < 3 && utf8[i] == space { i += 1 }
            while i < end && utf8[i] == backslash { i += 1 }
            let hashes = i
            while i < end && utf8[i] == hash { i += 1 }
            let level = i - hashes
            if (level == 1 || level == 2) && (i == end || utf8[i] == space || utf8[i] == tab) { return true }
            start = lineEnd + 1
        }
        return false
    }
}
