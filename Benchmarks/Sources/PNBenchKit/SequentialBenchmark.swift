#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote

/// A sequential trace replayed into one document, one change per transaction, with copy B
/// forked after the middle transaction and given 2,000 appended characters (one change each).
struct SequentialReplay {
    /// Copy A: every transaction of the trace.
    let document: Document
    /// Copy B (when asked for): the first half of the trace, then `appended` at the end of the text.
    /// Copy B, saved (compact) as soon as it is made, and its change count: the document
    /// itself is let go so that the rest of the replay does not hold it.
    let copyB: (bytes: [UInt8], changeCount: Int)?
    let note: NoteID
    /// Time spent applying the trace's transactions (forking and copy B's edits are not counted).
    let replayTime: Duration

    /// What copy B appends: 2,000 characters.
    static let appended: String = {
        let phrase = Array("Appended on copy B while offline. ".unicodeScalars)
        var s = String.UnicodeScalarView()
        for i in 0 ..< 2000 { s.append(phrase[i % phrase.count]) }
        return String(s)
    }()

    /// Replays `trace` (sequential) as local edits to one note's body.
    static func run(_ trace: Trace, forkCopyB: Bool) throws(BenchError) -> SequentialReplay {
        let doc = Document(title: trace.name, author: "trace")
        let note = doc.addNote(title: trace.name, body: trace.startContent)
        let middle = trace.txnCount / 2
        var elapsed = Duration.zero
        var copyB: (bytes: [UInt8], changeCount: Int)?
        var start = Timing.clock.now
        try apply(trace, transactions: 0 ..< middle, to: doc, note: note)
        elapsed += Timing.clock.now - start
        if forkCopyB {
            let b = doc.fork(author: "copy B")
            // B edits first, so its copy-on-write copy is B's cost, not the replay's.
            var end = b.note(note)?.body.unicodeScalars.count ?? 0
            do {
                for u in appended.unicodeScalars {
                    try b.insertText(note, at: end, String(u))
                    end += 1
                }
            } catch {
                throw .replayFailed("copy B: appending failed: \(error)")
            }
            copyB = (b.save(.compact), b.changeCount)
        }
        start = Timing.clock.now
        try apply(trace, transactions: middle ..< trace.txnCount, to: doc, note: note)
        elapsed += Timing.clock.now - start
        return SequentialReplay(document: doc, copyB: copyB, note: note, replayTime: elapsed)
    }

    /// Applies transactions `range`, each as one change: every patch deletes, then inserts.
    static func apply(_ trace: Trace, transactions range: Range<Int>, to doc: Document, note: NoteID) throws(BenchError) {
        var current = range.lowerBound
        do {
            for t in range {
                current = t
                let patches = trace.patches(ofTxn: t)
                try doc.transaction {
                    for p in patches {
                        if p.deleteCount > 0 { try doc.deleteText(note, range: p.position ..< p.position + p.deleteCount) }
                        if !p.text.isEmpty { try doc.insertText(note, at: p.position, p.text) }
                    }
                }
            }
        } catch {
            throw .replayFailed("\(trace.path): transaction \(current): \(error)")
        }
        // A document holds back a burst of keystrokes until something reads it: this read applies
        // the last burst, so that the time measured covers every keystroke's work.
        _ = doc.changeCount
    }
}

/// The measurements of `pnbench run` on a sequential trace (and of each cut in `pnbench scale`).
struct SequentialBenchmark {
    var trace: Trace
    var timing: TimingOptions

    /// The text every patch of the trace gives, replayed on plain scalars (checked against
    /// `endContent` when the trace is whole).
    static func expectedText(_ trace: Trace) throws(BenchError) -> String {
        var reference = ReferenceText(trace.startContent)
        for t in 0 ..< trace.txnCount {
            for p in trace.patches(ofTxn: t) where !reference.apply(p) {
                throw .invalidTrace(path: trace.path, message: "transaction \(t): patch at \(p.position) deleting \(p.deleteCount) is past the end of the text (\(reference.count))")
            }
        }
        let text = reference.string
        if trace.isComplete && text != trace.endContent {
            throw .invalidTrace(path: trace.path, message: "replaying every patch does not give endContent")
        }
        return text
    }

