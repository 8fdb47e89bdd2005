import PeerNote

/// Text from documents (titles, bodies, tags, authors, change messages) made safe to print for a
/// person: control characters, which a terminal would act on (ESC sequences rewrite the window
/// title or clear the screen, BEL rings, `\r` overwrites the line) and which would break a layout
/// (a line break inside a title or a report line), are shown as visible escapes instead.
///
/// The notation is `\n`, `\r`, `\t`, and `\u{1b}` (lowercase hex, no leading zeros) for every
/// other C0 control (U+0000–U+001F), DEL (U+007F) and every C1 control (U+0080–U+009F).
/// In one-line contexts the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069) are shown the same way: one left open in a title reorders the rest of the
/// report line it is printed in (`edited "abc\u{202e}gpj.exe"` would read as ending in
/// `exe.jpg"`), the "Trojan Source" trick. Bodies printed as lines keep them (right-to-left
/// text uses them, and a line break ends their reach). So are the invisible format characters
/// (`isInvisible`: a zero-width space, a soft hyphen…), which would make two titles look alike.
/// A backslash is left as it is. Text without control characters is returned unchanged.
/// JSON output has its own escaping and does not use this.
public enum DisplayText {
    /// Whether a terminal could act on `scalar`: a C0 control, DEL or a C1 control.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F ... 0x9F).contains(scalar.value)
    }

    /// Whether `scalar` opens or closes a bidirectional embedding, override or isolate
    /// (LRE, RLE, PDF, LRO, RLO: U+202A–U+202E; LRI, RLI, FSI, PDI: U+2066–U+2069), which
    /// reorders the text after it up to the end of the line.
    public static func isDirectionalFormatting(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A ... 0x202E).contains(scalar.value) || (0x2066 ... 0x2069).contains(scalar.value)
    }

    /// Whether `scalar` is a format character that shows as nothing and joins nothing: the soft
    /// hyphen U+00AD, the Mongolian vowel separator U+180E, the zero-width space U+200B, the word
    /// joiner and invisible operators U+2060–U+2064, and the zero-width no-break space (byte order
    /// mark) U+FEFF. A title holding one looks like the title without it (`Plan` and
    /// `Plan\u{200b}` on two rows of a list). The joiners U+200C and U+200D, which emoji and
    /// several scripts need, and the directional marks are left alone.
    public static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0xAD, 0x180E, 0x200B, 0x2060 ... 0x2064, 0xFEFF: true
        default: false
        }
    }

    /// What a one-line context shows escaped: a control character, a directional formatting
    /// character, or an invisible one (`isInvisible`).
    public static func needsEscapeOnOneLine(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || isDirectionalFormatting(scalar) || isInvisible(scalar)
    }

    /// The visible form of a control (or directional formatting) character: `\n`, `\r`, `\t`, or `\u{HEX}`.
    public static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": "\\n"
        case "\r": "\\r"
        case "\t": "\\t"
        default: "\\u{\(String(scalar.value, radix: 16))}"
        }
    }

    /// `text` for a one-line context (a title, tag, author, heading, list row, or a value inside a
    /// report line): every control character, line breaks and tabs included, and every
    /// directional formatting character made visible.
    public static func oneLine(_ text: String) -> String {
        if isPrintableASCII(text) { return text }
        return escaping(text) { needsEscapeOnOneLine($0) }
    }

    /// Whether `text` is printable ASCII only (U+0020 to U+007E): one terminal column a byte, and
    /// nothing that any context escapes. Most titles and tags are; a listing asks for each of
    /// its cells, so the bytes are read in place rather than through the UTF-8 view's index.
    public static func isPrintableASCII(_ text: String) -> Bool {
        let printable: (UInt8) -> Bool = { $0 &- 0x20 < 0x5F }
        return text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(printable) } ?? text.utf8.allSatisfy(printable)
    }

    /// `text` for a multi-line context (a note body printed as lines): line breaks and tabs kept,
    /// every other control character (`\r`, ESC, BEL, DEL, C1 controls…) made visible.
    public static func multiline(_ text: String) -> String {
        escaping(text) { $0 != "\n" && $0 != "\t" && isControl($0) }
    }

    /// A note body's lines for printing: `multiline(text)` split at each line break. Split by
    /// bytes: once `multiline` has escaped every `\r`, a line break is always a character of its
    /// own, and splitting by characters (grapheme breaking) was a third of `pnmerge show`.
    public static func bodyLines(_ text: String) -> [String] {
        multiline(text).utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// The lines of a multi-line message (a change message), each for a one-line context: split at
    /// line breaks (a `\r\n` line end is one break), each line's other control characters (tabs
    /// and a lone `\r` included) made visible,
    /// trailing empty lines left out. A message that is nothing but line breaks is one line
    /// showing them (`\n\n`), so a message never disappears.
    public static func lines(_ text: String) -> [String] {
        // By scalars, and a "\r\n" line end taken as one break: "\r\n" is a single Character,
        // which splitting the String at "\n" would not find.
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            oneLine(String(String.UnicodeScalarView(line.last == "\r" ? line.dropLast() : line[...])))
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.isEmpty && !text.isEmpty ? [oneLine(text)] : lines
    }

    /// `text` spelled out scalar by scalar: printable ASCII as it is, every other scalar as
    /// `\u{HEX}` ("cafe\u{301}"), so that two spellings that look alike ("café" as U+00E9, or as
    /// "e" and U+0301) can be told apart in a message.
    public static func scalars(_ text: String) -> String {
        var out = ""
        for s in text.unicodeScalars {
            if s.isASCII && !isControl(s) { out.unicodeScalars.append(s) } else { out += "\\u{\(String(s.value, radix: 16))}" }
        }
        return out
    }

    /// Strings a report shows side by side (a conflict's values, a title beside what it was, a
    /// note's tags), each as `show` prints it. One that another of them equals only by canonical
    /// equivalence (the same text in other Unicode scalars: "café" as U+00E9 beside "e" and
    /// U+0301) is followed by its scalars, ` (caf\u{e9})`, as the look-alike errors spell them,
    /// so that the two can be told apart; every other string is exactly `show(text)`.
    public static func sideBySide(_ texts: [String], _ show: (String) -> String) -> [String] {
        // Found by grouping the texts by `String` equality (canonical equivalence, which its
        // hashing follows): a note's 4,000 tags compared pairwise took seconds.
        var lookAlike = [Bool](repeating: false, count: texts.count)
        // Two ASCII strings are equivalent only when they are the same.
        if !texts.allSatisfy({ $0.utf8.allSatisfy { $0 < 0x80 } }) {
            var groups: [String: [Int]] = [:]
            for (i, text) in texts.enumerated() { groups[text, default: []].append(i) }
            for members in groups.values where members.count > 1 {
                for i in members where members.contains(where: { !texts[$0].hasSameScalars(as: texts[i]) }) { lookAlike[i] = true }
            }
        }
        return texts.indices.map { i in lookAlike[i] ? show(texts[i]) + " (" + scalars(texts[i]) + ")" : show(texts[i]) }
    }

    /// `text` cut to its first `limit` characters, with `…` after, when it is longer: for a title
    /// in a list of candidates, where a megabyte-long title would make a megabyte-long message.
    public static func clipped(_ text: String, to limit: Int = 60) -> String {
        var end = text.startIndex
        for _ in 0 ..< limit {
            guard end < text.endIndex else { return text }
            end = text.index(after: end)
        }
        return end == text.endIndex ? text : String(text[..<end]) + "…"
    }

    /// A note's tags on one line, as the tools list them: `a, b`. A tag that would not read as
    /// one there is quoted, `"a, b"` (`"` and `\` inside escaped with a backslash): an empty tag,
    /// `-` (what `peernote list` shows for no tags), one holding a comma or a double quote, or
    /// one that starts or ends with a space or a tab. So the tags `a, b` and `a`, `b` read apart.
    /// Each is shown with `oneLine`, and look-alikes are spelled out (`sideBySide`).
    public static func tagList(_ tags: [String]) -> String {
        // One tag of printable ASCII that needs no quotes is shown as it is (the usual case: a
        // listing of many notes pays for this per note).
        if tags.count == 1, let only = tags.first, isPrintableASCII(only), !needsQuotes(only) { return only }
        return sideBySide(tags) { tag in
            guard needsQuotes(tag) else { return oneLine(tag) }
            var quoted = String.UnicodeScalarView()
            for s in tag.unicodeScalars {
                if s == "\\" || s == "\"" { quoted.append("\\") }
                quoted.append(s)
            }
            return "\"" + oneLine(String(quoted)) + "\""
        }.joined(separator: ", ")
    }

    /// Whether `tagList` quotes `tag`.
    static func needsQuotes(_ tag: String) -> Bool {
        // By UTF-8 bytes: an ASCII byte is never part of another scalar's bytes.
        let utf8 = tag.utf8
        guard let first = utf8.first, let last = utf8.last, tag != "-" else { return true }
        let special: (UInt8) -> Bool = { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") }
        return first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09
            || (utf8.withContiguousStorageIfAvailable { $0.contains(where: special) } ?? utf8.contains(where: special))
    }

    /// Whether one of `others` is `text` in other Unicode scalars: canonically equivalent, not the same scalars.
    public static func hasLookAlike(_ text: String, among others: [String]) -> Bool {
        // Two ASCII strings are equivalent only when they are the same (a non-ASCII one, such as
        // the Kelvin sign U+212A, can be equivalent to an ASCII one): most titles and tags are
        // ASCII, and `==` on strings normalizes.
        let ascii = text.utf8.allSatisfy { $0 < 0x80 }
        return others.contains { other in
            !(ascii && other.utf8.allSatisfy { $0 < 0x80 }) && other == text && !other.hasSameScalars(as: text)
        }
    }

    private static func escaping(_ text: String, _ needsEscape: (Unicode.Scalar) -> Bool) -> String {
        // By scalars: "\r\n" is one Character, which a Character-wise pass would not see.
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            if needsEscape(s) { out.appendScalars(of: escape(s)) } else { out.append(s) }
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
        // A line break or another control character cannot be written inside single quotes so
        // that a message shows it: `$'…'` (bash, zsh, ksh) spells it with a backslash.
        if word.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            var quoted = "$'"
            for s in word.unicodeScalars {
                switch s {
                case "\\": quoted += "\\\\"
                case "'": quoted += "\\'"
                case "\n": quoted += "\\n"
                case "\t": quoted += "\\t"
                case "\r": quoted += "\\r"
                case _ where s.value < 0x20 || s.value == 0x7F:
                    quoted += "\\x" + String(s.value, radix: 16).leftPadded(to: 2)
                default: quoted.unicodeScalars.append(s)
                }
            }
            return quoted + "'"
        }
        var quoted = "'"
        for c in word { quoted += c == "'" ? "'\\''" : String(c) }
        return quoted + "'"
    }

    /// A file name as a command's argument: `word(path)`, with `./` before a relative name that
    /// starts with `-` (which a command would take for an option). `-` alone (standard input) stays.
    public static func path(_ path: String) -> String {
        word(path.hasPrefix("-") && path != "-" ? "./" + path : path)
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}

extension DisplayText {
    /// How many terminal columns `text` takes: 2 for an East Asian wide or fullwidth character
    /// or an emoji shown as one, 0 for a combining mark or a zero-width format character, else
    /// 1, counted per grapheme (a character and its marks, an emoji sequence) by its first scalar.
    /// For aligning columns; control characters should be escaped first (`oneLine`).
    public static func columns(_ text: String) -> Int {
        // Printable ASCII takes one column a byte: most titles and tags are only that, and
        // grapheme breaking and Unicode property lookups cost about 100 ns a character.
        if isPrintableASCII(text) { return text.utf8.count }
        var total = 0
        for character in text {
            guard let first = character.unicodeScalars.first else { continue }
            total += columns(first, presentsAsEmoji: character.unicodeScalars.count > 1 && character.unicodeScalars.contains("\u{FE0F}"))
        }
        return total
    }

    private static func columns(_ s: Unicode.Scalar, presentsAsEmoji: Bool) -> Int {
        switch s.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if s.properties.isEmojiPresentation || (presentsAsEmoji && s.properties.isEmoji) { return 2 }
        let v = s.value
        return wideRanges.contains { $0.contains(v) } ? 2 : 1
    }

    /// East Asian wide and fullwidth blocks (one array, not one per character).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100 ... 0x115F, 0x2E80 ... 0x303E, 0x3041 ... 0x33FF, 0x3400 ... 0x4DBF, 0x4E00 ... 0x9FFF,
        0xA000 ... 0xA4CF, 0xA960 ... 0xA97F, 0xAC00 ... 0xD7A3, 0xF900 ... 0xFAFF, 0xFE10 ... 0xFE19,
        0xFE30 ... 0xFE6F, 0xFF00 ... 0xFF60, 0xFFE0 ... 0xFFE6, 0x1B000 ... 0x1B2FF, 0x20000 ... 0x2FFFD,
        0x30000 ... 0x3FFFD,
    ]
}

extension String.UnicodeScalarView {
    /// Appends `text`'s scalars one at a time. `append(contentsOf:)` copied the whole view at
    /// each call (Swift 6.3 on Linux): escaping a 20 MB body with an escape on every line took
    /// minutes, where appending scalar by scalar is linear.
    public mutating func appendScalars(of text: String) {
        for s in text.unicodeScalars { append(s) }
    }
}
