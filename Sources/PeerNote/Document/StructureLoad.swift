/// One note body as a file storing its structure (format version 3, peernote(5), "State
/// section") gives it to a reader: the note, the body's runs in list order (tombstones
/// included), and its elements in that order (a store, as the built body keeps them: one byte
/// a character while none is past U+00FF). Unverified: `OpLog.buildBodies(from:)` checks it
/// against the log's history before it builds anything.
struct StoredBody: Sendable {
    var note: LocalID
    var runs: [StructureRun]
    var elements: ScalarStore
}

/// What a reader of a file that stores each note body's structure (format version 3,
/// docs/FORMAT-V3.md, "Reading a version 3 block") does instead of replaying the history to build
/// the bodies: check the structures against the log, build each body from its structure, and give
/// the log's inserts the origins the file leaves out. The load of a version 3 base block calls it
/// (`Persistence.swift`); `pnbench origins` runs it on the structures of replayed documents.
extension OpLog {
    /// The bodies built from `stored` (`ListCRDT(structure:elements:ranks:)`), in its order, once
    /// they are checked to be the bodies this log's ops make as far as the ops decide it: every
    /// element is a unit of an insertText op into that note, each element is listed once, every
    /// such unit is listed, and an element is deleted exactly when a deleteText op (of that note)
    /// targets it. Every insertText op of the log then gets the origins its first unit has in the
    /// built body. Else what is wrong, the log unchanged. The order is not checked: it is what the
    /// structure states, and the origins derived from it rebuild it (`DerivedOrigins`).
    ///
    /// One walk does it, in local-version order: the ops, the structures' runs cut where the
    /// change table cuts them (one sort of their starts), and the deletes' targets joined where
    /// they overlap (one sort more), each compared a span at a time, not element by element.
    ///
    /// The characters of each insert are the elements the structure lists for its units: with
    /// `fillingText`, they are written into the log's text (a reader's log holds placeholders
    /// there until now). An insert whose units the structure lists apart, with an element of a
    /// smaller rank between two of them, is refused: an op's units follow each other (each one's
    /// left origin is the one before it), which the origins derived from such a structure would
    /// contradict.
    mutating func buildBodies(from stored: [StoredBody], fillingText: Bool = false) -> Result<[ListCRDT<Unicode.Scalar>], StructureProblem> {
        do throws(StructureProblem) {
            // Local versions are sorted as 32-bit numbers.
            guard lvCount <= 1 << 32 else { throw StructureProblem(message: "the history is too long for its bodies to be built from their structures") }
            let notes = try structureLookup(stored)
            // Where each agent's last lookup landed among its runs (`ChangeTable.lvSpan(agent:counter:hint:)`).
            // (Through a pointer: the closures of the steps would otherwise retain the array at each lookup.)
            let hints = UnsafeMutableBufferPointer<Int>.allocate(capacity: replicas.count)
            hints.initialize(repeating: 0)
            defer { hints.deallocate() }
            let (spans, firstSpans) = try listedSpans(stored, hints: hints)
            hints.update(repeating: 0)
            let targets = try deleteTargets(stored, notes: notes, hints: hints)
            let walk = try matchOps(stored, notes: notes, spans: spans, targets: targets, fillingText: fillingText)
            let runs = try bodyRuns(stored, spans: spans, firstSpans: firstSpans)
            let origins = try insertOrigins(stored, runs: runs, walk: walk)
            if fillingText { fillText(stored, walk.textChunks) }
            var bodies: [ListCRDT<Unicode.Scalar>] = []
            bodies.reserveCapacity(stored.count)
            for (list, body) in zip(runs, stored) { bodies.append(ListCRDT(tree: ListTree(runs: list.runs, store: body.elements))) }
            setInsertOrigins(origins)
            return .success(bodies)
        } catch {
            return .failure(error)
        }
    }

