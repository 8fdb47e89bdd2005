/// What a reader of a file that stores each note body's structure (the proposed format version 3,
/// docs/FORMAT-V3.md, "Reading a version 3 block") checks before it builds the bodies from their
/// structures instead of replaying the history, and what it gives the log once they are built.
/// Nothing reads such files yet: these are tested on the structures of documents replayed as now.
extension OpLog {
    /// Why `structures` (note bodies, each as its runs in list order, tombstones included) are
    /// not the bodies this log's ops make, as far as the ops decide it; nil when they are: every
    /// element is a unit of an insertText op into that note, each element is listed once, every
    /// such unit is listed, and an element is deleted exactly when a deleteText op (of that
    /// note) targets it. The order is not checked: it is what the structure states, and the
    /// origins derived from it rebuild it (`DerivedOrigins`).
    func structureProblem(_ structures: [(note: LocalID, runs: [StructureRun])]) -> String? {
        let units = lvCount
        var noteIndex: [LocalID: Int32] = [:]
        for (k, s) in structures.enumerated() {
            guard noteIndex.updateValue(Int32(k), forKey: s.note) == nil else { return "note \(name(s.note)) has two structures" }
        }
        // Per op unit: the structure of the note it inserted into, or -1 (not an insert); -2 once
        // a structure listed it.
        var insertedInto = [Int32](repeating: -1, count: units)
        var targeted = [Bool](repeating: false, count: units)
        let listed: Int32 = -2
        for op in ops {
            guard case .insertText(let note, _, _, _) = op.body else { continue }
            guard let k = noteIndex[note] else { return "an insert into note \(name(note)), which has no structure" }
            for lv in op.lv ..< op.lv + op.length { insertedInto[lv] = k }
        }
        for op in ops {
            guard case .deleteText(let note, let target, let reversed) = op.body else { continue }
            guard let k = noteIndex[note] else { return "a delete in note \(name(note)), which has no structure" }
            // The targets are one replica's consecutive units (counting down when reversed).
            var counter = reversed ? Int(target.counter) - (op.length - 1) : Int(target.counter)
            var remaining = op.length
            guard counter >= 0 else { return "a delete in note \(name(note)) counts down past the first element" }
            while remaining > 0 {
                guard let (lv, count) = changes.lvSpan(agent: target.agent, counter: UInt32(counter)) else {
                    return "a delete in note \(name(note)) targets an element the history lacks"
                }
                let take = min(count, remaining)
                for t in lv ..< lv + take {
                    guard insertedInto[t] == k else { return "a delete in note \(name(note)) targets an element of another note" }
                    targeted[t] = true
                }
                counter += take
                remaining -= take
            }
        }
        for (k, s) in structures.enumerated() {
            let total = s.runs.reduce(0) { $0 + $1.length }
            guard total <= units, let ranks = localVersions(of: s.runs, total: total) else {
                return "the structure of note \(name(s.note)) lists an element the history lacks"
            }
            var e = 0
            for run in s.runs {
                for _ in 0 ..< run.length {
                    let lv = ranks[e]
                    e += 1
                    if insertedInto[lv] == listed { return "the structure of note \(name(s.note)) lists an element twice" }
                    guard insertedInto[lv] == Int32(k) else { return "the structure of note \(name(s.note)) lists an element that is not an insert into it" }
                    guard targeted[lv] == run.deleted else {
                        return run.deleted ? "the structure of note \(name(s.note)) shows an element deleted that no delete targets"
                                           : "the structure of note \(name(s.note)) shows a deleted element as visible"
                    }
                    insertedInto[lv] = listed
                }
            }
        }
        if let lv = insertedInto.firstIndex(where: { $0 >= 0 }) {
            return "an insert into note \(name(structures[Int(insertedInto[lv])].note)) is missing from its structure"
        }
        return nil
    }

    /// Gives every insertText op the origins its first unit has in `bodies[note]` (the bodies
    /// built from their structures): the origins a file of version 3 leaves out. False, changing
    /// nothing, when an op's note has no body here or its first unit is not in it.
    mutating func takeInsertOrigins(from bodies: [LocalID: ListCRDT<Unicode.Scalar>]) -> Bool {
        var updated = ops
        for i in updated.indices {
            guard case .insertText(let note, _, _, let start) = updated[i].body else { continue }
            guard let body = bodies[note], let (left, right) = body.origins(of: localID(ofLV: updated[i].lv, change: changeIndex(containingLV: updated[i].lv))) else {
                return false
            }
            updated[i].body = .insertText(note: note, originLeft: left, originRight: right, contentStart: start)
        }
        replaceOps(updated)
        return true
    }

    /// `id` as messages name an op unit (counter@replica).
    private func name(_ id: LocalID) -> String {
        "\(id.counter)@\(Int(id.agent) < replicas.count ? replicas[Int(id.agent)].short : "?")"
    }
}
