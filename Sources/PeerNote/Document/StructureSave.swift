/// What a compact save adds for format version 3 (peernote(5), "State section" and column 49):
/// each note body's structure in the state section, and the origins of the inserts that follow
/// from it left out of the op columns.
extension Document {
    /// Gives every note of `block`'s state section its body's structure (canonical runs, in the
    /// block's replica indices), and replaces with `LocalID.unstated` the origins of every insert
    /// op of the block whose first unit's origins are the ones the structure gives. `order` is the
    /// block's changes in row order (change `order[k]` on row `k`), `blockIndex` each log agent's
    /// index in the block's replica table. The block holds the whole log (a compact save).
    /// Leaves `block` as it is (a version 2 block) if some element of a body is not a unit of
    /// the block's changes, which a document's log never lacks.
    func storeStructures(in block: inout WireBlock, order: ChangeIndices, blockIndex: [UInt32]) {
        guard var section = block.state else { return }
        let log = self.log, state = self.state
        var structures: [[StructureRun]] = []
        for k in section.notes.indices {
            let entry = section.notes[k]
            let noteID = LocalID(agent: log.existingAgent(for: block.replicas[entry.replica]) ?? .max, counter: entry.counter)
            guard let slot = state.slot(of: noteID) else { return }
            // The body's runs, joined where they continue each other, in the block's replica indices.
            var runs: [StructureRun] = []
            state.noteStates[slot].body.forEachRun { id, length, deleted, _ in
                let id = LocalID(agent: blockIndex[Int(id.agent)], counter: id.counter)
                if let last = runs.last, last.id.agent == id.agent, last.deleted == deleted, Int(last.id.counter) + last.length == Int(id.counter) {
                    runs[runs.count - 1].length += length
                } else if length > 0 {
                    runs.append(StructureRun(id: id, length: length, deleted: deleted))
                }
            }
            section.notes[k].structure = runs.map { WireStructureRun(replica: Int($0.id.agent), counter: $0.id.counter, length: $0.length, deleted: $0.deleted) }
            structures.append(runs)
        }
        // The rows, those that continue the row before (typing: one change a keystroke) joined.
        // A stretch of the order that counts up within one run of the change table is one row.
        var rows: [(replica: Int, counter: Int, length: Int)] = []
        var k = 0
        while k < order.count {
            let ci = order[k]
            let j = order.consecutiveEnd(after: k, below: log.changes.runEnd(of: ci))
            let last = order[j - 1]
            DerivedBlockOrigins.append(replica: Int(blockIndex[Int(log.changes.agent(ci))]), counter: Int(log.changes.counterStart(ci)),
                                       length: log.changes.lvEnd(last) - log.changes.lvStart(ci), to: &rows)
            k = j
        }
        let derived = DerivedBlockOrigins(rows: rows, replicaCount: block.replicas.count, ops: block.ops)
        guard let origins = derived.firstUnitOrigins(structures: structures, skippingUnmatched: false) else { return }
        block.state = nil   // (not a second reference to the section while it is replaced)
        for (k, left, right) in origins {
            guard case .insertText(let note, let l, let r, let start) = block.ops[k].body else { continue }
            if l == left && r == right {
                block.ops[k].body = .insertText(note: note, originLeft: .unstated, originRight: .unstated, contentStart: start)
            }
        }
        block.state = section
    }
}

extension WireBlock {
    /// This base block (read from a file of format version 3) with the origins it leaves out
    /// stated: those its notes' structures give, found from the block alone, nothing checked
    /// against the history. Salvage replays a block change by change, and checks as it goes; an
    /// insert whose unit no structure lists keeps `LocalID.unstated`, which nothing integrates.
    func statingDerivedOrigins() -> WireBlock {
        guard let section = state, section.storesStructures, offset == 0 else { return self }
        var counters = [Int](repeating: 0, count: replicas.count)
        var rows: [(replica: Int, counter: Int, length: Int)] = []
        for c in changes {
            guard c.replica >= 0 && c.replica < replicas.count else { return self }
            DerivedBlockOrigins.append(replica: c.replica, counter: counters[c.replica], length: c.length, to: &rows)
            counters[c.replica] += c.length
        }
        let structures = section.notes.map { note in
            (note.structure ?? []).map { StructureRun(id: LocalID(agent: UInt32($0.replica), counter: $0.counter), length: $0.length, deleted: $0.deleted) }
        }
        let derived = DerivedBlockOrigins(rows: rows, replicaCount: replicas.count, ops: ops)
        guard let origins = derived.firstUnitOrigins(structures: structures, skippingUnmatched: true) else { return self }
        var stated = self
        for (k, left, right) in origins {
            guard case .insertText(let note, let l, _, let start) = stated.ops[k].body, l.isUnstated else { continue }
            stated.ops[k].body = .insertText(note: note, originLeft: left, originRight: right, contentStart: start)
        }
        return stated
    }
}

