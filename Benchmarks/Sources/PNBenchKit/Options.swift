import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which trace to read and how much of it: shared by every subcommand.
struct TraceOptions: ParsableArguments {
    @Argument(help: "A .json.gz trace file, or the name of one in the traces directory (e.g. automerge-paper).")
    var trace: String

    @Option(help: "Use only this fraction of the transactions, as 1/8 or 0.125.")
    var fraction: String?

    @Option(help: "Use at most the first N transactions.")
    var limit: Int?

    @Option(help: "Where named traces are looked up (default: $PEERNOTE_TRACES, else <repo root>/../shared/traces).")
    var tracesDir: String?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        if let fraction, Self.parseFraction(fraction) == nil {
            throw ValidationError("--fraction must be a number in (0, 1], as 1/8 or 0.125 (got \"\(fraction)\")")
        }
    }

    /// "1/8" → 0.125, "0.5" → 0.5; nil unless the value is in (0, 1].
    static func parseFraction(_ text: String) -> Double? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        let value: Double?
        switch parts.count {
        case 1: value = Double(text)
        case 2:
            guard let n = Double(parts[0]), let d = Double(parts[1]), d != 0 else { return nil }
            value = n / d
        default: value = nil
        }
        guard let value, value > 0, value <= 1 else { return nil }
        return value
    }

    /// The traces directory: --traces-dir, $PEERNOTE_TRACES, or `../shared/traces` beside the repository.
    var tracesDirectory: String {
        if let tracesDir { return tracesDir }
        if let env = ProcessInfo.processInfo.environment["PEERNOTE_TRACES"], !env.isEmpty { return env }
        // This file is <repo root>/Benchmarks/Sources/PNBenchKit/Options.swift.
        let repoRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return repoRoot.deletingLastPathComponent().appendingPathComponent("shared/traces").path
    }

    /// The trace's file: the argument itself when it exists, else a name in the traces directory.
    func resolvedPath() throws(BenchError) -> String {
        let fm = FileManager.default
        if fm.fileExists(atPath: trace) { return trace }
        if !trace.contains("/") {
            let dir = URL(fileURLWithPath: tracesDirectory)
            for name in [trace, trace + ".json.gz", trace + ".gz"] {
                let candidate = dir.appendingPathComponent(name).path
                if fm.fileExists(atPath: candidate) { return candidate }
            }
            throw .missingTrace(path: trace, message: "no such file, nor in the traces directory \(tracesDirectory)")
        }
        throw .missingTrace(path: trace, message: "no such file")
    }

    /// How many transactions of `total` to use.
    func transactionCount(of total: Int) -> Int {
        var n = total
        if let fraction, let f = Self.parseFraction(fraction) { n = min(n, max(1, Int((Double(total) * f).rounded()))) }
        if let limit { n = min(n, limit) }
        return n
    }

    /// Loads the trace and cuts it to --fraction / --limit.
    func load() throws(BenchError) -> Trace {
        let full = try Trace.load(path: resolvedPath())
        guard full.txnCount > 0 else { throw .invalidTrace(path: full.path, message: "the trace has no transactions") }
        return full.prefix(transactionCount(of: full.txnCount))
    }
}

/// How often the timed sections run (each figure is the median).
struct TimingOptions: ParsableArguments {
    @Option(help: "Runs of each timed save, load and merge; the median is reported.")
    var runs: Int = 5

    @Option(help: "Runs of the replay (slow: each replays the whole trace); the median is reported.")
    var replayRuns: Int = 1

    func validate() throws {
        guard runs >= 1, replayRuns >= 1 else { throw ValidationError("--runs and --replay-runs must be at least 1") }
    }
}
