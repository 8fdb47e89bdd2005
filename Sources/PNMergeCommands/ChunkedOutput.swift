import PeerNoteCLISupport

/// Results written to the console (`Console.current`) a chunk at a time: a command that prints
/// a whole notebook holds one chunk of its text, not all of it (at 20,000 notes, 6 MB of text
/// and the room a string grows into).
///
/// Contract: what is appended is written in order, once; `finish()` writes the rest. A failed
/// write throws (status 74, as `OutputSink.writeBytes`); what was written before it stays
/// written, as with any output cut short.
struct ChunkedOutput {
    /// How many bytes are held before they are written.
    static let chunk = 1 << 16

    /// The bytes not written yet.
    var pending: [UInt8] = []

    init() {
        pending.reserveCapacity(Self.chunk + Self.chunk / 4)
    }

    /// Appends `text` and a newline, and writes what is held once it fills a chunk.
    mutating func line(_ text: String) throws(CLIFailure) {
        pending.append(contentsOf: text.utf8)
        pending.append(UInt8(ascii: "\n"))
        if pending.count >= Self.chunk { try Self.write(&pending) }
    }

    /// Appends each of `texts` as a line.
    mutating func lines(_ texts: some Sequence<String>) throws(CLIFailure) {
        for t in texts { try line(t) }
    }

    /// Writes `bytes` to the console and empties them (a `flush` for writers that fill the
    /// buffer themselves: `NotebookJSONValue.writeNotebook`).
    static func write(_ bytes: inout [UInt8]) throws(CLIFailure) {
        guard !bytes.isEmpty else { return }
        try Console.current.writeBytes(bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Writes what is held.
    mutating func finish() throws(CLIFailure) {
        try Self.write(&pending)
    }
}