    /// Step 1: each structure's index in `stored` by its note; a note with two structures is refused.
    private func structureLookup(_ stored: [StoredBody]) throws(StructureProblem) -> NoteLookup {
        var noteIndex: [LocalID: Int32] = [:]
        noteIndex.reserveCapacity(stored.count)
        for (k, body) in stored.enumerated() {
            guard noteIndex.updateValue(Int32(k), forKey: body.note) == nil else { throw StructureProblem(message: "note \(name(body.note)) has two structures") }
        }
        return NoteLookup(indices: noteIndex)
    }

    /// Step 2: the structures as spans of consecutive local versions, in the order of `stored`
    /// and of each body's elements: a structure run is one lookup per change-table run it
    /// covers. With the index of each body's first span (`firstSpans[k]`; one more entry, the
    /// spans' count), from which step 5 takes each body's ranks when it needs them: held for
    /// all the bodies at once, the ranks would take eight bytes a character (37 MB for a
    /// 20,000-note notebook). Refused when a structure lists an element the history lacks.
    private func listedSpans(_ stored: [StoredBody], hints: UnsafeMutableBufferPointer<Int>) throws(StructureProblem) -> (spans: [ListedSpan], firstSpans: [Int]) {
        let units = lvCount
        var spans: [ListedSpan] = []
        // A structure run is one span unless it crosses changes (some do).
        let runCount = stored.reduce(0) { $0 + $1.runs.count }
        spans.reserveCapacity(runCount + runCount / 2 + 16)
        var firstSpans: [Int] = []
        firstSpans.reserveCapacity(stored.count + 1)
        for (k, body) in stored.enumerated() {
            firstSpans.append(spans.count)
            var total = 0
            for run in body.runs {
                // (A run past the last counter would wrap round to the agent's first units.)
                guard run.length > 0, run.length <= units - total, Int(run.id.counter) + run.length <= 1 << 32 else {
                    throw StructureProblem(message: "the structure of note \(name(body.note)) lists an element the history lacks")
                }
                total += run.length
            }
            var e = 0
            for (runIndex, run) in body.runs.enumerated() {
                var counter = run.id.counter, remaining = run.length
                while remaining > 0 {
                    let a = Int(run.id.agent)
                    guard a < hints.count, let (lv, count) = changes.lvSpan(agent: run.id.agent, counter: counter, hint: &hints[a]) else {
                        throw StructureProblem(message: "the structure of note \(name(body.note)) lists an element the history lacks")
                    }
                    let take = min(remaining, count)
                    spans.append(ListedSpan(lv: lv, length: take, element: e, run: runIndex, body: Int32(k), deleted: run.deleted,
                                            startsRun: remaining == run.length))
                    e += take
                    remaining -= take
                    counter &+= UInt32(take)
                }
            }
        }
        firstSpans.append(spans.count)
        return (spans, firstSpans)
    }

