import Testing
import PeerNote
import PeerNoteCLISupport

/// `JSONValue` writes its text as bytes, copying a string's UTF-8 in runs between the
/// characters it escapes; what it writes must be what escaping scalar by scalar writes.
@Suite("JSON rendering: bytes as escaping scalar by scalar gives them")
struct JSONRenderingTests {
    /// The text the rendering must give: built scalar by scalar, each escaped by the rule the
    /// tools document (pnmerge(1), JSON OUTPUT).
    static func reference(_ value: JSONValue, indent: Int = 0) -> String {
        let pad = { (n: Int) in String(repeating: "  ", count: n) }
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .string(let s): return quote(s)
        case .array(let items):
            if items.isEmpty { return "[]" }
            return "[\n" + items.map { pad(indent + 1) + reference($0, indent: indent + 1) }.joined(separator: ",\n") + "\n" + pad(indent) + "]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            return "{\n" + members.map { pad(indent + 1) + quote($0.0) + ": " + reference($0.1, indent: indent + 1) }.joined(separator: ",\n")
                + "\n" + pad(indent) + "}"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20 || c.value == 0x7F || (0x80 ... 0x9F).contains(c.value) || c.value == 0x2028 || c.value == 0x2029:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Scalars next to every boundary the byte reader tests: C0, DEL, C1 (0xC2 0x80–0x9F),
    /// U+00A0 and U+00FF beside them, U+2027–U+202A around U+2028 and U+2029, other 0xE2 and
    /// four-byte sequences.
    static let scalars: [UInt32] = Array(0 ... 0x20) + [0x22, 0x2F, 0x41, 0x5C, 0x7E, 0x7F, 0x80, 0x85, 0x9B, 0x9F, 0xA0, 0xC0,
                                                         0xE9, 0xFF, 0x100, 0x7FF, 0x800, 0x2000, 0x2027, 0x2028, 0x2029,
                                                         0x202A, 0x20AC, 0x2FFF, 0xFEFF, 0xFFFD, 0x1F600, 0x10FFFF]

    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        mutating func string() -> String {
            var s = String.UnicodeScalarView()
            for _ in 0 ..< next(12) {
                if let c = Unicode.Scalar(JSONRenderingTests.scalars[next(JSONRenderingTests.scalars.count)]) { s.append(c) }
            }
            return String(s)
        }
        mutating func value(depth: Int) -> JSONValue {
            switch next(depth > 2 ? 4 : 6) {
            case 0: return .null
            case 1: return .bool(next(2) == 0)
            case 2: return .int(next(2_000_001) - 1_000_000)
            case 3: return .string(string())
            case 4: return .array((0 ..< next(4)).map { _ in value(depth: depth + 1) })
            default: return .object((0 ..< next(4)).map { _ in (string(), value(depth: depth + 1)) })
            }
        }
    }

    @Test("random values over the escaped scalars and their neighbours render as scalar-by-scalar escaping renders them")
    func renderingMatchesScalarEscaping() {
        var g = Generator(state: 0x150A)
        for _ in 0 ..< 2_000 {
            let value = g.value(depth: 0)
            let expected = Self.reference(value) + "\n"
            #expect(value.rendered == expected)
            #expect(value.renderedBytes == Array(expected.utf8))
        }
        for scalar in Self.scalars {
            let s = String(Unicode.Scalar(scalar).map(Character.init) ?? "?")
            #expect(JSONValue.quoted("a" + s + "b") == Self.quote("a" + s + "b"), "U+\(String(scalar, radix: 16))")
        }
    }
    @Test("A notebook's JSON written a note at a time, in chunks of any size, is its JSON value rendered whole")
    func notebookWrittenInChunks() throws {
        let doc = Document(title: "Big \u{1}\"book\"")
        var expectedNotes: [Note] = []
        for i in 0 ..< 300 {
            let id = doc.addNote(title: "Note \(i) \u{2028}", body: String(repeating: "line \\ \"\(i)\"\n\t", count: i % 7), tags: i % 3 == 0 ? ["t\(i % 5)", "x"] : [])
            expectedNotes.append(try #require(doc.note(id)))
        }
        let notebook = doc.notebook
        #expect(notebook.notes.map(\.id) == expectedNotes.map(\.id))
        let conflicts = JSONValue.array([.object([("kind", .string("title")), ("values", .strings(["a", "b"]))])])
        let empty = Document(title: "").notebook
        for (nb, c) in [(notebook, conflicts), (notebook, nil), (empty, conflicts), (empty, nil)] as [(Notebook, JSONValue?)] {
            let whole = NotebookJSONValue.notebook(nb, conflicts: c).renderedBytes
            for chunk in [1, 7, 4096, 1 << 16] {
                var written: [UInt8] = [], out: [UInt8] = [], flushes = 0
                NotebookJSONValue.writeNotebook(nb, conflicts: c, into: &out, chunk: chunk) { (bytes: inout [UInt8]) in
                    #expect(bytes.count >= chunk)
                    written += bytes
                    bytes.removeAll()
                    flushes += 1
                }
                written += out
                #expect(written == whole, "chunk \(chunk), \(nb.notes.count) notes")
                if chunk < 4096 && !nb.notes.isEmpty { #expect(flushes > 1) }
            }
        }
        #expect(NotebookJSONValue.notebook(notebook, conflicts: conflicts).renderedBytes.count > 1 << 16)
    }
    @Test("An array written an element at a time, at any nesting and in chunks of any size, is the array written whole", arguments: [0, 1, 2, 50, 2_000])
    func arrayWrittenInChunks(count: Int) {
        let values: [JSONValue] = (0 ..< count).map { i in
            .object([("i", .int(i)), ("s", .string(String(repeating: "x\u{7}\"", count: i % 9))), ("a", .array(i % 2 == 0 ? [] : [.null, .bool(true)]))])
        }
        for indent in [0, 1, 3] {
            var whole: [UInt8] = []
            JSONValue.array(values).write(into: &whole, indent: indent)
            for chunk in [1, 5, 1 << 16] {
                var written: [UInt8] = [], out: [UInt8] = Array("prefix ".utf8)
                JSONValue.writeArray(values, indent: indent, into: &out, chunk: chunk, flush: { (bytes: inout [UInt8]) in
                    written += bytes
                    bytes.removeAll()
                }) { $0 }
                written += out
                #expect(written == Array("prefix ".utf8) + whole, "\(count) elements, indent \(indent), chunk \(chunk)")
            }
        }
    }
}
