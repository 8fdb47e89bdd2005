import PeerNoteCLISupport

/// Where a JSON text first breaks the grammar of RFC 8259, or first holds something an import
/// would silently lose, for an import's error message: Foundation's `JSONDecoder` on Linux reports
/// every syntax error as "The given data was not valid JSON.", with no position, and it takes
/// some texts the grammar forbids (a trailing comma) and some that it cannot read whole (a key
/// repeated in one object, of which it keeps one value and drops the other). This is not a
/// parser (the decoder stays the one that reads the notebook): it walks the bytes the way the
/// grammar allows and stops at the first that it does not, at an escape that is half of a
/// surrogate pair (which is no character, and which a String cannot hold), and at a key that
/// an object already has. It finds nothing wrong in some texts the decoder refuses (a number
/// too large); the message then stays the decoder's.
enum JSONSyntax {
    /// The first byte the grammar does not allow, and what was expected there.
    struct Problem: Error, Equatable {
        var offset: Int
        var message: String
        /// Whether the text breaks JSON's grammar ("not valid JSON"). A repeated key and a lone
        /// surrogate escape are allowed by the grammar (RFC 8259 calls what they do
        /// unpredictable), not by an import: it would keep only one of the values, or lose a
        /// character a note's text cannot hold.
        var grammar = true
    }

    /// The first syntax error in `bytes`, or nil when there is none this check sees.
    static func firstProblem(in bytes: [UInt8]) -> Problem? {
        var walk = Walk(bytes: bytes)
        do {
            try walk.document()
            return nil
        } catch {
            return error
        }
    }

    /// How deep arrays and objects may nest before the walk stops (the decoder's own limit is 512).
    static let deepest = 512

    private struct Walk {
        let bytes: [UInt8]
        var i = 0
        var depth = 0

        mutating func document() throws(Problem) {
            if let offset = UTF8Bytes.firstInvalid(bytes) {
                throw Problem(offset: offset, message: "not valid UTF-8")
            }
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
            skipSpace()
            try value()
            skipSpace()
            if i < bytes.count { throw Problem(offset: i, message: "\(found) after the end of the JSON value") }
        }

        /// The byte at `i`, in words.
        var found: String {
            guard i < bytes.count else { return "the end of the text" }
            let b = bytes[i]
            if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
            if b == 0x20 { return "a space" }
            if b < 0x80 { return "a control character (U+\(hex(b)))" }
            return "a non-ASCII character"
        }

        private func hex(_ b: UInt8) -> String {
            let digits = Array("0123456789ABCDEF")
            return "00" + String(digits[Int(b >> 4)]) + String(digits[Int(b & 15)])
        }

        /// `expected` was needed at `i` and something else is there.
        func expected(_ expected: String) -> Problem {
            Problem(offset: i, message: i < bytes.count ? "expected \(expected), found \(found)" : "the text ends where \(expected) should be")
        }

        mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(Problem) {
            guard i < bytes.count, bytes[i] == byte else { throw expected(what) }
            i += 1
        }

        mutating func value() throws(Problem) {
            guard i < bytes.count else { throw expected("a value") }
            switch bytes[i] {
            case UInt8(ascii: "{"): try container(close: UInt8(ascii: "}"), keyed: true)
            case UInt8(ascii: "["): try container(close: UInt8(ascii: "]"), keyed: false)
            case UInt8(ascii: "\""): try string(decoding: false)
            case UInt8(ascii: "-"), UInt8(ascii: "0") ... UInt8(ascii: "9"): try number()
            case UInt8(ascii: "t"): try word("true")
            case UInt8(ascii: "f"): try word("false")
            case UInt8(ascii: "n"): try word("null")
            default: throw expected("a value")
            }
        }

        /// An object (`keyed`) or an array, from its opening bracket at `i`.
        mutating func container(close: UInt8, keyed: Bool) throws(Problem) {
            depth += 1
            guard depth <= JSONSyntax.deepest else {
                throw Problem(offset: i, message: "arrays and objects nested more than \(JSONSyntax.deepest) deep")
            }
            i += 1
            skipSpace()
            if i < bytes.count, bytes[i] == close {
                i += 1
                depth -= 1
                return
            }
            let closing = keyed ? "'}'" : "']'"
            // The object's keys as the decoder compares them (escapes decoded), with their offsets.
            var keys: [String: Int] = [:]
            while true {
                skipSpace()
                if keyed {
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw expected("a key (a string in double quotes)") }
                    let start = i
                    let key = try string(decoding: true)
                    if let first = keys[key] {
                        throw Problem(offset: start,
                                      message: "the key \"\(key)\" appears twice in one object (first at offset \(first)); only one of its values would be imported: remove or rename one",
                                      grammar: false)
                    }
                    keys[key] = start
                    skipSpace()
                    try expect(UInt8(ascii: ":"), "':' after the key")
                    skipSpace()
                }
                try value()
                skipSpace()
                guard i < bytes.count else { throw expected("',' or \(closing)") }
                if bytes[i] == UInt8(ascii: ",") {
                    let comma = i
                    i += 1
                    skipSpace()
                    if i < bytes.count, bytes[i] == close {
                        throw Problem(offset: comma, message: "a comma before \(closing): JSON allows no comma after the last item")
                    }
                    continue
                }
                if bytes[i] == close {
                    i += 1
                    depth -= 1
                    return
                }
                throw expected("',' or \(closing)")
            }
        }