    /// Runs every measurement and returns the result object, plus whether every check passed.
    /// Consuming: once replayed, the trace's patches are let go, so that the later phases'
    /// peaks are the library's work and not the benchmark's input.
    consuming func measure() throws(BenchError) -> (result: JSON, ok: Bool) {
        let expected = try Self.expectedText(trace)
        let txnCount = trace.txnCount, editCount = trace.editCount
        Memory.resetPeak()
        let rssStart = Memory.currentMB()
        // The peak of each phase (the process's, trace included): the replayed documents are
        // let go before the load and merge phases, which start from bytes.
        var phasePeaks: [(String, Double)] = []
        func endPhase(_ name: String) {
            phasePeaks.append((name, Memory.peakMB()))
            Memory.resetPeak()
        }

        // Replay (copy A), with copy B forked at the middle during the first run; then save
        // (compact, full history).
        var replays: [Double] = [], saves: [Double] = []
        let note: NoteID, replayOK: Bool, changeCount: Int
        var bytes: [UInt8] = [], bytesB: [UInt8] = []
        do {
            let replay = try SequentialReplay.run(trace, forkCopyB: true)
            replays.append(Timing.milliseconds(replay.replayTime))
            for _ in 1 ..< timing.replayRuns {
                replays.append(Timing.milliseconds(try SequentialReplay.run(trace, forkCopyB: false).replayTime))
            }
            let doc = replay.document
            note = replay.note
            guard let copyB = replay.copyB else { throw .replayFailed("copy B was not made") }
            replayOK = doc.note(note)?.body == expected
            changeCount = doc.changeCount
            trace = trace.prefix(0)
            endPhase("replay")
            for _ in 0 ..< timing.runs {
                let start = Timing.clock.now
                bytes = doc.save(.compact)
                saves.append(Timing.milliseconds(Timing.clock.now - start))
            }
            bytesB = copyB.bytes
        }
        endPhase("save")

        // Load those bytes and read the note's full text: `Document.readNotebook` reads the
        // state section a compact save stores (checksummed; its agreement with the history is
        // checked by a full load). `load_full_ms`: a full load (history replayed and verified, as
        // editing or merging needs), then the same text.
        var loads: [Double] = [], fullLoads: [Double] = []
        var loadOK = true
        for _ in 0 ..< timing.runs {
            let start = Timing.clock.now
            let notebook: Notebook
            do { notebook = try Document.readNotebook(bytes) } catch { throw .replayFailed("reading the saved notebook failed: \(error)") }
            let text = notebook.notes.first { $0.id == note }?.body
            loads.append(Timing.milliseconds(Timing.clock.now - start))
            loadOK = loadOK && text == expected
        }
        for _ in 0 ..< timing.runs {
            let start = Timing.clock.now
            let loaded: Document
            do { loaded = try Document.load(bytes) } catch { throw .replayFailed("loading the saved document failed: \(error)") }
            let text = loaded.note(note)?.body
            fullLoads.append(Timing.milliseconds(Timing.clock.now - start))
            loadOK = loadOK && text == expected
        }
        endPhase("load")

        // Merge: load A and B from bytes, merge B into A (which starts with the shared-history
        // check), save. `relation_ms`: that check alone, timed afterwards on fresh copies.
        let bytesA = bytes
        var merges: [Double] = [], loadA: [Double] = [], loadB: [Double] = [], mergeOnly: [Double] = [],
            saveMerged: [Double] = [], relations: [Double] = []
        var mergeOK = true
        var mergedSize = 0
        let expectedMerge = expected + SequentialReplay.appended
        for _ in 0 ..< timing.runs {
            let t0 = Timing.clock.now
            let a: Document, b: Document
            do {
                a = try Document.load(bytesA)
                let t1 = Timing.clock.now
                b = try Document.load(bytesB)
                let t2 = Timing.clock.now
                try a.merge(b)
                let t3 = Timing.clock.now
                let out = a.save(.compact)
                let t4 = Timing.clock.now
                loadA.append(Timing.milliseconds(t1 - t0))
                loadB.append(Timing.milliseconds(t2 - t1))
                mergeOnly.append(Timing.milliseconds(t3 - t2))
                saveMerged.append(Timing.milliseconds(t4 - t3))
                merges.append(Timing.milliseconds(t4 - t0))
                mergedSize = out.count
            } catch {
                throw .replayFailed("merging the diverged copies failed: \(error)")
            }
            mergeOK = mergeOK && a.note(note)?.body == expectedMerge
        }
        // The same merge saved as `pnmerge merge MINE THEIRS` (in place) and the git merge driver
        // save it: A's bytes followed by one appended block with B's changes. The appended file
        // is loaded afterwards (not timed) and must give the same text.
        var appendedMerges: [Double] = [], appendedSaves: [Double] = []
        var appendedSize = 0
        for _ in 0 ..< timing.runs {
            let out: [UInt8]
            do {
                let t0 = Timing.clock.now
                let a = try Document.load(bytesA), b = try Document.load(bytesB)
                try a.merge(b)
                let t1 = Timing.clock.now
                out = a.save(.incremental)
                let t2 = Timing.clock.now
                appendedMerges.append(Timing.milliseconds(t2 - t0))
                appendedSaves.append(Timing.milliseconds(t2 - t1))
                appendedSize = out.count
            } catch {
                throw .replayFailed("merging the diverged copies (appended save) failed: \(error)")
            }
            do { mergeOK = try mergeOK && Document.load(out).note(note)?.body == expectedMerge } catch {
                throw .replayFailed("loading the merged copy with an appended block failed: \(error)")
            }
        }
        for _ in 0 ..< timing.runs {
            do {
                let a = try Document.load(bytesA), b = try Document.load(bytesB)
                let t = Timing.clock.now
                guard a.relation(to: b) == .shared else { throw BenchError.replayFailed("copies A and B do not share history") }
                relations.append(Timing.milliseconds(Timing.clock.now - t))
            } catch {
                throw .replayFailed("checking the copies' shared history failed: \(error)")
            }
        }
        endPhase("merge")

        var storage: JSON = .null
        if let report = try? Document.storageReport(bytes) {
            storage = .object([("history_bytes", .int(report.historyBytes)), ("text_bytes", .int(report.textBytes)),
                               ("metadata_bytes", .int(report.metadataBytes))])
        }
        let result = JSON.object([
            ("trace", .string(trace.name)),
            ("kind", .string(trace.kind.rawValue)),
            ("build", .string(buildConfiguration)),
            ("txns", .int(txnCount)),
            ("of_txns", .int(trace.fullTxnCount)),
            ("edits", .int(editCount)),
            ("text_length", .int(expected.unicodeScalars.count)),
            ("changes", .int(changeCount)),
            ("replay_ms", .number(Timing.median(replays))),
            ("replay_ok", .bool(replayOK)),
            ("size", .int(bytes.count)),
            ("storage", storage),
            ("save_ms", .number(Timing.median(saves))),
            ("load_ms", .number(Timing.median(loads))),
            ("load_full_ms", .number(Timing.median(fullLoads))),
            ("load_ok", .bool(loadOK)),
            ("merge_ms", .number(Timing.median(merges))),
            ("merge_parts_ms", .object([
                ("load_a", .number(Timing.median(loadA))), ("load_b", .number(Timing.median(loadB))),
                ("merge", .number(Timing.median(mergeOnly))), ("save", .number(Timing.median(saveMerged))),
            ])),
            ("merge_appended_ms", .number(Timing.median(appendedMerges))),
            ("merge_appended_save_ms", .number(Timing.median(appendedSaves))),
            ("relation_ms", .number(Timing.median(relations))),
            ("merged_size", .int(mergedSize)),
            ("merged_appended_size", .int(appendedSize)),
            ("merge_ok", .bool(mergeOK)),
            ("peak_rss_mb", .number(phasePeaks.map(\.1).max() ?? Memory.peakMB())),
            ("peak_rss_mb_by_phase", .object(phasePeaks.map { ($0.0, .number($0.1)) })),
            ("rss_start_mb", rssStart.map(JSON.number) ?? .null),
            ("runs", .object([
                ("replay", .int(timing.replayRuns)), ("save", .int(timing.runs)), ("load", .int(timing.runs)),
                ("merge", .int(timing.runs)), ("statistic", .string("median")),
            ])),
        ])
        return (result, replayOK && loadOK && mergeOK)
    }
}