/// The origins a block's structures give the first unit of each of its insert ops (peernote(5),
/// "Origins from the structure"): a unit's rank is its position in the block, rows in order.
/// Replicas are the block's indices; ids in structures and origins use them as agents.
struct DerivedBlockOrigins {
    /// Per replica, its rows in counter order: where each starts among the replica's counters
    /// and among the block's units.
    private var replicaRows: [[(counter: Int, unit: Int, length: Int)]]
    /// Per replica, the first unit of each of its insert ops, in counter order.
    private var insertFirsts: [[(counter: Int, op: Int)]]

    /// Appends a row (a change: its replica, first counter and length) to `rows`, joined to the
    /// last one when it continues it (the same replica, the next counter): the rows a block's
    /// units follow, fewer of them.
    static func append(replica: Int, counter: Int, length: Int, to rows: inout [(replica: Int, counter: Int, length: Int)]) {
        if let last = rows.last, last.replica == replica, last.counter + last.length == counter {
            rows[rows.count - 1].length += length
        } else {
            rows.append((replica, counter, length))
        }
    }

    /// `rows` are the block's changes in row order (or runs of them that continue each other:
    /// `append(replica:counter:length:to:)`); `ops` its ops (`lv` the position of an op's first
    /// unit in the block).
    init(rows: [(replica: Int, counter: Int, length: Int)], replicaCount: Int, ops: [Op]) {
        replicaRows = Array(repeating: [], count: replicaCount)
        var starts: [(replica: Int, counter: Int, unit: Int)] = []
        starts.reserveCapacity(rows.count)
        var unit = 0
        for row in rows {
            starts.append((row.replica, row.counter, unit))
            if row.length > 0 { replicaRows[row.replica].append((row.counter, unit, row.length)) }
            unit += row.length
        }
        insertFirsts = Array(repeating: [], count: replicaCount)
        var r = 0
        for (k, op) in ops.enumerated() {
            guard case .insertText = op.body, !starts.isEmpty else { continue }
            while r + 1 < starts.count && starts[r + 1].unit <= op.lv { r += 1 }
            let start = starts[r]
            insertFirsts[start.replica].append((start.counter + op.lv - start.unit, k))
        }
        // In counter order (a readable block holds each replica's changes so; a log may not).
        for a in 0 ..< replicaCount {
            if zip(replicaRows[a], replicaRows[a].dropFirst()).contains(where: { $0.counter >= $1.counter }) { replicaRows[a].sort { $0.counter < $1.counter } }
            if zip(insertFirsts[a], insertFirsts[a].dropFirst()).contains(where: { $0.counter >= $1.counter }) { insertFirsts[a].sort { $0.counter < $1.counter } }
        }
    }

    /// The ranks of a structure's elements, or nil when one is not a unit of the block.
    private func ranks(of runs: [StructureRun]) -> [Int]? {
        var ranks: [Int] = []
        ranks.reserveCapacity(runs.reduce(0) { $0 + $1.length })
        for run in runs {
            guard Int(run.id.agent) < replicaRows.count else { return nil }
            let rows = replicaRows[Int(run.id.agent)]
            var counter = Int(run.id.counter), remaining = run.length
            // The replica's last row starting at or before the counter.
            var lo = 0, hi = rows.count
            while lo < hi { let mid = (lo + hi) / 2; if rows[mid].counter <= counter { lo = mid + 1 } else { hi = mid } }
            var r = lo - 1
            while remaining > 0 {
                guard r >= 0, r < rows.count else { return nil }
                let take = min(remaining, rows[r].counter + rows[r].length - counter)
                guard take > 0 else { return nil }
                let first = rows[r].unit + counter - rows[r].counter
                for t in 0 ..< take { ranks.append(first + t) }
                counter += take
                remaining -= take
                r += 1
            }
        }
        return ranks
    }

    /// For every insert op whose first unit a structure lists: the op's index and that unit's
    /// derived origins. A structure listing an element the block lacks, or twice: nil, or with
    /// `skippingUnmatched`, that structure skipped.
    func firstUnitOrigins(structures: [[StructureRun]], skippingUnmatched: Bool) -> [(op: Int, left: LocalID, right: LocalID)]? {
        var out: [(op: Int, left: LocalID, right: LocalID)] = []
        for runs in structures where !runs.isEmpty {
            // (A document's own bodies list each unit once; a file's are checked.)
            guard let ranks = ranks(of: runs), !skippingUnmatched || Set(ranks).count == ranks.count else {
                if skippingUnmatched { continue }
                return nil
            }
            let (list, firstOf) = ListCRDT<Unicode.Scalar>.runs(structure: runs, ranks: ranks)
            var element = 0
            for (s, run) in runs.enumerated() {
                defer { element += run.length }
                let firsts = insertFirsts[Int(run.id.agent)]
                let from = Int(run.id.counter), to = from + run.length
                var lo = 0, hi = firsts.count
                while lo < hi { let mid = (lo + hi) / 2; if firsts[mid].counter < from { lo = mid + 1 } else { hi = mid } }
                var at = firstOf[s]
                while lo < firsts.count && firsts[lo].counter < to {
                    let e = element + firsts[lo].counter - from
                    while at + 1 < list.count && list[at + 1].contentStart <= e { at += 1 }
                    out.append((firsts[lo].op, list[at].originLeft(at: e - list[at].contentStart), list[at].originRight))
                    lo += 1
                }
            }
        }
        return out
    }
}
