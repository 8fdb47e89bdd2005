/// Text from documents (titles, bodies, tags, authors, change messages) made safe to print for a
/// person: control characters, which a terminal would act on (ESC sequences rewrite the window
/// title or clear the screen, BEL rings, `\r` overwrites the line) and which would break a layout
/// (a line break inside a title or a report line), are shown as visible escapes instead.
///
/// The notation is `\n`, `\r`, `\t`, and `\u{1b}` (lowercase hex, no leading zeros) for every
/// other C0 control (U+0000–U+001F), DEL (U+007F) and every C1 control (U+0080–U+009F).
/// A backslash is left as it is. Text without control characters is returned unchanged.
/// JSON output has its own escaping and does not use this.
public enum DisplayText {
    /// Whether a terminal could act on `scalar`: a C0 control, DEL or a C1 control.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F ... 0x9F).contains(scalar.value)
    }

    /// The visible form of a control character: `\n`, `\r`, `\t`, or `\u{HEX}`.
    public static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": "\\n"
        case "\r": "\\r"
        case "\t": "\\t"
        default: "\\u{\(String(scalar.value, radix: 16))}"
        }
    }

    /// `text` for a one-line context (a title, tag, author, heading, list row, or a value inside a
    /// report line): every control character, line breaks and tabs included, made visible.
    public static func oneLine(_ text: String) -> String {
        escaping(text) { isControl($0) }
    }

    /// `text` for a multi-line context (a note body printed as lines): line breaks and tabs kept,
    /// every other control character (`\r`, ESC, BEL, DEL, C1 controls…) made visible.
    public static func multiline(_ text: String) -> String {
        escaping(text) { $0 != "\n" && $0 != "\t" && isControl($0) }
    }

    /// The lines of a multi-line message (a change message), each for a one-line context: split at
    /// line breaks, each line's other control characters (tabs and `\r` included) made visible,
    /// trailing empty lines left out. A message that is nothing but line breaks is one line
    /// showing them (`\n\n`), so a message never disappears.
    public static func lines(_ text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { oneLine(String($0)) }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.isEmpty && !text.isEmpty ? [oneLine(text)] : lines
    }

    private static func escaping(_ text: String, _ needsEscape: (Unicode.Scalar) -> Bool) -> String {
        // By scalars: "\r\n" is one Character, which a Character-wise pass would not see.
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            if needsEscape(s) { out.append(contentsOf: escape(s).unicodeScalars) } else { out.append(s) }
        }
        return String(out)
    }
}

/// Quoting for the commands that messages suggest, so that they can be pasted into a shell.
public enum ShellQuote {
    /// `word` as it is when it needs no quoting (letters, digits and `_@%+=:,./-`), else in
    /// single quotes (a single quote inside becomes `'\''`).
    public static func word(_ word: String) -> String {
        let safe = !word.isEmpty && word.unicodeScalars.allSatisfy { s in
            s.isASCII && (s.properties.isAlphabetic || ("0" ... "9").contains(s) || "_@%+=:,./-".unicodeScalars.contains(s))
        }
        if safe { return word }
        var quoted = "'"
        for c in word { quoted += c == "'" ? "'\\''" : String(c) }
        return quoted + "'"
    }
}