    /// Step 3: the deletes' targets, joined where they touch or overlap (concurrent deletes of
    /// one element), in local-version order. Refused when a delete is in a note without a
    /// structure, targets an element the history lacks, or one of another note.
    private func deleteTargets(_ stored: [StoredBody], notes: NoteLookup, hints: UnsafeMutableBufferPointer<Int>) throws(StructureProblem) -> [DeleteTarget] {
        var targetSpans: [(lv: Int, length: Int, body: Int32)] = []
        targetSpans.reserveCapacity(ops.count / 2 + 16)
        let deleteProblem: String? = ops.withContiguousOps { ops in
            var notes = notes
            for i in ops.indices {
                guard case .deleteText(let note, let target, let reversed) = ops[i].body else { continue }
                let length = ops[i].length
                guard let k = notes.index(of: note) else { return "a delete in note \(name(note)), which has no structure" }
                // The targets are one replica's consecutive units (counting down when reversed).
                var counter = reversed ? Int(target.counter) - (length - 1) : Int(target.counter)
                var remaining = length
                guard counter >= 0 else { return "a delete in note \(name(note)) counts down past the first element" }
                while remaining > 0 {
                    let a = Int(target.agent)
                    guard counter <= Int(UInt32.max), a < hints.count,
                          let (lv, count) = changes.lvSpan(agent: target.agent, counter: UInt32(counter), hint: &hints[a]) else {
                        return "a delete in note \(name(note)) targets an element the history lacks"
                    }
                    let take = min(count, remaining)
                    targetSpans.append((lv, take, k))
                    counter += take
                    remaining -= take
                }
            }
            return nil
        }
        if let deleteProblem { throw StructureProblem(message: deleteProblem) }
        var targets: [DeleteTarget] = []
        for i in Self.lvOrder(targetSpans.count, { targetSpans[$0].lv }) {
            let t = targetSpans[i]
            if let j = targets.indices.last, t.lv < targets[j].end || (t.lv == targets[j].end && t.body == targets[j].body) {
                guard t.body == targets[j].body else {
                    throw StructureProblem(message: "a delete in note \(name(stored[Int(t.body)].note)) targets an element of another note")
                }
                targets[j].end = max(targets[j].end, t.lv + t.length)
            } else {
                targets.append(DeleteTarget(lv: t.lv, end: t.lv + t.length, body: t.body))
            }
        }
        return targets
    }

    /// Step 4, the walk: the ops against the listed spans and the delete targets, in
    /// local-version order, a span at a time. Every insert unit must be listed once, in its
    /// note's structure; an element is deleted exactly when a delete targets it. Gives where
    /// each insert's first element is, the structure runs that start inside an insert, and (with
    /// `fillingText`) where each chunk's characters go in the log's text.
    private func matchOps(_ stored: [StoredBody], notes: NoteLookup, spans: [ListedSpan], targets: [DeleteTarget],
                          fillingText: Bool) throws(StructureProblem) -> StructureWalk {
        let spanOrder = Self.lvOrder(spans.count) { spans[$0].lv }
        // `current` is the listed span being matched (its part from `pos` on); the targets
        // before `ti` and `targets[ti]` up to `tpos` are matched.
        var si = 0
        var current = ListedSpan(lv: 0, length: 0, element: 0, run: 0, body: -1, deleted: false, startsRun: false)
        var pos = 0, end = 0
        @inline(__always) func nextSpan() {
            if si < spanOrder.count {
                current = spans[spanOrder[si]]
                pos = current.lv
                end = current.lv + current.length
                si += 1
            } else {
                pos = Int.max
                end = Int.max
            }
        }
        var ti = 0
        var tpos = targets.first?.lv ?? Int.max
        var walk = StructureWalk()
        walk.firsts.reserveCapacity(ops.count)
        if fillingText { walk.textChunks.reserveCapacity(spans.count + ops.count / 4 + 16) }
        let walkProblem: String? = ops.withContiguousOps { ops in
            var notes = notes
            for i in ops.indices {
                let opStart = ops[i].lv, opEnd = opStart + ops[i].length
                if pos == end { nextSpan() }
                guard case .insertText(let note, _, _, let textStart) = ops[i].body else {
                    guard pos >= opEnd else { return "the structure of note \(name(stored[Int(current.body)].note)) lists an element that is not an insert into it" }
                    continue
                }
                guard let k = notes.index(of: note) else { return "an insert into note \(name(note)), which has no structure" }
                var at = opStart
                while at < opEnd {
                    if pos == end { nextSpan() }
                    guard pos <= at else { return "an insert into note \(name(note)) is missing from its structure" }
                    guard pos == at else { return "the structure of note \(name(stored[Int(current.body)].note)) lists an element twice" }
                    guard current.body == k else { return "the structure of note \(name(stored[Int(current.body)].note)) lists an element that is not an insert into it" }
                    let element = current.element + (pos - current.lv)
                    if at == opStart {
                        walk.firsts.append((i, k, element, current.run))
                    } else if current.startsRun && pos == current.lv {
                        walk.inside.append((k, element, current.run))
                    }
                    let chunkEnd = min(end, opEnd)
                    if fillingText { walk.textChunks.append((textStart + at - opStart, k, element, chunkEnd - at)) }
                    // The targets wholly before this chunk must all have been matched.
                    while ti < targets.count && targets[ti].end <= at {
                        guard tpos >= targets[ti].end else { return "a delete in note \(name(stored[Int(targets[ti].body)].note)) targets an element of another note" }
                        ti += 1
                        tpos = ti < targets.count ? targets[ti].lv : Int.max
                    }
                    if current.deleted {
                        guard ti < targets.count, targets[ti].lv <= at, chunkEnd <= targets[ti].end else {
                            return "the structure of note \(name(note)) shows an element deleted that no delete targets"
                        }
                        guard tpos == at, targets[ti].body == k else {
                            return "a delete in note \(name(stored[Int(targets[ti].body)].note)) targets an element of another note"
                        }
                        tpos = chunkEnd
                    } else if ti < targets.count && targets[ti].lv < chunkEnd {
                        return targets[ti].body == k ? "the structure of note \(name(note)) shows a deleted element as visible"
                                                     : "a delete in note \(name(stored[Int(targets[ti].body)].note)) targets an element of another note"
                    }
                    pos = chunkEnd
                    at = chunkEnd
                }
            }
            return nil
        }
        if let walkProblem { throw StructureProblem(message: walkProblem) }
        if pos == end { nextSpan() }
        guard pos == Int.max else {
            throw StructureProblem(message: "the structure of note \(name(stored[Int(current.body)].note)) lists an element that is not an insert into it")
        }
        while ti < targets.count {
            guard tpos >= targets[ti].end else {
                throw StructureProblem(message: "a delete in note \(name(stored[Int(targets[ti].body)].note)) targets an element of another note")
            }
            ti += 1
            tpos = ti < targets.count ? targets[ti].lv : Int.max
        }
        return walk
    }

