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
        let lines = body.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        // Most bodies have no such line: return them as they are.
        guard lines.contains(where: { marker(Array($0)) != nil }) else { return body }
        let escaped = lines.map { line -> [Unicode.Scalar] in
            var l = Array(line)
            if let m = marker(l) { l.insert("\\", at: m.indent) }
            return l
        }
        return String(String.UnicodeScalarView(escaped.joined(separator: ["\n"])))
    }
}
