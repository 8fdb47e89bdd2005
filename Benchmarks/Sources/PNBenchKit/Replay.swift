import ArgumentParser
import PeerNote

extension PNBench {
    /// `pnbench replay TRACE -o FILE`: the trace's document, written to a file.
    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replay a trace and write the document (one note whose body is the trace's text).",
            discussion: "A concurrent trace is replayed through forks and merges; the written document is the final one."
        )

        @OptionGroup var traceOptions: TraceOptions

        @Option(name: .shortAndLong, help: "The .peernote file to write (replaced atomically).")
        var output: String

        func run() throws {
            try reportingErrors {
                let trace = try traceOptions.load()
                let doc: Document, note: NoteID, expected: String?
                switch trace.kind {
                case .sequential:
                    let r = try SequentialReplay.run(trace, forkCopyB: false)
                    let reference = try SequentialBenchmark.expectedText(trace)
                    (doc, note, expected) = (r.document, r.note, reference)
                case .concurrent:
                    let r = try ConcurrentReplay.run(trace)
                    (doc, note, expected) = (r.document, r.note, trace.isComplete ? trace.endContent : nil)
                }
                let text = doc.note(note)?.body ?? ""
                if let expected, text != expected {
                    throw BenchError.replayFailed("\(trace.path): the replayed text differs from the trace's; nothing written")
                }
                let size = try writeDocument(doc, to: output)
                emit(JSON.object([
                    ("file", .string(output)), ("trace", .string(trace.name)), ("txns", .int(trace.txnCount)),
                    ("text_length", .int(text.unicodeScalars.count)), ("changes", .int(doc.changeCount)), ("size", .int(size)),
                ]).rendered())
            }
        }
    }
}

/// Writes `doc` in compact form, atomically; returns the file's size.
func writeDocument(_ doc: Document, to path: String) throws(BenchError) -> Int {
    try writeBytes(doc.save(.compact), to: path)
}

/// Writes `bytes` to `path` atomically; returns their size.
func writeBytes(_ bytes: [UInt8], to path: String) throws(BenchError) -> Int {
    do {
        try FileStore.writeAtomically(bytes, to: path)
    } catch {
        throw .writeFailed(error.description)
    }
    return bytes.count
}
