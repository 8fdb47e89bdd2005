import ArgumentParser
import PeerNote

extension PNBench {
    /// `pnbench diverge TRACE -a A -b B`: the two diverged copies that `run` merges, written to files.
    struct Diverge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the two diverged copies of a sequential trace's document.",
            discussion: """
                Both copies share the first half of the trace (up to the middle transaction). Copy A then \
                applies the rest of the trace; copy B appends 2,000 characters at the end of its text, one \
                change each. Merging them gives the trace's text followed by B's characters.
                """
        )

        @OptionGroup var traceOptions: TraceOptions

        @Option(name: .customShort("a"), help: "Where to write copy A (replaced atomically).")
        var copyA: String

        @Option(name: .customShort("b"), help: "Where to write copy B (replaced atomically).")
        var copyB: String

        func validate() throws {
            if copyA == copyB { throw ValidationError("-a and -b must name different files") }
        }

        func run() throws {
            try reportingErrors {
                let trace = try traceOptions.load()
                guard trace.kind == .sequential else {
                    throw BenchError.usage("\(trace.path): diverge needs a sequential trace")
                }
                let r = try SequentialReplay.run(trace, forkCopyB: true)
                guard let b = r.copyB else { throw BenchError.replayFailed("copy B was not made") }
                let sizeA = try writeDocument(r.document, to: copyA)
                let sizeB = try writeBytes(b.bytes, to: copyB)
                let expectedLength = try SequentialBenchmark.expectedText(trace).unicodeScalars.count
                    + SequentialReplay.appended.unicodeScalars.count
                emit(JSON.object([
                    ("trace", .string(trace.name)), ("txns", .int(trace.txnCount)), ("fork_after_txn", .int(trace.txnCount / 2)),
                    ("a", .object([("file", .string(copyA)), ("size", .int(sizeA)), ("changes", .int(r.document.changeCount))])),
                    ("b", .object([("file", .string(copyB)), ("size", .int(sizeB)), ("changes", .int(b.changeCount))])),
                    ("merged_text_length", .int(expectedLength)),
                ]).rendered())
            }
        }
    }
}
