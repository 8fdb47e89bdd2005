import ArgumentParser
@_spi(Diagnostics) import PeerNote

extension PNBench {
    /// `pnbench origins TRACE`: how much of each list's origins its structure gives, on the
    /// trace's documents as a file holds them (groundwork for issue 6's format change).
    struct Origins: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Audit the trace's documents: which origins follow from the lists' structure.",
            discussion: """
                Each document is saved in compact form and loaded again, so that its log is in the \
                file's order. For every list (the order of notes, each note's body) it counts the \
                elements and runs, the elements whose left or right origin is not the one the \
                structure gives (the nearest earlier element in the log's order on that side), and \
                the bytes of a draft encoding of the structure, deflated. A sequential trace gives \
                copy A, copy B and their merge (as `diverge` writes them); a concurrent trace its \
                final document.
                """
        )

        @OptionGroup var traceOptions: TraceOptions

        func run() throws {
            try reportingErrors {
                let trace = try traceOptions.load()
                var documents: [(String, Document)] = []
                switch trace.kind {
                case .sequential:
                    let r = try SequentialReplay.run(trace, forkCopyB: true)
                    guard let b = r.copyB else { throw BenchError.replayFailed("copy B was not made") }
                    let a = try reloaded(r.document)
                    let copyB = try loaded(b.bytes)
                    let merged = a.fork(author: "merge")
                    do { try merged.merge(copyB) } catch { throw BenchError.replayFailed("merging B into A: \(error)") }
                    documents = [("a", a), ("b", copyB), ("merged", try reloaded(merged))]
                case .concurrent:
                    documents = [("final", try reloaded(try ConcurrentReplay.run(trace).document))]
                }
                var fields: [(String, JSON)] = [("trace", .string(trace.name))]
                for (name, doc) in documents {
                    let audit = doc.originAudit()
                    // Building the bodies from their structure, as a reader of that format would
                    // (each element's place in the log, derived origins, the tree at once): the
                    // best of five runs, and whether it gives what replay gave.
                    let structures = doc.bodyStructures()
                    var best = Double.infinity
                    for _ in 0 ..< 5 {
                        let t = Timing.clock.now
                        guard doc.buildBodyCount(from: structures) >= 0 else { throw BenchError.replayFailed("building \(name)'s bodies from their structure") }
                        best = min(best, Timing.milliseconds(Timing.clock.now - t))
                    }
                    // The same, with what else a reader of version 3 does for the bodies: the
                    // structures checked against the log, and the inserts given their origins.
                    var bestRead = Double.infinity
                    for _ in 0 ..< 5 {
                        var read = doc.version3BodyRead(from: structures)
                        let t = Timing.clock.now
                        guard read.run() >= 0 else { throw BenchError.replayFailed("reading \(name)'s bodies as version 3") }
                        bestRead = min(bestRead, Timing.milliseconds(Timing.clock.now - t))
                    }
                    fields.append((name, .object([
                        ("size", .int(doc.save(.compact).count)), ("changes", .int(doc.changeCount)), ("notes", .int(audit.noteCount)),
                        ("bodies", Self.json(audit.bodies)), ("order", Self.json(audit.order)),
                        ("bodies_built_from_structure_ms", .number(best)),
                        ("bodies_built_from_structure_identical", .bool(doc.bodiesRebuildIdentically())),
                        ("bodies_read_as_version3_ms", .number(bestRead)),
                    ])))
                }
                emit(JSON.object(fields).rendered())
            }
        }

        private func loaded(_ bytes: [UInt8]) throws(BenchError) -> Document {
            do { return try Document.load(bytes) } catch { throw .replayFailed("loading a saved copy: \(error)") }
        }

        private func reloaded(_ doc: Document) throws(BenchError) -> Document { try loaded(doc.save(.compact)) }

        static func json(_ a: OriginAudit) -> JSON {
            .object([
                ("elements", .int(a.elements)), ("runs", .int(a.runs)),
                ("left_exceptions", .int(a.leftExceptions)), ("right_exceptions", .int(a.rightExceptions)),
                ("runs_with_exceptions", .int(a.runsWithExceptions)), ("structure_bytes", .int(a.structureBytes)),
            ])
        }
    }
}
