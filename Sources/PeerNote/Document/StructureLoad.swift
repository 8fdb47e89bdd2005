/// What a reader of a file that stores each note body's structure (the proposed format version 3,
/// docs/FORMAT-V3.md, "Reading a version 3 block") checks before it builds the bodies from their
/// structures instead of replaying the history, and what it gives the log once they are built.
/// Nothing reads such files yet: these are tested on the structures of documents replayed as now.
extension OpLog {
    /// Why `structures` (note bodies, each as its runs in list order, tombstones included) are
    /// not the bodies this log's ops make, as far as the ops decide it; nil when they are (see
    /// `checkStructures`).
    func structureProblem(_ structures: [(note: LocalID, runs: [StructureRun])]) -> String? {
        if case .failure(let problem) = checkStructures(structures) { return problem.message }
        return nil
    }

    /// Each structure's ranks (its elements' local versions, in list order: what
    /// `ListCRDT(structure:elements:ranks:)` takes) when `structures` are the bodies this log's
    /// ops make as far as the ops decide it: every element is a unit of an insertText op into that
    /// note, each element is listed once, every such unit is listed, and an element is deleted
    /// exactly when a deleteText op (of that note) targets it. Else what is wrong. The order is
    /// not checked: it is what the structure states, and the origins derived from it rebuild it
    /// (`DerivedOrigins`).
    func checkStructures(_ structures: [(note: LocalID, runs: [StructureRun])]) -> Result<[[Int]], StructureProblem> {
        func fail(_ message: String) -> Result<[[Int]], StructureProblem> { .failure(StructureProblem(message: message)) }
        let units = lvCount
        var noteIndex: [LocalID: Int32] = [:]
        for (k, s) in structures.enumerated() {
            guard noteIndex.updateValue(Int32(k), forKey: s.note) == nil else { return fail("note \(name(s.note)) has two structures") }
        }
        // Per op unit: the structure of the note it inserted into, or -1 (not an insert); -2 once
        // a structure listed it.
        var insertedInto = [Int32](repeating: -1, count: units)
        var targeted = [Bool](repeating: false, count: units)
        let listed: Int32 = -2
        // Ops come in runs on one note: the last note's structure is checked before the dictionary.
        var last = (note: LocalID.none, index: Int32(-1))
        func index(of note: LocalID) -> Int32? {
            if note == last.note { return last.index }
            guard let k = noteIndex[note] else { return nil }
            last = (note, k)
            return k
        }
        for op in ops {
            guard case .insertText(let note, _, _, _) = op.body else { continue }
            guard let k = index(of: note) else { return fail("an insert into note \(name(note)), which has no structure") }
            insertedInto.withUnsafeMutableBufferPointer { p in
                guard let base = p.baseAddress else { return }
                (base + op.lv).update(repeating: k, count: op.length)
            }
        }
        for op in ops {
            guard case .deleteText(let note, let target, let reversed) = op.body else { continue }
            guard let k = index(of: note) else { return fail("a delete in note \(name(note)), which has no structure") }
            // The targets are one replica's consecutive units (counting down when reversed).
            var counter = reversed ? Int(target.counter) - (op.length - 1) : Int(target.counter)
            var remaining = op.length
            guard counter >= 0 else { return fail("a delete in note \(name(note)) counts down past the first element") }
            while remaining > 0 {
                guard let (lv, count) = changes.lvSpan(agent: target.agent, counter: UInt32(counter)) else {
                    return fail("a delete in note \(name(note)) targets an element the history lacks")
                }
                let take = min(count, remaining)
                let inNote = insertedInto.withUnsafeBufferPointer { p in p[lv ..< lv + take].allSatisfy { $0 == k } }
                guard inNote else { return fail("a delete in note \(name(note)) targets an element of another note") }
                targeted.withUnsafeMutableBufferPointer { p in
                    guard let base = p.baseAddress else { return }
                    (base + lv).update(repeating: true, count: take)
                }
                counter += take
                remaining -= take
            }
        }
        var allRanks: [[Int]] = []
        allRanks.reserveCapacity(structures.count)
        for (k, s) in structures.enumerated() {
            let total = s.runs.reduce(0) { $0 + $1.length }
            guard total <= units, let ranks = localVersions(of: s.runs, total: total) else {
                return fail("the structure of note \(name(s.note)) lists an element the history lacks")
            }
            let problem: String? = insertedInto.withUnsafeMutableBufferPointer { inserted in
                targeted.withUnsafeBufferPointer { targeted in
                    var e = 0
                    for run in s.runs {
                        for _ in 0 ..< run.length {
                            let lv = ranks[e]
                            e += 1
                            if inserted[lv] == listed { return "the structure of note \(name(s.note)) lists an element twice" }
                            guard inserted[lv] == Int32(k) else { return "the structure of note \(name(s.note)) lists an element that is not an insert into it" }
                            guard targeted[lv] == run.deleted else {
                                return run.deleted ? "the structure of note \(name(s.note)) shows an element deleted that no delete targets"
                                                   : "the structure of note \(name(s.note)) shows a deleted element as visible"
                            }
                            inserted[lv] = listed
                        }
                    }
                    return nil
                }
            }
            if let problem { return fail(problem) }
            allRanks.append(ranks)
        }
        if let lv = insertedInto.firstIndex(where: { $0 >= 0 }) {
            return fail("an insert into note \(name(structures[Int(insertedInto[lv])].note)) is missing from its structure")
        }
        return .success(allRanks)
    }

    /// Gives every insertText op the origins its first unit has in `bodies[note]` (the bodies
    /// built from their structures): the origins a file of version 3 leaves out. Walks each body
    /// once, a run at a time. False, changing nothing, when an op's first unit is in no body, in
    /// another note's, or in two places.
    mutating func takeInsertOrigins(from bodies: [LocalID: ListCRDT<Unicode.Scalar>]) -> Bool {
        // The origins found, by op index; applied once every insert has them.
        var found: [(op: Int, left: LocalID, right: LocalID)] = []
        var failed = false
        let ops = self.ops
        var seen = [Bool](repeating: false, count: ops.count)
        for (note, body) in bodies {
            body.forEachRunWithOrigins { id, length, left, right, _ in
                guard !failed else { return }
                var k = 0
                while k < length {
                    guard let (lv, count) = changes.lvSpan(agent: id.agent, counter: id.counter &+ UInt32(k)) else { failed = true; return }
                    let take = min(count, length - k)
                    // The ops starting among these units (ops are in local-version order).
                    guard !ops.isEmpty else { failed = true; return }
                    var i = opIndex(containingLV: lv)
                    if ops[i].lv < lv { i += 1 }
                    while i < ops.count && ops[i].lv < lv + take {
                        if case .insertText(let n, _, _, _) = ops[i].body {
                            guard n == note, !seen[i] else { failed = true; return }
                            seen[i] = true
                            let t = ops[i].lv - lv
                            found.append((i, k + t == 0 ? left : id.advanced(by: k + t - 1), right))
                        }
                        i += 1
                    }
                    k += take
                }
            }
        }
        let inserts = ops.reduce(0) { n, op in if case .insertText = op.body { n + 1 } else { n } }
        guard !failed, found.count == inserts else { return false }
        setInsertOrigins(found)
        return true
    }

    /// `id` as messages name an op unit (counter@replica).
    private func name(_ id: LocalID) -> String {
        "\(id.counter)@\(Int(id.agent) < replicas.count ? replicas[Int(id.agent)].short : "?")"
    }
}

/// Why a stored structure is not the body a log's ops make (`OpLog.checkStructures`).
struct StructureProblem: Error, Sendable, Equatable {
    var message: String
}
