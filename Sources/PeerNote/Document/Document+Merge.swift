import Foundation

extension Document {
    /// Whether `other` is a copy of this document that shares its history.
    public func relation(to other: Document) -> HistoryRelation {
        guard id == other.id else { return .differentDocuments(id, other.id) }
        guard genesis == other.genesis else { return .differentOrigin(document: id, genesis, other.genesis) }
        // Chained fingerprints: agreeing on each replica's last shared change means agreeing on
        // every shared change (each is in the causal past of its replica's last shared one).
        for (a, replica) in other.log.replicas.enumerated() {
            guard let mine = log.existingAgent(for: replica) else { continue }
            let shared = min(log.changeCount(of: mine), other.log.changeCount(of: UInt32(a)))
            guard shared > 0, let ours = log.changeIndex(agent: mine, seq: UInt32(shared)),
                  let theirs = other.log.changeIndex(agent: UInt32(a), seq: UInt32(shared)) else { continue }
            if log.fingerprint(ofChange: ours) != other.log.fingerprint(ofChange: theirs) {
                return .conflictingChange(firstDifference(with: other) ?? other.log.changeID(theirs))
            }
        }
        return .shared
    }

    /// The earliest change both copies hold with different content (a full comparison, only
    /// run once fingerprints disagree, to name the culprit).
    private func firstDifference(with other: Document) -> ChangeID? {
        for ci in 0 ..< other.log.changes.count {
            let cid = other.log.changeID(ci)
            guard let mine = log.changeIndex(of: cid) else { continue }
            if !sameContent(mine, other, ci) { return cid }
        }
        return nil
    }

    /// Whether our change `mine` and `other`'s change `theirs` (same id) say the same thing.
    private func sameContent(_ mine: Int, _ other: Document, _ theirs: Int) -> Bool {
        let a = log.changes[mine], b = other.log.changes[theirs]
        guard a.length == b.length, a.counterStart == b.counterStart, a.time == b.time,
              log.author(of: mine) == other.log.author(of: theirs), log.message(of: mine) == other.log.message(of: theirs),
              log.extra(of: mine) == other.log.extra(of: theirs), a.depCount == b.depCount else { return false }
        let depsA = log.deps(of: mine).map(log.changeID).sorted()
        let depsB = other.log.deps(of: theirs).map(other.log.changeID).sorted()
        guard depsA == depsB else { return false }
        let opsA = log.ops(ofChange: mine)
        let opsB = other.log.ops(ofChange: theirs)
        guard opsA.count == opsB.count else { return false }
        for (x, y) in zip(opsA, opsB) {
            guard x.length == y.length else { return false }
            let mapped = y.body.mapIDs { other.translate($0, to: self) }
            if !equalBodies(x, log.text, mapped, other.log.text, y) { return false }
        }
        return true
    }

    private func equalBodies(_ x: Op, _ textA: [Unicode.Scalar], _ yBody: OpBody, _ textB: [Unicode.Scalar], _ y: Op) -> Bool {
        if case .insertText(let n1, let l1, let r1, let s1) = x.body, case .insertText(let n2, let l2, let r2, let s2) = yBody {
            return n1 == n2 && l1 == l2 && r1 == r2 && textA[s1 ..< s1 + x.length].elementsEqual(textB[s2 ..< s2 + y.length])
        }
        return x.body == yBody
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
