import ArgumentParser

extension PNBench {
    /// `pnbench run TRACE`: every measurement, as one JSON object on stdout.
    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replay a trace and print the measurements as one JSON object.",
            discussion: """
                Sequential trace: edits, replay_ms, size, save_ms, load_ms (read the notebook), load_full_ms (load with history), merge_ms, merge_ok, peak_rss_mb. \
                Concurrent trace: txns, ok, total_ms. Exits 1 when a correctness check fails.
                """
        )

        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var timing: TimingOptions

        func run() throws {
            try reportingErrors {
                let trace = try traceOptions.load()
                let kind = trace.kind
                // The trace is handed over, so that the benchmark can let its patches go once replayed.
                let outcome = switch kind {
                case .sequential: try SequentialBenchmark(trace: consume trace, timing: timing).measure()
                case .concurrent: ConcurrentReplay.measure(trace, runs: timing.replayRuns)
                }
                emit(outcome.result.rendered())
                if !outcome.ok { throw ExitCode.failure }
            }
        }
    }
}
