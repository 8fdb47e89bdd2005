import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PNBench {
    /// `pnbench scale TRACE`: the sequential measurements at 1/8, 1/4, 1/2 and all of the trace.
    struct Scale: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the sequential measurements on 1/8, 1/4, 1/2 and all of a trace (for the n log n claim).",
            discussion: """
                With --fraction or --limit, the cuts are taken of that part of the trace. Prints a JSON array \
                (one `run` object per cut, plus `growth_vs_nlogn`: each time's growth since the first cut \
                divided by the growth of n·log2(n), n = edits; values near or below 1 mean no faster than \
                n log n). With --table, prints a human-readable table instead.
                """
        )

        @OptionGroup var traceOptions: TraceOptions
        @OptionGroup var timing: TimingOptions

        @Flag(help: "Print a table instead of JSON.")
        var table = false

        static let cuts: [(label: String, numerator: Int, denominator: Int)] = [("1/8", 1, 8), ("1/4", 1, 4), ("1/2", 1, 2), ("1", 1, 1)]
        static let timedFields = ["replay_ms", "load_ms", "load_full_ms", "merge_ms", "save_ms"]

        func run() throws {
            try reportingErrors {
                let whole = try traceOptions.load()
                guard whole.kind == .sequential else {
                    throw BenchError.usage("\(whole.path): scale needs a sequential trace")
                }
                var rows: [(label: String, result: JSON)] = []
                var allOK = true
                for cut in Self.cuts {
                    let n = max(1, whole.txnCount * cut.numerator / cut.denominator)
                    let outcome = try SequentialBenchmark(trace: whole.prefix(n), timing: timing).measure()
                    allOK = allOK && outcome.ok
                    rows.append((cut.label, outcome.result))
                }
                let results = Self.withGrowth(rows)
                emit(table ? Self.table(results) : JSON.array(results).rendered())
                if !allOK { throw ExitCode.failure }
            }
        }

        /// Each row's object with `cut` first and `growth_vs_nlogn` added.
        static func withGrowth(_ rows: [(label: String, result: JSON)]) -> [JSON] {
            guard let first = rows.first else { return [] }
            let nlogn: (JSON) -> Double = { r in
                let n = max(2, r["edits"]?.doubleValue ?? 2)
                return n * log2(n)
            }
            return rows.map { row in
                guard case .object(let fields) = row.result else { return row.result }
                var growth: [(String, JSON)] = []
                for f in timedFields {
                    guard let t = row.result[f]?.doubleValue, let t0 = first.result[f]?.doubleValue, t0 > 0 else { continue }
                    growth.append((f, .number((t / t0) / (nlogn(row.result) / nlogn(first.result)))))
                }
                return .object([("cut", .string(row.label))] + fields + [("growth_vs_nlogn", .object(growth))])
            }
        }

        static func table(_ results: [JSON]) -> String {
            let header = ["cut", "txns", "edits", "replay ms", "save ms", "load ms", "full load ms", "merge ms", "size B", "peak MB",
                          "ok", "replay/nlogn", "load/nlogn", "full load/nlogn", "merge/nlogn"]
            var lines = [header]
            for r in results {
                let num: (String) -> String = { k in r[k]?.doubleValue.map { fixed($0, 3) } ?? "-" }
                let int: (String) -> String = { k in r[k]?.doubleValue.map { String(Int($0)) } ?? "-" }
                let growth: (String) -> String = { k in r["growth_vs_nlogn"]?[k]?.doubleValue.map { fixed($0, 2) } ?? "-" }
                var ok = true
                for k in ["replay_ok", "load_ok", "merge_ok"] { if case .bool(false)? = r[k] { ok = false } }
                var cut = "-"
                if case .string(let s)? = r["cut"] { cut = s }
                lines.append([cut, int("txns"), int("edits"), num("replay_ms"), num("save_ms"), num("load_ms"), num("load_full_ms"),
                              num("merge_ms"), int("size"), fixed(r["peak_rss_mb"]?.doubleValue ?? 0, 1),
                              ok ? "yes" : "NO", growth("replay_ms"), growth("load_ms"), growth("load_full_ms"), growth("merge_ms")])
            }
            let widths = header.indices.map { i in lines.map { $0[i].count }.max() ?? 0 }
            return lines.map { row in
                row.enumerated().map { i, cell in
                    let pad = String(repeating: " ", count: widths[i] - cell.count)
                    return i == 0 ? cell + pad : pad + cell
                }.joined(separator: "  ")
            }.joined(separator: "\n")
        }
    }
}
