/// Results written a chunk at a time, to standard output or to what a test captures: a command
/// that prints a whole notebook holds one chunk of its text, not all of it (at 20,000 notes,
/// 6 MB of text, the room a string grows into, and the lines or JSON values it was made of).
///
/// Contract: what is appended is written in order, once, each write given to `sink` whole;
/// `finish()` writes the rest. A failed write throws the sink's failure (status 74 for standard
/// output); what was written before it stays written, as with any output cut short.
public struct ChunkedWriter {
    /// How many bytes are held before they are written.
    public static let chunk = 1 << 16

    private var pending: [UInt8] = []
    private let sink: ([UInt8]) throws(CLIFailure) -> Void

    /// A writer that gives its chunks to `sink`.
    public init(to sink: @escaping ([UInt8]) throws(CLIFailure) -> Void) {
        self.sink = sink
        pending.reserveCapacity(Self.chunk + Self.chunk / 4)
    }

    /// Appends `text`, and writes what is held once it fills a chunk. A text of a chunk or more
    /// (a long note's body) goes out a chunk at a time from where the string holds it, never
    /// copied whole.
    public mutating func append(_ text: String) throws(CLIFailure) {
        guard text.utf8.count >= Self.chunk else {
            pending.append(contentsOf: text.utf8)
            if pending.count >= Self.chunk { try flush() }
            return
        }
        var text = text, failure: CLIFailure?
        text.withUTF8 { utf8 in
            var start = 0
            while start < utf8.count {
                let end = Swift.min(start + Self.chunk, utf8.count)
                pending.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start ..< end]))
                start = end
                if pending.count >= Self.chunk {
                    do throws(CLIFailure) { try flush() } catch {
                        failure = error
                        return
                    }
                }
            }
        }
        if let failure { throw failure }
    }

    /// Appends `text` and a newline.
    public mutating func line(_ text: String) throws(CLIFailure) {
        try append(text)
        pending.append(UInt8(ascii: "\n"))
    }

    /// Appends each of `texts` as a line.
    public mutating func lines(_ texts: some Sequence<String>) throws(CLIFailure) {
        for t in texts { try line(t) }
    }

    /// Appends each line of `text` (split at every line break, an empty last line included)
    /// after `indent`, each ending with a line break: what `lines` of those lines, each after
    /// `indent`, appends, without a string a line (a note's body printed as lines). A line of a
    /// chunk or more goes out a chunk at a time.
    public mutating func indentedLines(of text: String, indent: String) throws(CLIFailure) {
        var text = text, failure: CLIFailure?
        let lineBreak = UInt8(ascii: "\n")
        text.withUTF8 { utf8 in
            var start = 0
            while true {
                var end = start
                while end < utf8.count && utf8[end] != lineBreak { end += 1 }
                pending.append(contentsOf: indent.utf8)
                var at = start
                repeat {
                    let stop = Swift.min(at + Self.chunk, end)
                    pending.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[at ..< stop]))
                    at = stop
                    if at == end { pending.append(lineBreak) }
                    if pending.count >= Self.chunk {
                        do throws(CLIFailure) { try flush() } catch {
                            failure = error
                            return
                        }
                    }
                } while at < end
                guard end < utf8.count else { return }
                start = end + 1
            }
        }
        if let failure { throw failure }
    }

    /// Lets `produce` append bytes itself (a JSON writer: `NotebookJSONValue.writeNotebook`),
    /// giving it the flush to call when they fill a chunk.
    public mutating func appendBytes(_ produce: (inout [UInt8], _ flush: (inout [UInt8]) throws(CLIFailure) -> Void) throws(CLIFailure) -> Void) throws(CLIFailure) {
        let sink = self.sink
        try produce(&pending) { (bytes: inout [UInt8]) throws(CLIFailure) in
            try sink(bytes)
            Self.empty(&bytes)
        }
    }

    /// Empties `bytes`, keeping their room unless one large value grew it past two chunks (the
    /// room would then stay, unused, for the rest of the run).
    private static func empty(_ bytes: inout [UInt8]) {
        if bytes.capacity > 2 * chunk {
            bytes = []
            bytes.reserveCapacity(chunk + chunk / 4)
        } else {
            bytes.removeAll(keepingCapacity: true)
        }
    }

    /// Writes what is held.
    public mutating func finish() throws(CLIFailure) {
        try flush()
    }

    private mutating func flush() throws(CLIFailure) {
        guard !pending.isEmpty else { return }
        try sink(pending)
        Self.empty(&pending)
    }
}
