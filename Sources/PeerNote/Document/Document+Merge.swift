#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Document {
    /// Whether `other` is a copy of this document by identity alone: the same document id and
    /// the same first change (`.shared` then, else why not). A constant-time first step of
    /// `relation(to:)`, which also compares every change both copies hold.
    public func identityRelation(to other: Document) -> HistoryRelation {
        identityRelation(id: other.id, genesis: other.genesis)
    }

    /// `identityRelation(to:)` for the copy `other` was taken from.
    public func identityRelation(to other: MergeSource) -> HistoryRelation {
        identityRelation(id: other.id, genesis: other.genesis)
    }

    private func identityRelation(id otherID: UUID, genesis otherGenesis: ChangeID) -> HistoryRelation {
        guard id == otherID else { return .differentDocuments(id, otherID) }
        guard genesis == otherGenesis else { return .differentOrigin(document: id, genesis, otherGenesis) }
        return .shared
    }

    /// Whether `other` is a copy of this document that shares its history.
    public func relation(to other: Document) -> HistoryRelation {
        let identity = identityRelation(to: other)
        guard identity == .shared else { return identity }
        if other === self { return .shared }
        return historyRelation(with: &other.log)
    }

    /// `relation(to:)` for the copy `other` was taken from.
    public func relation(to other: MergeSource) -> HistoryRelation {
        let identity = identityRelation(to: other)
        guard identity == .shared else { return identity }
        return historyRelation(with: &other.log)
    }

    /// Whether every change both this log and `otherLog` (another copy's, of the same document
    /// and genesis) hold has the same content in both.
    private func historyRelation(with otherLog: inout OpLog) -> HistoryRelation {
        // Every change both copies hold, compared directly while both logs have been checked
        // fewer than twice (a one-off merge: pnmerge checks, then merges; nothing would amortize
        // hashing every change), else by cached fingerprints (documents merged again and again
        // pay for their new changes only).
        // (A log holding some changes without their content has no fingerprints: compared directly.)
        let direct = log.sharedHistoryChecks < 2 && otherLog.sharedHistoryChecks < 2 || otherLog.changesWithoutContent > 0
        log.sharedHistoryChecks += 1
        otherLog.sharedHistoryChecks += 1
        let agree = direct ? log.sharesHistory(with: otherLog) : log.sharesHistoryByFingerprints(with: &otherLog)
        if agree { return .shared }
        guard let culprit = firstDifference(with: otherLog) else {
            // The change-by-change search is the definition; the stretch walk must agree with it.
            assertionFailure("sharesHistory found a difference that no single change shows")
            return .shared
        }
        return .conflictingChange(culprit)
    }

    /// What `other` holds that this copy lacks, counted without merging: its changes this copy
    /// lacks, per author (authors in first-seen order), and the payload fields a newer version
    /// wrote that it carries and this copy does not (what `merge(other)` would bring, as
    /// `MergeSummary.changesByAuthor` and `fieldsAdded` count it). Meaningful for copies that
    /// share history (`relation(to:)`).
    public func lacking(from other: Document) -> (changesByAuthor: [(author: String, count: Int)], fields: Int) {
        let source = other.log
        let fields = other.unknownFields.filter { !unknownFields.contains($0) }.count
        return (source.authorCounts(of: log.missingChanges(from: source)), fields)
    }

    /// The earliest change (in `other`'s order) that both copies hold with different content:
    /// a search change by change, only run once the copies are known to disagree, to name it.
    func firstDifference(with other: OpLog) -> ChangeID? {
        let map = log.agentMap(from: other)
        for ci in other.changesWithoutContent ..< other.changes.count {
            guard let mine = log.changeIndex(of: other.changeID(ci)) else { continue }
            if !log.sameChange(mine, other, ci, map) { return other.changeID(ci) }
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
    /// when the copies do not share history, or when either copy has a transaction open (its
    /// open change is still growing: merged in, or with the other's changes appended after it,
    /// it would end up different in the two copies, which would then never merge again).
    @discardableResult
    public func merge(_ other: Document) throws(PeerNoteError) -> MergeSummary {
        try checkMergeable(with: other)
        return try absorb(log: other.log, unknownFields: other.unknownFields)
    }

    /// `merge(_:)` of the copy `other` was taken from, as it was then: the same changes taken
    /// in, the same summary, the same refusals (a transaction open on that copy then included).
    @discardableResult
    public func merge(_ other: MergeSource) throws(PeerNoteError) -> MergeSummary {
        try checkMergeable(with: other)
        return try absorb(log: other.log, unknownFields: other.unknownFields)
    }

    /// A new document holding the changes of this copy and of `other`, and the summary that
    /// `merge(other)` would return (what `other` brings to this copy); neither copy changes.
    /// The result is what `fork()` of this copy, merged with `other`, would hold and show (same
    /// author, a new replica id), but it is built from whichever copy has the longer history,
    /// taking in the other's changes: the work grows with the changes taken in, so merging a
    /// stale copy with a fresh one costs no more than the other way round. Throws as `merge(_:)`.
    ///
    /// Its incremental save (and `write(over:loaded:)`) appends to the bytes this copy was loaded
    /// from or last saved as, the block this copy's own would append after `merge(other)`.
    public func merged(with other: Document) throws(PeerNoteError) -> sending (document: Document, summary: MergeSummary) {
        try merged(with: other, keepingFile: true)
    }

    /// `merged(with:)`; without `keepingFile`, the result has no file (its incremental save is
    /// compact), which spares working out where this copy's file has each change.
    package func merged(with other: Document, keepingFile: Bool) throws(PeerNoteError) -> sending (document: Document, summary: MergeSummary) {
        try checkMergeable(with: other)
        guard other.log.lvCount > log.lvCount else {
            let result = fork()
            // The fork's log is this one's (plus an agent without changes): the file's changes
            // are its first ones, in the same rows.
            if keepingFile { result.persisted = persisted }
            return (result, try result.absorb(log: other.log, unknownFields: other.unknownFields))
        }
        let result = other.fork(author: author)
        result.core.customClock = core.customClock
        // What `other` brings: its changes this copy lacks, in its order (as `absorb` counts them).
        let brought = log.missingChanges(from: other.log)
        let fieldsAdded = other.unknownFields.filter { !unknownFields.contains($0) }
        try result.absorb(log: log, unknownFields: unknownFields)
        result.unknownFields = unknownFields + fieldsAdded
        let resultLog = result.log
        if keepingFile, let p = persisted { result.persisted = persistedView(p, for: resultLog) }
        let counts = { (copy: OpLog) in
            AgentCounts(counts: copy.agentMap(from: resultLog).map { $0 == OpLog.unknownAgent ? 0 : copy.changeCount(of: $0) })
        }
        let summary = MergeSummary(changesByAuthor: other.log.authorCounts(of: brought),
                                   sides: MergeSides(mine: counts(log), theirs: counts(other.log)), fieldsAdded: fieldsAdded.count)
        return (result, summary)
    }

    /// `merged(with:keepingFile:)` for a caller that lets go of both copies once it has the
    /// result, as `pnmerge merge` does: the copy with the longer history takes in the other's
    /// changes itself and is the result, so that its history is not copied first (a fork's
    /// first append copies the whole log: 0.3–0.6 ms on the benchmark's copies). The result holds,
    /// shows and saves what `merged(with:keepingFile:)`'s would, with the same summary (its
    /// `sides` by the result's agent numbers), and the author of this copy; it keeps its own
    /// replica id (a loaded copy's is new at each load, as a fork's is). The copy that is not the
    /// result is left as it was; so is either one when this throws (as `merge(_:)` does), but for
    /// the record of its file's verified state (`Persisted.verified`), which the copy that takes
    /// the changes in lets go first: its next appending save is checked whole.
    package func mergedInPlace(with other: Document, keepingFile: Bool) throws(PeerNoteError) -> (document: Document, summary: MergeSummary) {
        try checkMergeable(with: other)
        guard other.log.lvCount > log.lvCount else {
            return (self, try takeIn(log: other.log, unknownFields: other.unknownFields, keepingFile: keepingFile))
        }
        // What `other` brings, and what it held, taken before it changes (a copy of its log kept
        // across the merge would be copied by the merge's first append).
        let brought = log.missingChanges(from: other.log)
        let changesByAuthor = other.log.authorCounts(of: brought)
        let fieldsAdded = other.unknownFields.filter { !unknownFields.contains($0) }
        let theirs = (0 ..< other.log.replicas.count).map { other.log.changeCount(of: UInt32($0)) }
        let author = self.author, clock = core.customClock
        // (Its file's verified state is let go, as above: the result's file, if it keeps one, is this copy's.)
        other.persisted?.verified = nil
        try other.absorb(log: log, unknownFields: unknownFields)
        other.author = author
        other.core.customClock = clock
        other.unknownFields = unknownFields + fieldsAdded
        let resultLog = other.log
        other.persisted = keepingFile ? persisted.flatMap { persistedView($0, for: resultLog) } : nil
        // Its agents are `other`'s, then the ones this copy brought: `other`'s counts come first.
        let mine = AgentCounts(counts: log.agentMap(from: resultLog).map { $0 == OpLog.unknownAgent ? 0 : log.changeCount(of: $0) })
        let summary = MergeSummary(changesByAuthor: changesByAuthor,
                                   sides: MergeSides(mine: mine, theirs: AgentCounts(counts: theirs + Array(repeating: 0, count: resultLog.replicas.count - theirs.count))),
                                   fieldsAdded: fieldsAdded.count)
        return (other, summary)
    }

    /// `mergedInPlace(with:keepingFile:)` of the copy `other` was taken from: this copy takes
    /// in its changes and is the result, whichever history is longer (`other` holds no notebook
    /// to build the result from).
    package func mergedInPlace(with other: MergeSource, keepingFile: Bool) throws(PeerNoteError) -> MergeSummary {
        try checkMergeable(with: other)
        return try takeIn(log: other.log, unknownFields: other.unknownFields, keepingFile: keepingFile)
    }

    /// `absorb` for `mergedInPlace`, where this copy is the result.
    private func takeIn(log source: OpLog, unknownFields otherFields: [[UInt8]], keepingFile: Bool) throws(PeerNoteError) -> MergeSummary {
        // The file's verified state shares every note with this copy's: kept across the merge,
        // the merge's first change to a note would copy them all. A result without a file does
        // not need it (nor does a copy whose merge failed: its next appending save is then
        // checked whole, as after a failed check).
        if !keepingFile { persisted?.verified = nil }
        let file = persisted
        let summary = try absorb(log: source, unknownFields: otherFields)
        persisted = keepingFile ? file : nil
        return summary
    }

    /// This copy's file `p` as seen from `other`, a log holding every change this one holds (in
    /// another order, with other agent numbers): the row of each of its changes that the file
    /// holds, and the others in the order this copy's own incremental save would append them
    /// after `merge(_:)` (its changes the file lacks, in its order, then those it lacks, in
    /// `other`'s), each with the row that gives it. Nil when this copy could not append to the
    /// file either (its last change there has grown since).
    private func persistedView(_ p: Persisted, for other: OpLog) -> Persisted? {
        let log = self.log
        guard p.rowOfChange.count <= log.changes.count,
              p.rowOfChange.count == 0 || log.changes.lvEnd(p.rowOfChange.count - 1) == p.units else { return nil }
        let agents = other.replicas.map { log.existingAgent(for: $0) }
        // This copy's changes the file lacks go in the order its own save would append them:
        // those `notInFile` lists, in its order, then those past the file's rows.
        let lacking: [Int: Int]? = p.notInFile.isEmpty ? nil : Dictionary(uniqueKeysWithValues: p.notInFile.enumerated().map { ($1, $0) })
        func rank(_ mine: Int) -> Int { lacking?[mine] ?? p.notInFile.count + mine }
        var rows = [UInt32](repeating: 0, count: other.changes.count)
        var own: [(mine: Int, theirs: Int)] = [], brought: [Int] = []
        // A run of `other`'s changes (one agent's, numbered on) is found here a stretch at a time:
        // the part this copy holds, in as many stretches as this copy's runs cut it into.
        other.changes.forEachRun { first, agent, seqStart, count in
            var k = 0
            if let a = agents[Int(agent)] {
                let held = Swift.min(count, Swift.max(0, log.changeCount(of: a) - Int(seqStart) + 1))
                while k < held, let (index, rest) = log.changes.indexAndRest(agent: a, seq: seqStart + UInt32(k)) {
                    for j in 0 ..< Swift.min(rest, held - k) {
                        let mine = index + j
                        if mine < p.rowOfChange.count && lacking?[mine] == nil {
                            rows[first + k + j] = UInt32(p.rowOfChange[mine])
                        } else {
                            own.append((mine, first + k + j))
                        }
                    }
                    k += Swift.min(rest, held - k)
                }
            }
            for j in k ..< count { brought.append(first + j) }
        }
        own.sort { rank($0.mine) < rank($1.mine) }
        let order = own.map(\.theirs) + brought
        for (k, ci) in order.enumerated() { rows[ci] = UInt32(p.fileChangeCount + k) }
        var view = p
        (view.rowOfChange, view.notInFile, view.units) = (ChangeIndices(rows), order, other.lvCount)
        return view
    }

    /// Throws what `merge(_:)` throws before it changes anything: an open transaction on either
    /// copy, copies that do not share history, or a payload field both carry with other values.
    private func checkMergeable(with other: Document) throws(PeerNoteError) {
        try checkNoTransaction(orOnOther: other.core.transactionDepth > 0)
        try checkMergeable(relation: relation(to: other), fields: other.unknownFields)
    }

    private func checkMergeable(with other: MergeSource) throws(PeerNoteError) {
        try checkNoTransaction(orOnOther: other.transactionWasOpen)
        if let shared = other.sharedFile, !holdsAsRead(shared) {
            throw .invalidArgument("this copy was not read from the file the merged copy was trimmed against; merge a copy kept whole (MergeSource.keepingHistory(of:))")
        }
        try checkMergeable(relation: relation(to: other), fields: other.unknownFields)
    }

    /// Whether this copy holds its first `shared.changes` changes as it read them from a file
    /// whose first `shared.length` bytes are `shared.bytes`' (so it holds the changes a source
    /// trimmed against that file let go of, as they were): its file's bytes start so, and its
    /// first changes are its file's first rows, in their order.
    func holdsAsRead(_ shared: MergeSource.SharedFile) -> Bool {
        guard shared.length > 0, let p = persisted, p.bytes.count >= shared.length, shared.bytes.count >= shared.length,
              p.rowOfChange.count >= shared.changes, log.changes.count >= shared.changes,
              p.notInFile.allSatisfy({ $0 >= shared.changes }) else { return false }
        guard (0 ..< shared.changes).allSatisfy({ p.rowOfChange[$0] == $0 }) else { return false }
        return MergeSource.commonPrefixLength(p.bytes, shared.bytes) >= shared.length
    }

    private func checkNoTransaction(orOnOther otherOpen: Bool) throws(PeerNoteError) {
        guard core.transactionDepth == 0 && !otherOpen else {
            throw .invalidArgument("cannot merge while a transaction is open on \(core.transactionDepth > 0 ? "this copy" : "the other copy"); merge before or after it")
        }
    }

    private func checkMergeable(relation: HistoryRelation, fields otherFields: [[UInt8]]) throws(PeerNoteError) {
        guard relation == .shared else { throw .unrelated(relation) }
        // A field a newer version wrote, with another value here: which to keep is that version's call.
        let keys = Set(unknownFields.compactMap(WireCodec.unknownFieldKey))
        for f in otherFields where !unknownFields.contains(f) {
            if let k = WireCodec.unknownFieldKey(f), keys.contains(k) { throw .fieldConflict(key: k) }
        }
    }

    /// Takes in every change of `other` that this copy lacks (the copies are known to share
    /// history); changes nothing when one cannot be applied.
    /// (Given the other copy's log and fields, values, rather than the copy: a result built from
    /// a fork stays apart from both copies, so `merged(with:)` can send it.)
    @discardableResult
    private func absorb(log source: OpLog, unknownFields otherFields: [[UInt8]]) throws(PeerNoteError) -> MergeSummary {
        // What each replica this copy knows had made before the merge.
        let mine = AgentCounts(counts: (0 ..< log.replicas.count).map { log.changeCount(of: UInt32($0)) })
        // The changes we lack, in their causal order.
        let missing = log.missingChanges(from: source)
        // (Nothing to take in: the log and state stay shared with `other`'s, if this is a fork.)
        if !missing.isEmpty {
            // A merge that fails leaves the copy as it was: the log is rolled back to a checkpoint
            // (a copy of it would be copied again, op by op, by the first append, and released at
            // the end: the whole log for every merge, however few changes it brings). The state
            // is not copied either (its first change would copy every note): a failed merge
            // rebuilds it from the rolled-back log (`restoreState`).
            let checkpoint = log.checkpoint(), budget = state.workBudget
            // The change that comes last in the canonical order among those this copy holds, and
            // the heads of its changes (where the search for the ones the new changes precede starts).
            let lastBefore = log.canonicallyLastHead, headsBefore = log.heads
            log.reserveGrowing(changes: missing.count)
            // The changes go into the log first (a run of typing joins one op there, as it does when
            // loading), then their ops are applied to the state a stored op at a time.
            let startLV = log.lvCount, firstChange = log.changes.count
            var importer = ChangeImporter(source: source)
            var k = 0
            while k < missing.count {
                do throws(ApplyError) {
                    k += try importer.appendNext(missing, at: k, to: &log)
                } catch {
                    log.rollBack(to: checkpoint)
                    throw .invalidDocument(offset: nil, message: "change \(source.changeID(missing[k]).fullDescription) could not be applied: \(error)")
                }
            }
            // The state is the canonical order's (`DocState.canonical`): the new changes are
            // applied as they come when they follow, in that order, every change the copy had and
            // each other; else in their canonical order when no change the copy had that they
            // precede touches what they touch; else the parts both touch are rebuilt alone
            // (`canonicalMerge`).
            let follows = firstChange < log.changes.count
                && (lastBefore.map { log.canonicallyBefore($0, firstChange) } ?? true)
                && log.firstOutOfCanonicalOrder(from: firstChange + 1) == nil
            do throws(ApplyFailure) {
                if follows {
                    try state.applyOps(of: log, from: startLV, firstChange: firstChange)
                } else {
                    let (order, clashing) = log.canonicalMerge(from: firstChange, startLV: startLV, headsBefore: headsBefore)
                    try state.apply(newChanges: order, of: log, rebuilding: clashing)
                }
            } catch {
                let failed = log.changeID(error.change)
                log.rollBack(to: checkpoint)
                restoreState(workBudget: budget)
                throw .invalidDocument(offset: nil, message: "change \(failed.fullDescription) could not be applied: \(error.error)")
            }
        }
        let addedFields = otherFields.filter { !unknownFields.contains($0) }
        unknownFields += addedFields
        let theirs = AgentCounts(counts: source.agentMap(from: log).map { $0 == OpLog.unknownAgent ? 0 : source.changeCount(of: $0) })
        return MergeSummary(changesByAuthor: source.authorCounts(of: missing), sides: MergeSides(mine: mine, theirs: theirs), fieldsAdded: addedFields.count)
    }
}

extension Document {
    /// Puts back the state a merge that failed part way had changed, once the log is rolled back
    /// to what the copy held before it: the state before the merge was the canonical order's
    /// (`DocState.canonical`, the invariant every load, edit and merge keeps), applied once
    /// already without failing, so it is rebuilt that way, without a budget (`workBudget`, the
    /// budget the state had before the merge, is given back to it). Only a merge that fails pays
    /// for this; one that succeeds copies nothing of the state it does not change.
    fileprivate func restoreState(workBudget: Int) {
        do throws(ApplyFailure) {
            state = try DocState.canonical(of: log, workBudget: .max)
            state.workBudget = workBudget
        } catch {
            preconditionFailure("the state before a merge could not be rebuilt from its own log: \(error.error)")
        }
    }
}

extension OpLog {
    /// How a merge that appended the changes `firstChange...` (from local version `startLV` on)
    /// gets from the state of the changes before them (in canonical order) to the state of all of
    /// them in canonical order (`DocState.canonical`): `order`, the new changes in canonical
    /// order, are applied in that order, after the parts `clashing` are rebuilt alone
    /// (`DocState.apply(newChanges:of:rebuilding:)`); with no clashing part, they are applied
    /// to the state as it is. `headsBefore`: the heads of the changes before `firstChange`.
    ///
    /// The state is a sum of parts (`StatePart`), each the result of the ops that touch it in
    /// the order applied. Let F be the first new change in canonical order, and T the earlier
    /// changes that come after F in it. A part no change of T touches has all of its earlier
    /// ops before every new change in canonical order, so its canonical sequence of ops is the
    /// one already applied followed by the new changes' ops in canonical order. A part that a
    /// change of T touches and a new change touches too needs its ops interleaved: it clashes.
    /// (Parts no new change touches do not change.)
    ///
    /// - Complexity: O(k + t) for k new changes and t changes in T, plus the ops of both, at most
    ///   (the walk of T ends once every part the new changes touch clashes); O(k log k) more when
    ///   the new changes are not in canonical order among themselves. T is found by
    ///   walking back from `headsBefore` through changes of T only: a change that depends on one
    ///   of T has a larger Lamport timestamp, so it is in T too, and every change of T is reached.
    func canonicalMerge(from firstChange: Int, startLV: Int, headsBefore: [Int]) -> (order: ChangeIndices, clashing: StateParts) {
        let count = changes.count
        guard firstChange < count else { return (ChangeIndices(firstChange ..< count), StateParts()) }
        var first = firstChange
        for c in firstChange + 1 ..< count {
            if canonicallyBefore(c, first) { first = c }
        }
        // The parts the new changes touch, from the stored op holding `startLV` on (the first may
        // also hold earlier units: typing joined to the op before). Worked out when T has a change.
        var newParts: Set<StatePart>?
        func partsOfNewChanges() -> Set<StatePart> {
            var parts: Set<StatePart> = []
            var i = opIndex(containingLV: startLV), ci = firstChange
            while i < ops.count {
                let op = ops[i], from = Swift.max(op.lv, startLV)
                ci = changeIndex(containingLV: from, from: ci)
                // (Only a `createNote` reads its first unit's id, and no op joins one to the op before.)
                StatePart.forEach(of: op, firstID: localID(ofLV: from, change: ci)) { parts.insert($0) }
                i += 1
            }
            return parts
        }
        var clashing = StateParts(), clashCount = 0
        // Adds the parts change `c` of T touches that a new change touches too to `clashing`;
        // returns whether every part a new change touches clashes (nothing more to find).
        func collectClashes(_ c: Int) -> Bool {
            if newParts == nil { newParts = partsOfNewChanges() }
            guard let parts = newParts else { return true }
            let start = LocalID(agent: changes.agent(c), counter: changes[c].counterStart), lvStart = changes.lvStart(c)
            forEachOp(ofChange: c) { op in
                StatePart.forEach(of: op, firstID: start.advanced(by: op.lv - lvStart)) {
                    if parts.contains($0) && clashing.insert($0) { clashCount += 1 }
                }
            }
            return clashCount == parts.count
        }
        // T: the earlier changes after `first`, walked back from the heads they reach; the walk
        // ends once every part the new changes touch clashes (in a merge of two copies that
        // edited one note, at the first change looked at, usually: the latest ones come first).
        var later: [Int] = []
        var seen: Set<Int> = []
        walk: do {
            for h in headsBefore {
                if h < firstChange && canonicallyBefore(first, h) && seen.insert(h).inserted {
                    if collectClashes(h) { break walk }
                    later.append(h)
                }
            }
            var next = 0
            while next < later.count {
                for d in deps(of: later[next]) {
                    if canonicallyBefore(first, d) && seen.insert(d).inserted {
                        if collectClashes(d) { break walk }
                        later.append(d)
                    }
                }
                next += 1
            }
        }
        if firstOutOfCanonicalOrder(from: firstChange + 1) == nil { return (ChangeIndices(firstChange ..< count), clashing) }
        var order = Array(firstChange ..< count)
        order.sort { canonicallyBefore($0, $1) }
        return (ChangeIndices(order), clashing)
    }
}

extension OpLog {
    /// The changes of `source` this log lacks (per replica, those past the ones it has), as
    /// indices into `source`, in `source`'s order (a causal order).
    func missingChanges(from source: OpLog) -> [Int] {
        var missing: [Int] = []
        var agents = 0
        let map = agentMap(from: source)
        for a in map.indices {
            let have = map[a] == Self.unknownAgent ? 0 : changeCount(of: map[a])
            guard source.changeCount(of: UInt32(a)) > have else { continue }
            source.changes.appendIndices(agent: UInt32(a), after: have, to: &missing)
            agents += 1
        }
        // Each agent's changes are in order already.
        if agents > 1 { missing.sort() }
        return missing
    }

    /// How many of `changes` each author made, authors in order of first appearance.
    func authorCounts(of changes: [Int]) -> [(author: String, count: Int)] {
        // Counted by the log's string index; `order` lists the indices as first met.
        var counts = [Int](repeating: 0, count: strings.count)
        var order: [Int] = []
        for ci in changes {
            let s = Int(self.changes.author(ci))
            if counts[s] == 0 { order.append(s) }
            counts[s] += 1
        }
        // Two indices may hold one string (a log built by hand): one entry each author.
        var byAuthor: [(author: String, count: Int)] = []
        for s in order {
            let author = strings[s]
            if let i = byAuthor.firstIndex(where: { $0.author.hasSameScalars(as: author) }) { byAuthor[i].count += counts[s] } else { byAuthor.append((author, counts[s])) }
        }
        return byAuthor
    }
}

/// Appends another copy's changes to an op log without applying them (merge applies the log's
/// new ops afterwards). Maps the other log's agents and strings to the log's as it meets them,
/// and takes a stretch of typing or deleting (changes of one run of the other log whose units
/// continue one stored op) in one step, as loading does.
private struct ChangeImporter {
    let source: OpLog
    /// The log's agent and string index for each of the other log's, once met.
    private var agents: [UInt32?]
    private var strings: [UInt32?]
    /// The last change appended: its index in `source` and in the log (-1: none yet).
    private var previous = (source: -1, mine: -1)

    init(source: OpLog) {
        self.source = source
        agents = Array(repeating: nil, count: source.replicas.count)
        strings = Array(repeating: nil, count: source.strings.count)
    }

    /// Appends the changes `missing[k...]` start with (indices of `source`, ascending, whose
    /// dependencies the log holds or which come earlier in `missing`): a stretch when they
    /// make one, else change `missing[k]` alone. Returns how many it appended.
    mutating func appendNext(_ missing: [Int], at k: Int, to log: inout OpLog) throws(ApplyError) -> Int {
        if let n = appendStretch(missing, at: k, to: &log) { return n }
        try appendOne(missing[k], to: &log)
        return 1
    }

    private mutating func agent(_ a: UInt32, _ log: inout OpLog) -> UInt32 {
        if let mine = agents[Int(a)] { return mine }
        let mine = log.agent(for: source.replicas[Int(a)])
        agents[Int(a)] = mine
        return mine
    }

    private mutating func string(_ i: UInt32, _ log: inout OpLog) -> UInt32 {
        if let mine = strings[Int(i)] { return mine }
        let mine = log.internString(source.strings[Int(i)])
        strings[Int(i)] = mine
        return mine
    }

    private mutating func mapIDs(_ body: OpBody, _ log: inout OpLog) -> OpBody {
        body.mapIDs { id in id.isNone ? id : LocalID(agent: agent(id.agent, &log), counter: id.counter) }
    }

    /// Change `ci` and its ops.
    private mutating func appendOne(_ ci: Int, to log: inout OpLog) throws(ApplyError) {
        let c = source.changes[ci]
        var deps: [Int] = []
        for d in source.deps(of: ci) {
            // Typing: the one dependency is the change appended just before.
            if d == previous.source { deps.append(previous.mine); continue }
            guard let mine = log.changeIndex(of: source.changeID(d)) else { throw .unknownElement(.none) }
            deps.append(mine)
        }
        let index = log.beginChange(agent: agent(c.agent, &log), deps: deps, time: c.time, author: string(c.author, &log),
                                    message: string(c.message, &log), extra: source.extra(of: ci))
        guard log.changes.seq(index) == c.seq, log.changes.counterStart(index) == c.counterStart else {
            throw .unknownElement(.none)
        }
        previous = (ci, index)
        source.forEachOp(ofChange: ci) { op in
            var scalars = ScalarRun(narrow: [])
            if case .insertText(_, _, _, let start) = op.body { scalars = source.textView[start ..< start + op.length] }
            // Mapped first: mapping may add an agent to the log, which `append` then holds.
            let body = mapIDs(op.body, &log)
            log.append(body, length: op.length, scalars: scalars)
        }
    }

    /// Changes `missing[k ..< k + n]` at once, when they continue the change appended just
    /// before in its run of `source` (same replica, time, author and message, no extra fields,
    /// each on the one before) and their units continue the stored op that change's last unit
    /// is in: the log then takes them as loading takes typing and deleting (`appendTypingChanges`,
    /// `appendDeletingChanges`), and they join its last op. Nil, changing nothing the log
    /// shows, when they do not.
    private mutating func appendStretch(_ missing: [Int], at k: Int, to log: inout OpLog) -> Int? {
        let ci = missing[k]
        let changes = source.changes
        guard previous.source == ci - 1, previous.mine == log.changes.count - 1, changes.runStart(of: ci) < ci,
              !source.ops.isEmpty else { return nil }
        let c = changes[ci]
        guard c.extra == 0 else { return nil }
        let lvStart = changes.lvStart(ci)
        let op = source.ops[source.opIndex(containingLV: lvStart)]
        let opEnd = op.lv + op.length
        guard op.lv < lvStart, lvStart < opEnd else { return nil }
        let runEnd = changes.runEnd(of: ci)
        var j = k
        while j < missing.count, missing[j] == ci + (j - k), missing[j] < runEnd, changes.lvEnd(missing[j]) <= opEnd { j += 1 }
        guard j > k else { return nil }
        let last = missing[j - 1]
        let total = changes.lvEnd(last) - lvStart
        let lengths = (ci ... last).lazy.map { changes.length($0) }
        let (mine, author, message) = (agent(c.agent, &log), string(c.author, &log), string(c.message, &log))
        let appended: Bool
        switch op.body {
        case .insertText(_, _, _, let s):
            let from = s + (lvStart - op.lv)
            appended = log.appendTypingChanges(agent: mine, time: c.time, author: author, message: message, lengths: lengths,
                                               scalars: source.textView[from ..< from + total])
        case .deleteText:
            let body = mapIDs(source.slice(op, from: lvStart, to: lvStart + total, change: ci).body, &log)
            appended = log.appendDeletingChanges(agent: mine, time: c.time, author: author, message: message, lengths: lengths,
                                                 total: total, body: body)
        default:
            return nil
        }
        guard appended else { return nil }
        previous = (last, log.changes.count - 1)
        return j - k
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
