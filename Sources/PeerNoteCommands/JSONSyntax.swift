/// Where a JSON text first breaks the grammar of RFC 8259, for an import's error message:
/// Foundation's `JSONDecoder` on Linux reports every syntax error as "The given data was not
/// valid JSON.", with no position. This is not a parser (the decoder stays the one that reads
/// the notebook): it only walks the bytes the way the grammar allows and stops at the first that
/// it does not. It finds nothing wrong in some texts the decoder refuses (an unpaired surrogate
/// escape, a number too large); the message then stays the decoder's.
enum JSONSyntax {
    /// The first byte the grammar does not allow, and what was expected there.
    struct Problem: Error, Equatable {
        var offset: Int
        var message: String
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
            if let offset = TextFile.firstInvalidUTF8(bytes) {
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
            case UInt8(ascii: "\""): try string()
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
            while true {
                skipSpace()
                if keyed {
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw expected("a key (a string in double quotes)") }
                    try string()
                    skipSpace()
                    try expect(UInt8(ascii: ":"), "':' after the key")
                    skipSpace()
                }
                try value()
                skipSpace()
                guard i < bytes.count else { throw expected("',' or \(closing)") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
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

        /// A string, from its opening quote at `i`.
        mutating func string() throws(Problem) {
            let start = i
            i += 1
            while i < bytes.count {
                let b = bytes[i]
                switch b {
                case UInt8(ascii: "\""):
                    i += 1
                    return
                case 0 ..< 0x20:
                    throw Problem(offset: i, message: "a control character (U+\(hex(b))) inside a string: write it as \\u\(hex(b))")
                case UInt8(ascii: "\\"):
                    i += 1
                    guard i < bytes.count else { break }
                    switch bytes[i] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                         UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        i += 1
                    case UInt8(ascii: "u"):
                        i += 1
                        for _ in 0 ..< 4 {
                            guard i < bytes.count else { break }
                            guard isHexDigit(bytes[i]) else { throw expected("a hex digit of a \\u escape") }
                            i += 1
                        }
                    default:
                        throw Problem(offset: i - 1, message: "an unknown escape: in JSON a backslash comes before one of \" \\ / b f n r t u")
                    }
                default:
                    i += 1
                }
            }
            throw Problem(offset: bytes.count, message: "the text ends inside the string that starts at offset \(start)")
        }

        func isHexDigit(_ b: UInt8) -> Bool {
            (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a") ... UInt8(ascii: "f")).contains(b)
                || (UInt8(ascii: "A") ... UInt8(ascii: "F")).contains(b)
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
