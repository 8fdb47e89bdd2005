#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JSON value with object keys kept in the order they were given, so the
/// documented schemas come out in a stable, readable order.
public indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.int(let x), .int(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// `nil` becomes `null`.
    public static func optional(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
    public static func optional(_ i: Int?) -> JSONValue { i.map(JSONValue.int) ?? .null }
    public static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }

    /// Pretty-printed text (two-space indent) with a final newline.
    public var rendered: String { String(decoding: renderedBytes, as: UTF8.self) }

    /// `rendered` as UTF-8 bytes, written straight into one buffer (a listing of many notes
    /// renders megabytes: no `String` is built per value, and a string's text is copied in runs
    /// between the characters that need an escape).
    ///
    /// - Complexity: O(n) in the bytes written.
    public var renderedBytes: [UInt8] {
        var out: [UInt8] = []
        write(into: &out, indent: 0)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// `JSONValue.array(elements.map(value))` as `write(into:indent:)` writes it, each element made
    /// and written in turn: `flush` is given `out` whenever it holds `chunk` bytes or more (and
    /// empties it, or not), so that a listing of many notes is never held whole, as values or
    /// as text. The bytes are exactly those of the array written whole.
    public static func writeArray<S: Sequence, E: Error>(_ elements: S, indent: Int, into out: inout [UInt8], chunk: Int,
                                                         flush: (inout [UInt8]) throws(E) -> Void,
                                                         _ value: (S.Element) -> JSONValue) throws(E) {
        var array = ArrayWriter(indent: indent)
        for element in elements {
            array.append(value(element), into: &out)
            if out.count >= chunk { try flush(&out) }
        }
        array.finish(into: &out)
    }

    /// A JSON array written an element at a time, for elements that come one by one (from a
    /// callback; `writeArray` takes a sequence): the bytes `JSONValue.array(elements)` gives at
    /// nesting level `indent`, once `finish` has closed it.
    public struct ArrayWriter {
        private let indent: Int
        private var count = 0

        public init(indent: Int) { self.indent = indent }

        /// Appends `value`, the array's next element, to `out`.
        public mutating func append(_ value: JSONValue, into out: inout [UInt8]) {
            out.append(contentsOf: (count == 0 ? "[\n" : ",\n").utf8)
            count += 1
            JSONValue.indentation(indent + 1, into: &out)
            value.write(into: &out, indent: indent + 1)
        }

        /// Closes the array (`[]` when nothing was appended).
        public func finish(into out: inout [UInt8]) {
            if count == 0 {
                out.append(contentsOf: "[]".utf8)
            } else {
                out.append(UInt8(ascii: "\n"))
                JSONValue.indentation(indent, into: &out)
                out.append(UInt8(ascii: "]"))
            }
        }
    }

    /// `level` indentation steps (two spaces each), as `rendered` indents a value's members.
    public static func indentation(_ level: Int, into out: inout [UInt8]) {
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    /// Appends the value as `rendered` writes it at nesting level `indent` (its members one
    /// level deeper), without the final newline: for a writer that renders a large value a
    /// member at a time (`NotebookJSONValue.writeNotebook`).
    public func write(into out: inout [UInt8], indent: Int) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .string(let s): Self.quote(s, into: &out)
        case .array(let items):
            guard !items.isEmpty else { out.append(contentsOf: "[]".utf8); return }
            out.append(contentsOf: "[\n".utf8)
            for (i, item) in items.enumerated() {
                Self.indentation(indent + 1, into: &out)
                item.write(into: &out, indent: indent + 1)
                out.append(contentsOf: (i == items.count - 1 ? "\n" : ",\n").utf8)
            }
            Self.indentation(indent, into: &out)
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            guard !members.isEmpty else { out.append(contentsOf: "{}".utf8); return }
            out.append(contentsOf: "{\n".utf8)
            for (i, (key, value)) in members.enumerated() {
                Self.indentation(indent + 1, into: &out)
                Self.quote(key, into: &out)
                out.append(contentsOf: ": ".utf8)
                value.write(into: &out, indent: indent + 1)
                out.append(contentsOf: (i == members.count - 1 ? "\n" : ",\n").utf8)
            }
            Self.indentation(indent, into: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `s` as a JSON string, escaped as every JSON the tools write escapes it.
    public static func quoted(_ s: String) -> String {
        var out: [UInt8] = []
        quote(s, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `s` in double quotes, escaping `"`, `\`, the C0 controls (`\n`, `\r`, `\t`, else
    /// `\u00XX`), DEL, the C1 controls U+0080–U+009F (valid raw in JSON, but a terminal acts on
    /// them), U+2028 and U+2029. Read from the UTF-8 bytes: in valid UTF-8 a byte below 0x80 is
    /// that ASCII character alone, U+0080–U+009F are 0xC2 followed by 0x80–0x9F, U+2028 and
    /// U+2029 are 0xE2 0x80 0xA8 and 0xA9, and no lead byte (0xC2, 0xE2) is ever a continuation
    /// byte, so these tests find exactly the scalars to escape; every other byte is copied.
    private static func quote(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { b in
            var copied = 0, i = 0
            while i < b.count {
                let c = b[i]
                let escape: [UInt8]
                let length: Int
                switch c {
                case 0x20 ..< 0x7F where c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\"), 0x80 ..< 0xC2, 0xC3 ..< 0xE2, 0xE3 ... 0xFF:
                    i += 1
                    continue
                case UInt8(ascii: "\""): escape = Array("\\\"".utf8); length = 1
                case UInt8(ascii: "\\"): escape = Array("\\\\".utf8); length = 1
                case UInt8(ascii: "\n"): escape = Array("\\n".utf8); length = 1
                case UInt8(ascii: "\r"): escape = Array("\\r".utf8); length = 1
                case UInt8(ascii: "\t"): escape = Array("\\t".utf8); length = 1
                case 0 ..< 0x20, 0x7F: escape = Array(JSONText.unicodeEscape(UInt32(c)).utf8); length = 1
                case 0xC2:
                    guard i + 1 < b.count, (0x80 ... 0x9F).contains(b[i + 1]) else { i += 1; continue }
                    escape = Array(JSONText.unicodeEscape(UInt32(b[i + 1])).utf8)
                    length = 2
                default: // 0xE2
                    guard i + 2 < b.count, b[i + 1] == 0x80, b[i + 2] == 0xA8 || b[i + 2] == 0xA9 else { i += 1; continue }
                    escape = Array(JSONText.unicodeEscape(0x2000 + UInt32(b[i + 2] - 0x80)).utf8)
                    length = 3
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: b[copied ..< i]))
                out.append(contentsOf: escape)
                i += length
                copied = i
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[copied ..< b.count]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
