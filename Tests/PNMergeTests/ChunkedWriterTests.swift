import Testing
import PeerNoteCLISupport

/// `ChunkedWriter`: what it is given comes out in order, once, in writes of about a chunk; a
/// text longer than a chunk goes out a chunk at a time, and a failed write stops it.
@Suite("ChunkedWriter: output a chunk at a time")
struct ChunkedWriterTests {
    final class Sink: @unchecked Sendable {
        var writes: [[UInt8]] = []
        var failAfter = Int.max
    }

    static func writer(_ sink: Sink) -> ChunkedWriter {
        ChunkedWriter { (bytes: [UInt8]) throws(CLIFailure) in
            guard sink.writes.count < sink.failAfter else { throw CLIFailure(.ioError, "standard output: full") }
            sink.writes.append(bytes)
        }
    }

    @Test("Texts, lines and bytes come out in order, in writes of at most two chunks, and a text of several chunks in pieces")
    func order() throws {
        let sink = Sink()
        var out = Self.writer(sink)
        var expected: [UInt8] = []
        let long = String(repeating: "é long line\n", count: 60_000)   // 780,000 bytes
        for i in 0 ..< 3_000 {
            let t = "line \(i) " + String(repeating: "x", count: i % 50)
            try out.line(t)
            expected += Array(t.utf8) + [10]
            if i == 1_000 {
                try out.append(long)
                expected += Array(long.utf8)
            }
            if i == 2_000 {
                try out.appendBytes { (bytes, flush) throws(CLIFailure) in
                    bytes += Array(repeating: UInt8(ascii: "b"), count: 200_000)
                    try flush(&bytes)
                }
                expected += Array(repeating: UInt8(ascii: "b"), count: 200_000)
            }
        }
        try out.lines(["a", "b"])
        expected += Array("a\nb\n".utf8)
        try out.finish()
        #expect(sink.writes.joined().elementsEqual(expected))
        // Every write is at most two chunks but the one holding the bytes a producer appended
        // itself before its flush.
        let large = sink.writes.filter { $0.count > 2 * ChunkedWriter.chunk }
        #expect(large.count == 1 && (large.first?.count ?? 0) >= 200_000)
        #expect(sink.writes.count > long.utf8.count / ChunkedWriter.chunk)
    }

    @Test("A text's indented lines are what its lines, each after the indent, give: empty lines, a last line break, lines of a chunk or more")
    func indentedLines() throws {
        let chunk = ChunkedWriter.chunk
        let texts = ["", "one", "one\n", "\n\n", "a\nb\r\nc", "é\u{202E}\nx",
                     String(repeating: "y", count: chunk - 2) + "\n" + String(repeating: "z", count: 3 * chunk + 5) + "\n\nend",
                     (0 ..< 30_000).map { "line \($0)" }.joined(separator: "\n")]
        for text in texts {
            for indent in ["", "  ", "    "] {
                let a = Sink(), b = Sink()
                var viaLines = Self.writer(a), indented = Self.writer(b)
                try viaLines.line("before")
                try indented.line("before")
                let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { indent + String(decoding: $0, as: UTF8.self) }
                try viaLines.lines(lines)
                try indented.indentedLines(of: text, indent: indent)
                try viaLines.finish()
                try indented.finish()
                #expect(a.writes.joined().elementsEqual(b.writes.joined()), "\(text.prefix(20).debugDescription) \(indent.count)")
                #expect(b.writes.allSatisfy { $0.count <= 2 * chunk })
            }
        }
    }

    @Test("A failed write is thrown, and nothing after it is written")
    func failure() {
        let sink = Sink()
        sink.failAfter = 2
        var out = Self.writer(sink)
        #expect(throws: CLIFailure.self) {
            try out.append(String(repeating: "z", count: 5 * ChunkedWriter.chunk))
        }
        #expect(sink.writes.count == 2)
    }
}
