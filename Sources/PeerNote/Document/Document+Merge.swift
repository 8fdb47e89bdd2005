#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Document {
    /// Whether `other` is a copy of this document that shares its history.
    public func relation(to other: Document) -> HistoryRelation {
        guard id == other.id else { return .differentDocuments(id, other.id) }
        guard genesis == other.genesis else { return .differentOrigin(document: id, genesis, other.genesis) }
        // Every change both copies hold, compared directly while both logs have been checked
        // fewer than twice (a one-off merge: pnmerge checks, then merges; nothing would amortize
        // hashing every change), else by cached fingerprints (documents merged again and again
        // pay for their new changes only).
        if other === self { return .shared }
        let direct = log.sharedHistoryChecks < 2 && other.log.sharedHistoryChecks < 2
        log.sharedHistoryChecks += 1
        other.log.sharedHistoryChecks += 1
        let agree = direct ? log.sharesHistory(with: other.log) : log.sharesHistoryByFingerprints(with: &other.log)
        if agree { return .shared }
        guard let culprit = firstDifference(with: other) else {
            // The change-by-change search is the definition; the stretch walk must agree with it.
            assertionFailure("sharesHistory found a difference that no single change shows")
            return .shared
        }
        return .conflictingChange(culprit)
    }

    /// The earliest change (in `other`'s order) that both copies hold with different content:
    /// a search change by change, only run once the copies are known to disagree, to name it.
    func firstDifference(with other: Document) -> ChangeID? {
        let map = log.agentMap(from: other.log)
        for ci in 0 ..< other.log.changes.count {
            guard let mine = log.changeIndex(of: other.log.changeID(ci)) else { continue }
            if !log.sameChange(mine, other.log, ci, map) { return other.log.changeID(ci) }
        }
        return nil
    }

    /// Translates one of our local ids into `other`'s local ids (nil agent → `.none`).
    func translate(_ id: LocalID, to other: Document) -> LocalID {
        if id.isNone { return id }
        guard let a = other.log.existingAgent(for: log.replicas[Int(id.agent)]) else {
            return LocalID(agent: .max - 1, counter: id.counter)
        }
        return LocalID(agent: a, counter: id.counter)
    }

    /// Merges every change of `other` that this copy lacks. Throws, changing nothing,
    /// when the copies do not share history.
    @discardableResult
    public func merge(_ other: Document) throws(PeerNoteError) -> MergeSummary {
        let relation = relation(to: other)
        guard relation == .shared else { throw .unrelated(relation) }
        var byAuthor: [(author: String, count: Int)] = []
        let (savedLog, savedState) = (log, state)
        // The changes we lack: per replica, those past the ones we have; in their causal order.
        var missing: [Int] = []
        for (a, replica) in other.log.replicas.enumerated() {
            let have = log.existingAgent(for: replica).map { log.changeCount(of: $0) } ?? 0
            let count = other.log.changeCount(of: UInt32(a))
            // The replica's changes past the ones we have, found by seq (a binary search over its runs).
            if count > have {
                for seq in have + 1 ... count {
                    if let ci = other.log.changeIndex(agent: UInt32(a), seq: UInt32(seq)) { missing.append(ci) }
                }
            }
        }
        missing.sort()
        // Grow the log's per-change arrays once, to what they will hold (they are shared with the
        // saved copy, so the first append copies them anyway: without this, into twice the room).
        log.reserve(changes: missing.count)
        for ci in missing {
            do {
                try importChange(ci, from: other.log)
            } catch {
                (log, state) = (savedLog, savedState)
                throw .invalidDocument(offset: nil, message: "change \(other.log.changeID(ci).fullDescription) could not be applied: \(error)")
            }
            let author = other.log.author(of: ci)
            if let i = byAuthor.firstIndex(where: { $0.author == author }) { byAuthor[i].count += 1 } else { byAuthor.append((author, 1)) }
        }
        unknownFields += other.unknownFields.filter { !unknownFields.contains($0) }
        return MergeSummary(changesByAuthor: byAuthor)
    }

    /// Appends change `ci` of `source` (whose dependencies we already hold) and applies its ops.
    func importChange(_ ci: Int, from source: OpLog) throws(ApplyError) {
        let c = source.changes[ci]
        let replica = source.replicas[Int(c.agent)]
        let a = log.agent(for: replica)
        var deps: [Int] = []
        for d in source.deps(of: ci) {
            guard let mine = log.changeIndex(of: source.changeID(d)) else { throw .unknownElement(.none) }
            deps.append(mine)
        }
        let mapAgent: (LocalID) -> LocalID = { [self] id in
            id.isNone ? id : LocalID(agent: log.agent(for: source.replicas[Int(id.agent)]), counter: id.counter)
        }
        let ops = source.ops(ofChange: ci)
        let index = log.beginChange(agent: a, deps: deps, time: c.time, author: source.author(of: ci), message: source.message(of: ci), extra: source.extra(of: ci))
        guard log.changes[index].seq == c.seq, log.changes[index].counterStart == c.counterStart else {
            throw .unknownElement(.none)
        }
        for op in ops {
            var scalars: ArraySlice<Unicode.Scalar> = []
            if case .insertText(_, _, _, let start) = op.body { scalars = source.text[start ..< start + op.length] }
            try appendApplying(op.body.mapIDs { id in mapAgent(id) }, length: op.length, scalars: scalars)
        }
    }

    /// Appends an op to the open change and applies it to the state.
    func appendApplying(_ body: OpBody, length: Int, scalars: ArraySlice<Unicode.Scalar>) throws(ApplyError) {
        let index = log.changes.count - 1
        let id = log.nextID
        let lv = log.lvCount
        let lamport = log.changes[index].lamport + UInt64(log.changes[index].length)
        log.append(body, length: length, scalars: scalars)
        var stored = Op(lv: lv, length: length, body: body)
        if case .insertText(let n, let l, let r, _) = body {
            stored.body = .insertText(note: n, originLeft: l, originRight: r, contentStart: log.text.count - scalars.count)
        }
        try state.apply(stored, id: id, lamport: lamport, replicas: log.replicas, text: log.text)
    }
}

extension OpBody {
    /// The same op with every op id it mentions passed through `f`.
    func mapIDs(_ f: (LocalID) -> LocalID) -> OpBody {
        switch self {
        case .setNotebookTitle(let v, let p): .setNotebookTitle(v, preds: p.map(f))
        case .createNote(let l, let r, let c): .createNote(originLeft: f(l), originRight: f(r), created: c)
        case .setNoteTitle(let n, let v, let p): .setNoteTitle(note: f(n), v, preds: p.map(f))
        case .insertText(let n, let l, let r, let s): .insertText(note: f(n), originLeft: f(l), originRight: f(r), contentStart: s)
        case .deleteText(let n, let t, let rev): .deleteText(note: f(n), target: f(t), reversed: rev)
        case .addTag(let n, let t): .addTag(note: f(n), t)
        case .removeTag(let n, let t, let rm): .removeTag(note: f(n), t, removes: rm.map(f))
        case .setPriority(let n, let v, let p): .setPriority(note: f(n), v, preds: p.map(f))
        case .deleteNote(let n, let p): .deleteNote(note: f(n), preds: p.map(f))
        case .restoreNote(let n, let p): .restoreNote(note: f(n), preds: p.map(f))
        case .moveNote(let n, let l, let r, let p): .moveNote(note: f(n), originLeft: f(l), originRight: f(r), preds: p.map(f))
        case .unknown: self
        }
    }
}