        /// A string, from its opening quote at `i`; its text, escapes decoded, when `decoding`
        /// (else "").
        @discardableResult
        mutating func string(decoding: Bool) throws(Problem) -> String {
            let start = i
            i += 1
            var text: [UInt8] = []
            var run = i
            while i < bytes.count {
                let b = bytes[i]
                switch b {
                case UInt8(ascii: "\""):
                    if decoding { text += bytes[run ..< i] }
                    i += 1
                    return decoding ? String(decoding: text, as: UTF8.self) : ""
                case 0 ..< 0x20:
                    throw Problem(offset: i, message: "a control character (U+\(hex(b))) inside a string: write it as \\u\(hex(b))")
                case UInt8(ascii: "\\"):
                    if decoding { text += bytes[run ..< i] }
                    let escape = i
                    i += 1
                    guard i < bytes.count else { break }
                    switch bytes[i] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
                        text.append(bytes[i])
                        i += 1
                    case UInt8(ascii: "b"): text.append(0x08); i += 1
                    case UInt8(ascii: "f"): text.append(0x0C); i += 1
                    case UInt8(ascii: "n"): text.append(0x0A); i += 1
                    case UInt8(ascii: "r"): text.append(0x0D); i += 1
                    case UInt8(ascii: "t"): text.append(0x09); i += 1
                    case UInt8(ascii: "u"):
                        i += 1
                        guard let unit = try hexUnit() else { break }
                        var value = UInt32(unit)
                        switch unit {
                        case 0xD800 ... 0xDBFF:
                            // A high surrogate: a character only with a low one escaped right after it.
                            let after = i
                            if i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                                i += 2
                                if let low = try hexUnit(), (0xDC00 ... 0xDFFF).contains(low) {
                                    value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                                    break
                                }
                            }
                            i = after
                            throw loneSurrogate(unit, at: escape, high: true)
                        case 0xDC00 ... 0xDFFF:
                            throw loneSurrogate(unit, at: escape, high: false)
                        default:
                            break
                        }
                        if decoding, let scalar = Unicode.Scalar(value) { UTF8.encode(scalar) { text.append($0) } }
                    default:
                        throw Problem(offset: escape, message: "an unknown escape: in JSON a backslash comes before one of \" \\ / b f n r t u")
                    }
                    run = i
                default:
                    i += 1
                }
            }
            throw Problem(offset: bytes.count, message: "the text ends inside the string that starts at offset \(start)")
        }

        /// The four hex digits of a `\u` escape from `i`, as a UTF-16 code unit; nil when the
        /// text ends first (the caller then reports the unterminated string).
        mutating func hexUnit() throws(Problem) -> UInt16? {
            var unit: UInt16 = 0
            for _ in 0 ..< 4 {
                guard i < bytes.count else { return nil }
                guard let digit = hexValue(bytes[i]) else { throw expected("a hex digit of a \\u escape") }
                unit = unit << 4 | UInt16(digit)
                i += 1
            }
            return unit
        }

        /// A `\uD800`-`\uDFFF` escape without its other half.
        func loneSurrogate(_ unit: UInt16, at offset: Int, high: Bool) -> Problem {
            let shown = String(bytes[offset ..< min(offset + 6, bytes.count)].map { Character(Unicode.Scalar($0)) })
            let why = high ? "a high surrogate with no low one (\\uDC00 to \\uDFFF) after it" : "a low surrogate with no high one (\\uD800 to \\uDBFF) before it"
            return Problem(offset: offset, message: "\(shown) is \(why): half of a UTF-16 pair, which is no character and cannot be imported",
                           grammar: false)
        }

        func hexValue(_ b: UInt8) -> UInt8? {
            switch b {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): b - UInt8(ascii: "0")
            case UInt8(ascii: "a") ... UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A") ... UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
            default: nil
            }
        }

        func isDigit(_ at: Int) -> Bool { at < bytes.count && bytes[at] >= UInt8(ascii: "0") && bytes[at] <= UInt8(ascii: "9") }

        /// A number: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
        mutating func number() throws(Problem) {
            if bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard isDigit(i) else { throw expected("a digit") }
            if bytes[i] == UInt8(ascii: "0") {
                i += 1
                if isDigit(i) { throw Problem(offset: i, message: "a number may not start with 0 followed by digits") }
            } else {
                while isDigit(i) { i += 1 }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard isDigit(i) else { throw expected("a digit after the decimal point") }
                while isDigit(i) { i += 1 }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard isDigit(i) else { throw expected("a digit of the exponent") }
                while isDigit(i) { i += 1 }
            }
        }

        mutating func word(_ w: String) throws(Problem) {
            let start = i
            for b in w.utf8 {
                guard i < bytes.count, bytes[i] == b else {
                    i = start
                    throw expected("a value (true, false, null, a number, a string, an array or an object)")
                }
                i += 1
            }
        }
    }
}
