import PeerNote

/// Replays a concurrent trace through forks and merges of documents, as its parents say:
/// no parents → a fork of a base document holding one empty note; one parent → that
/// parent's document (forked while other children still need it, reused in place by the
/// last); several → the first parent's document (forked or reused) merged with the others'.
/// Each transaction is one change, recorded under its agent's name.
struct ConcurrentReplay {
    /// The final document: the last head's, or the merge of every head.
    let document: Document
    let note: NoteID
    let text: String
    let forks: Int
    let merges: Int
    let heads: Int
    let elapsed: Duration

    static func run(_ trace: Trace) throws(BenchError) -> ConcurrentReplay {
        let n = trace.txnCount
        let base = Document(title: trace.name, author: "trace")
        let note = base.addNote(title: trace.name, body: trace.startContent)
        // Children of each transaction within this (possibly cut) trace: a document is kept
        // until its last child has used it.
        var pending = [Int](repeating: 0, count: n)
        for ps in trace.parents { for p in ps { pending[p] += 1 } }
        let authors = (0 ... (trace.agents.max() ?? 0)).map { "agent \($0)" }
        var docs = [Document?](repeating: nil, count: n)
        var forks = 0, merges = 0
        var current = 0
        let start = Timing.clock.now
        do {
            for t in 0 ..< n {
                current = t
                let author = authors[trace.agents[t]]
                let parents = trace.parents[t]
                let doc: Document
                if let first = parents.first {
                    guard let parentDoc = docs[first] else { throw BenchError.replayFailed("parent \(first) is gone") }
                    pending[first] -= 1
                    if pending[first] == 0 {
                        doc = parentDoc
                        docs[first] = nil
                        doc.author = author
                    } else {
                        doc = parentDoc.fork(author: author)
                        forks += 1
                    }
                    for p in parents.dropFirst() {
                        guard let other = docs[p] else { throw BenchError.replayFailed("parent \(p) is gone") }
                        try doc.merge(other)
                        merges += 1
                        pending[p] -= 1
                        if pending[p] == 0 { docs[p] = nil }
                    }
                } else {
                    doc = base.fork(author: author)
                    forks += 1
                }
                let patches = trace.patches(ofTxn: t)
                try doc.transaction {
                    for p in patches {
                        if p.deleteCount > 0 { try doc.deleteText(note, range: p.position ..< p.position + p.deleteCount) }
                        if !p.text.isEmpty { try doc.insertText(note, at: p.position, p.text) }
                    }
                }
                docs[t] = doc
            }
        } catch {
            throw .replayFailed("\(trace.path): transaction \(current): \(error)")
        }
        // The heads: documents no later transaction took.
        let heads = docs.compactMap { $0 }
        guard var final = heads.last else { throw .replayFailed("\(trace.path): no transactions") }
        if heads.count > 1 {
            final = heads[0].fork(author: "trace")
            do {
                for h in heads.dropFirst() { try final.merge(h); merges += 1 }
            } catch {
                throw .replayFailed("\(trace.path): merging the heads: \(error)")
            }
        }
        let text = final.note(note)?.body ?? ""
        let elapsed = Timing.clock.now - start
        return ConcurrentReplay(document: final, note: note, text: text, forks: forks, merges: merges,
                                heads: heads.count, elapsed: elapsed)
    }

    /// The result object of `pnbench run` on a concurrent trace. `ok` is the endContent check,
    /// which only a whole trace has (null for a cut one); a replay that fails (the library
    /// refuses an edit or a merge) gives `ok: false` and the `error`.
    static func measure(_ trace: Trace, runs: Int) -> (result: JSON, ok: Bool) {
        Memory.resetPeak()
        let rssStart = Memory.currentMB()
        var times: [Double] = []
        var last: ConcurrentReplay?
        var allSame = true
        var failure: BenchError?
        for _ in 0 ..< runs {
            do {
                let r = try run(trace)
                times.append(Timing.milliseconds(r.elapsed))
                if let last, last.text != r.text { allSame = false }
                last = r
            } catch {
                failure = error
                break
            }
        }
        let ok: Bool?
        if failure != nil {
            ok = false
        } else if trace.isComplete, let r = last {
            ok = r.text == trace.endContent && allSame
        } else {
            ok = nil
        }
        var fields: [(String, JSON)] = [
            ("trace", .string(trace.name)),
            ("kind", .string(trace.kind.rawValue)),
            ("build", .string(buildConfiguration)),
            ("txns", .int(trace.txnCount)),
            ("of_txns", .int(trace.fullTxnCount)),
            ("edits", .int(trace.editCount)),
        ]
        if let r = last {
            fields += [("text_length", .int(r.text.unicodeScalars.count)), ("forks", .int(r.forks)),
                       ("merges", .int(r.merges)), ("heads", .int(r.heads))]
        }
        fields += [
            ("ok", ok.map(JSON.bool) ?? .null),
            ("ok_note", .string(failure != nil ? "the replay failed"
                : trace.isComplete ? "final text == endContent" + (runs > 1 ? " (every run)" : "")
                : "endContent describes the whole trace: not checked for a cut trace")),
        ]
        if let failure { fields.append(("error", .string(failure.description))) }
        fields += [
            ("total_ms", times.isEmpty ? .null : .number(Timing.median(times))),
            ("peak_rss_mb", .number(Memory.peakMB())),
            ("rss_start_mb", rssStart.map(JSON.number) ?? .null),
            ("runs", .object([("total", .int(times.count)), ("statistic", .string("median"))])),
        ]
        return (.object(fields), failure == nil && (ok ?? allSame))
    }
}