    /// Step 5: each body's list runs (`ListCRDT.runs(structure:ranks:)`), once its text is found
    /// to have one character per element of its structure. Each body's ranks (every element's
    /// local version) are written from its spans into one buffer, which the next body reuses.
    private func bodyRuns(_ stored: [StoredBody], spans: [ListedSpan], firstSpans: [Int]) throws(StructureProblem) -> [(runs: [ListRun], firstOf: [Int])] {
        var runs: [(runs: [ListRun], firstOf: [Int])] = []
        runs.reserveCapacity(stored.count)
        var ranks: [Int] = []
        for (k, body) in stored.enumerated() {
            let bodySpans = spans[firstSpans[k] ..< firstSpans[k + 1]]
            ranks.removeAll(keepingCapacity: true)
            // Exactly the body's elements (grown by doubling, a long body's ranks would take up
            // to twice its size).
            ranks.reserveCapacity(bodySpans.reduce(0) { $0 + $1.length })
            for span in bodySpans {
                ranks.append(contentsOf: span.lv ..< span.lv + span.length)
            }
            guard body.elements.count == ranks.count else {
                throw StructureProblem(message: "the structure of note \(name(body.note)) has \(ranks.count) elements and its text \(body.elements.count)")
            }
            runs.append(ListCRDT<Unicode.Scalar>.runs(structure: body.runs, ranks: ranks))
        }
        return runs
    }

