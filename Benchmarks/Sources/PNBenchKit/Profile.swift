import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote

extension PNBench {
    /// `pnbench profile A.peernote [B.peernote] --phase load --repeat N`: one phase of `run`,
    /// repeated, on files written by `pnbench diverge`, so that a profiler (`perf record`,
    /// `valgrind --tool=callgrind`, `perf stat -e instructions`) sees that phase and not the
    /// trace's JSON parsing or the other phases.
    struct Profile: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Repeat one phase (read, load, save, relation, merge) on files, for profilers.",
            discussion: """
                read: read A's notebook (Document.readNotebook, what run reports as load_ms). \
                load: load A in full and read its text (load_full_ms). save: save A (compact). relation: load A and B, \
                then time the shared-history check. merge: load A and B, merge B into A, save \
                (the phase that `run` reports as merge_ms).
                """
        )

        enum Phase: String, ExpressibleByArgument, CaseIterable { case read, load, save, relation, merge }

        @Argument(help: "Copy A (from `pnbench diverge`).")
        var a: String

        @Argument(help: "Copy B (needed by relation and merge).")
        var b: String?

        @Option(help: "The phase to repeat: \(Phase.allCases.map(\.rawValue).joined(separator: ", ")).")
        var phase: Phase

        @Option(name: .customLong("repeat"), help: "How many times to run it.")
        var count = 10

        func run() throws {
            try reportingErrors {
                let bytesA = try read(a)
                let bytesB = try b.map(read)
                if (phase == .merge || phase == .relation) && bytesB == nil {
                    throw BenchError.usage("\(phase.rawValue) needs copy B")
                }
                var times: [Double] = []
                let loadedA = try load(bytesA, a)
                for _ in 0 ..< max(count, 1) {
                    let start = Timing.clock.now
                    switch phase {
                    case .read:
                        do { _ = try Document.readNotebook(bytesA).notes.first?.body.unicodeScalars.count } catch {
                            throw BenchError.invalidTrace(path: a, message: "\(error)")
                        }
                    case .load:
                        let d = try load(bytesA, a)
                        _ = d.notes.first?.body.unicodeScalars.count
                    case .save:
                        _ = loadedA.save(.compact)
                    case .relation:
                        let x = try load(bytesA, a), y = try load(bytesB ?? [], b ?? "")
                        let t = Timing.clock.now
                        guard x.relation(to: y) == .shared else { throw BenchError.replayFailed("A and B do not share history") }
                        times.append(Timing.milliseconds(Timing.clock.now - t))
                        continue
                    case .merge:
                        let x = try load(bytesA, a), y = try load(bytesB ?? [], b ?? "")
                        do { try x.merge(y) } catch { throw BenchError.replayFailed("merge failed: \(error)") }
                        _ = x.save(.compact)
                    }
                    times.append(Timing.milliseconds(Timing.clock.now - start))
                }
                emit(JSON.object([
                    ("phase", .string(phase.rawValue)), ("runs", .int(times.count)),
                    ("median_ms", .number(Timing.median(times))), ("min_ms", .number(times.min() ?? 0)),
                    ("peak_rss_mb", .number(Memory.peakMB())),
                ]).rendered())
            }
        }

        private func read(_ path: String) throws(BenchError) -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: path) else { throw .missingTrace(path: path, message: "cannot read it") }
            return [UInt8](data)
        }

        private func load(_ bytes: [UInt8], _ path: String) throws(BenchError) -> Document {
            do { return try Document.load(bytes) } catch { throw .invalidTrace(path: path, message: "\(error)") }
        }
    }
}