    /// Step 6: each insert's origins, those of its first element in its body; refused when a
    /// structure run starting inside an insert does not follow the insert's unit before it
    /// (the structure lists one insert's characters apart).
    private func insertOrigins(_ stored: [StoredBody], runs: [(runs: [ListRun], firstOf: [Int])],
                               walk: StructureWalk) throws(StructureProblem) -> [(op: Int, left: LocalID, right: LocalID)] {
        var origins: [(op: Int, left: LocalID, right: LocalID)] = []
        origins.reserveCapacity(walk.firsts.count)
        for (op, k, element, r) in walk.firsts {
            let (list, firstOf) = runs[Int(k)]
            // The list run holding the element: its structure run's first, or one after it.
            var at = firstOf[r]
            while at + 1 < list.count && list[at + 1].contentStart <= element { at += 1 }
            let run = list[at]
            origins.append((op, run.originLeft(at: element - run.contentStart), run.originRight))
        }
        for (k, element, r) in walk.inside {
            let (list, firstOf) = runs[Int(k)]
            var at = firstOf[r]
            while at + 1 < list.count && list[at + 1].contentStart <= element { at += 1 }
            let run = stored[Int(k)].runs[r]
            guard run.id.counter > 0, list[at].originLeft(at: element - list[at].contentStart) == run.id.advanced(by: -1) else {
                throw StructureProblem(message: "the structure of note \(name(stored[Int(k)].note)) lists the characters of one insert apart")
            }
        }
        return origins
    }

    /// Step 7 (with `fillingText`): the characters of each insert, the elements the structures
    /// list for its units, written into the log's text.
    private mutating func fillText(_ stored: [StoredBody], _ textChunks: [(text: Int, body: Int32, element: Int, length: Int)]) {
        for (start, k, element, length) in textChunks {
            overwriteInsertedText(from: start, with: stored[Int(k)].elements[element ..< element + length])
        }
    }

    /// The indices `0 ..< count` in the order of `lv(index)` (each in `0 ..< 2^32`; equal ones in
    /// index order).
    private static func lvOrder(_ count: Int, _ lv: (Int) -> Int) -> [Int] {
        RadixSort.order(of: (0 ..< count).map { UInt32(truncatingIfNeeded: lv($0)) })
    }

    /// `id` as messages name an op unit (counter@replica).
    func name(_ id: LocalID) -> String {
        "\(id.counter)@\(Int(id.agent) < replicas.count ? replicas[Int(id.agent)].short : "?")"
    }
}

/// Why a stored structure is not the body a log's ops make (`OpLog.buildBodies(from:)`).
struct StructureProblem: Error, Sendable, Equatable {
    var message: String
}

/// A structure run's part that lies in one run of the change table: `length` elements with
/// consecutive local versions from `lv`, from the element at `element` in body `body`'s list order
/// (in its structure run `run`).
private struct ListedSpan {
    var lv: Int
    var length: Int
    var element: Int
    var run: Int
    var body: Int32
    var deleted: Bool
    /// Whether the span starts its structure run (else it continues the span before it there).
    var startsRun: Bool
}

/// A merged run of delete targets: local versions `lv ..< end`, all in body `body`.
private struct DeleteTarget {
    var lv: Int
    var end: Int
    var body: Int32
}

/// What the walk of `OpLog.buildBodies(from:)` found: each insert op's first element (the op's
/// index, its body, the element's index in it and the structure run holding it); the structure
/// runs that start inside an insert (after its first unit), whose first element's derived left
/// origin must be the unit before it; and, when filling text, where each chunk's characters go
/// in the log's text.
private struct StructureWalk {
    var firsts: [(op: Int, body: Int32, element: Int, run: Int)] = []
    var inside: [(body: Int32, element: Int, run: Int)] = []
    var textChunks: [(text: Int, body: Int32, element: Int, length: Int)] = []
}

/// A note's structure by the note's id, the last one found kept at hand (ops come in runs on one
/// note).
private struct NoteLookup {
    var indices: [LocalID: Int32]
    var last = (note: LocalID.none, index: Int32(-1))

    init(indices: [LocalID: Int32]) { self.indices = indices }

    mutating func index(of note: LocalID) -> Int32? {
        if note == last.note { return last.index }
        guard let k = indices[note] else { return nil }
        last = (note, k)
        return k
    }
}
