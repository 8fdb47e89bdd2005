/// A change: a group of op units made together by one replica.
///
/// It covers the local versions `lvStart ..< lvStart + length` of its op log,
/// and the replica's op counters `counterStart ..< counterStart + length`.
/// `seq` numbers a replica's changes 1, 2, 3, ...; change `seq` of a replica
/// always has change `seq - 1` in its causal past. `lamport` is the Lamport
/// timestamp of its first op unit (unit k has `lamport + k`): one more than
/// the largest of its dependencies' last units, so sorting by
/// (lamport, replica id) is a causal order. Its dependencies (the heads the author
/// saw, as indices of earlier changes) are `OpLog.deps(of:)`.
///
/// A plain value with no references (strings are interned in the op log, and
/// dependencies live in the change table's pool): what `ChangeTable` gives back
/// for one change, which it stores run-length encoded.
struct ChangeRecord: Sendable, Equatable {
    var agent: UInt32
    var seq: UInt32
    var counterStart: UInt32
    /// The author's name: an index into `OpLog.strings`.
    var author: UInt32
    /// The change's message: an index into `OpLog.strings` (0 is the empty string).
    var message: UInt32
    /// Fields of the change this version does not know, kept verbatim (CBOR map
    /// entries): an index into `OpLog.extras` (0 is none).
    var extra: UInt32
    /// How many dependencies the change has; they are `OpLog.deps(of:)`.
    var depCount: UInt32
    var length: Int
    var lvStart: Int
    var lamport: UInt64
    /// Wall-clock time, seconds since 1970 (the author's clock: informative only).
    var time: Int64

    var lvEnd: Int { lvStart + length }
    var lamportEnd: UInt64 { lamport + UInt64(length) - 1 }
}

/// The change records of an op log, run-length encoded: a replica's consecutive changes that
/// each depend only on the one before, with one author, message, extra fields and time (a
/// typing session, one change per keystroke) are one `Run`, and cost 8 bytes a change (the
/// change's run and its first unit's offset in the run). Everything else about a change in a
/// run follows from the run: its seq, op counter, local version and Lamport timestamp advance
/// with its offset, and its one dependency is the change before it.
///
/// The table also owns the dependency pool (only a run's first change has stored
/// dependencies) and, per agent, its runs in seq order, so that a change is found by (agent,
/// seq) or (agent, op counter) with a binary search over runs.
///
/// Invariants: changes tile the local versions `0 ..< lvEnd` in order; a run's changes are
/// consecutive change indices; `unitOffset` is non-decreasing within a run and fits 32 bits
/// (a run that would outgrow that is not extended); each agent's runs have increasing seqs and
/// op counters.
struct ChangeTable: RandomAccessCollection, Sendable {
    /// Consecutive changes of one agent, each on top of the one before.
    struct Run: Sendable {
        var agent: UInt32
        var seqStart: UInt32
        var counterStart: UInt32
        /// An index into `metas`: the author, message and extra fields of every change of the run.
        var meta: UInt32
        /// How many changes the run has.
        var count: UInt32
        /// How many dependencies its first change has (`depPool[depStart ..< depStart + depCount]`).
        var depCount: UInt32
        /// The change index of its first change.
        var firstIndex: Int
        var lvStart: Int
        /// Op units of all its changes.
        var length: Int
        var depStart: Int
        /// The Lamport timestamp of its first unit (unit k of the run has `lamport + k`).
        var lamport: UInt64
        var time: Int64
    }

    /// The string and extra indices a change refers to (see `ChangeRecord`).
    struct Meta: Hashable, Sendable {
        var author: UInt32
        var message: UInt32
        var extra: UInt32
    }

    /// A change's dependencies: a slice of the pool, or (inside a run) the change before it.
    struct Deps: RandomAccessCollection, Sendable {
        fileprivate let pool: ArraySlice<Int>
        /// The one implicit dependency, or -1 when the dependencies are `pool`.
        fileprivate let previous: Int
        var startIndex: Int { 0 }
        var endIndex: Int { previous >= 0 ? 1 : pool.count }
        subscript(i: Int) -> Int { previous >= 0 ? previous : pool[pool.startIndex + i] }
    }

    private var runs: [Run] = []
    /// Per change: the index of its run.
    private var runOf: [UInt32] = []
    /// Per change: its first unit's local version minus its run's `lvStart`.
    private var unitOffset: [UInt32] = []
    /// The dependencies of every run's first change, back to back.
    private var depPool: [Int] = []
    /// Per agent: its runs, in seq order.
    private var agentRuns: [[UInt32]] = []
    private var metas: [Meta] = []
    private var metaIndex: [Meta: UInt32] = [:]
    /// The last change's author, message and extra indices, and its index in `metas`.
    private(set) var lastMeta: Meta?
    private var lastMetaIndex: UInt32 = 0

    var startIndex: Int { 0 }
    var endIndex: Int { runOf.count }
    /// How many runs the changes form (for tests and statistics).
    var runCount: Int { runs.count }

    /// The last change whose first unit's local version is at most `lv` (for `lv < lvEnd`, the
    /// change holding unit `lv`; of several that start there, the nonempty one). A search over
    /// runs, not changes (a typing run of thousands of keystrokes is one), from the run of change
    /// `hint` on when it starts at or before `lv` (doubling steps, for callers walking the log in
    /// order), else over all of them; then, inside the run, the change its offset gives when
    /// each change there has one unit, else a search. The table must not be empty.
    func index(containingLV lv: Int, from hint: Int = -1) -> Int {
        precondition(!runs.isEmpty, "a table with changes")
        var lo = 0, hi = runs.count - 1
        if hint >= 0, hint < runOf.count, case let start = Int(runOf[hint]), runs[start].lvStart <= lv {
            lo = start
            var step = 1
            while lo + step < runs.count && runs[lo + step].lvStart <= lv {
                lo += step
                step *= 2
            }
            hi = Swift.min(lo + step, runs.count) - 1
        }
        // The last run that starts at or before `lv` (the first one does: local versions start at 0).
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if runs[mid].lvStart <= lv { lo = mid } else { hi = mid - 1 }
        }
        let first = runs[lo].firstIndex, end = first + Int(runs[lo].count), offset = lv - runs[lo].lvStart
        // Offsets within a run are non-decreasing from 0; one unit a change puts `offset` at
        // change `first + offset`.
        let guess = first + Swift.min(offset, end - first - 1)
        if Int(unitOffset[guess]) <= offset && (guess + 1 == end || Int(unitOffset[guess + 1]) > offset) { return guess }
        var a = first, b = end - 1
        while a < b {
            let mid = (a + b + 1) / 2
            if Int(unitOffset[mid]) <= offset { a = mid } else { b = mid - 1 }
        }
        return a
    }

    /// Whether `agent` made any change of the table (O(1)).
    @inline(__always) func hasChanges(of agent: Int) -> Bool {
        agent < agentRuns.count && !agentRuns[agent].isEmpty
    }

    /// Every run in log order: its agent, its first change's seq and index, and how many changes
    /// it has (change `firstIndex + k` has seq `seqStart + k`).
    func forEachRun(_ body: (_ agent: UInt32, _ seqStart: UInt32, _ firstIndex: Int, _ count: Int) -> Void) {
        for r in runs.indices { body(runs[r].agent, runs[r].seqStart, runs[r].firstIndex, Int(runs[r].count)) }
    }

    // Fields are read one at a time (`runs[r].field`): reading a whole `Run` copies 72 bytes.

    @inline(__always)
    subscript(i: Int) -> ChangeRecord {
        let r = Int(runOf[i])
        let m = metas[Int(runs[r].meta)]
        let off = unitOffset[i]
        let first = runs[r].firstIndex
        return ChangeRecord(agent: runs[r].agent, seq: runs[r].seqStart + UInt32(i - first), counterStart: runs[r].counterStart + off,
                            author: m.author, message: m.message, extra: m.extra,
                            depCount: i == first ? runs[r].depCount : 1, length: unitEnd(i) - Int(off),
                            lvStart: runs[r].lvStart + Int(off), lamport: runs[r].lamport + UInt64(off), time: runs[r].time)
    }

    /// Where change `i` ends, as an offset in its run.
    @inline(__always) private func unitEnd(_ i: Int) -> Int {
        let r = runOf[i]
        return i + 1 < runOf.count && runOf[i + 1] == r ? Int(unitOffset[i + 1]) : runs[Int(r)].length
    }

    // Single fields of change `i`, for hot paths that need one or two of them (a record has eleven).
    @inline(__always) func agent(_ i: Int) -> UInt32 { runs[Int(runOf[i])].agent }
    @inline(__always) func seq(_ i: Int) -> UInt32 { let r = Int(runOf[i]); return runs[r].seqStart + UInt32(i - runs[r].firstIndex) }
    @inline(__always) func counterStart(_ i: Int) -> UInt32 { runs[Int(runOf[i])].counterStart + unitOffset[i] }
    @inline(__always) func time(_ i: Int) -> Int64 { runs[Int(runOf[i])].time }
    @inline(__always) func author(_ i: Int) -> UInt32 { metas[Int(runs[Int(runOf[i])].meta)].author }
    @inline(__always) func lamport(_ i: Int) -> UInt64 { runs[Int(runOf[i])].lamport + UInt64(unitOffset[i]) }
    @inline(__always) func lvStart(_ i: Int) -> Int { runs[Int(runOf[i])].lvStart + Int(unitOffset[i]) }
    @inline(__always) func length(_ i: Int) -> Int { unitEnd(i) - Int(unitOffset[i]) }
    /// The lengths of changes `range`, in order: `length(i)` for each, read straight from the
    /// table's storage (a save of a long history takes every change's length).
    @inline(__always) func forEachLength(_ range: Range<Int>, _ body: (Int) -> Void) {
        guard !range.isEmpty else { return }
        precondition(range.lowerBound >= 0 && range.upperBound <= runOf.count)
        runOf.withUnsafeBufferPointer { runOf in
            unitOffset.withUnsafeBufferPointer { offset in
                for i in range {
                    let r = runOf[i]
                    let end = i + 1 < runOf.count && runOf[i + 1] == r ? Int(offset[i + 1]) : runs[Int(r)].length
                    body(end - Int(offset[i]))
                }
            }
        }
    }
    @inline(__always) func lvEnd(_ i: Int) -> Int { runs[Int(runOf[i])].lvStart + unitEnd(i) }
    @inline(__always) func lamportEnd(_ i: Int) -> UInt64 { runs[Int(runOf[i])].lamport + UInt64(unitEnd(i)) - 1 }
    /// The op counter after change `i`'s last unit.
    @inline(__always) func counterEnd(_ i: Int) -> Int { Int(runs[Int(runOf[i])].counterStart) + unitEnd(i) }

    /// Whether changes `i ..< i + count` here and `other`'s `j ..< j + count` have the same
    /// lengths, change by change. Each stretch must lie inside one run of its table: the lengths
    /// of all but the last are then differences of unit offsets, compared through buffer pointers.
    func sameLengths(_ i: Int, _ other: ChangeTable, _ j: Int, count: Int) -> Bool {
        guard count > 0 else { return true }
        assert(runOf[i] == runOf[i + count - 1] && other.runOf[j] == other.runOf[j + count - 1])
        let offsetsAgree = unitOffset.withUnsafeBufferPointer { a in
            other.unitOffset.withUnsafeBufferPointer { b in
                let baseA = a[i], baseB = b[j]
                for k in 1 ..< count where a[i + k] &- baseA != b[j + k] &- baseB { return false }
                return true
            }
        }
        return offsetsAgree && length(i + count - 1) == other.length(j + count - 1)
    }

    /// The dependencies of change `i` (indices of earlier changes, sorted).
    @inline(__always) func deps(of i: Int) -> Deps {
        let r = Int(runOf[i])
        if i != runs[r].firstIndex { return Deps(pool: [], previous: i - 1) }
        let start = runs[r].depStart
        return Deps(pool: depPool[start ..< start + Int(runs[r].depCount)], previous: -1)
    }

    /// The first change of change `i`'s run (every change from it up to `i` depends on the one before).
    @inline(__always) func runStart(of i: Int) -> Int { runs[Int(runOf[i])].firstIndex }
    /// The change after the last of change `i`'s run.
    @inline(__always) func runEnd(of i: Int) -> Int { let r = Int(runOf[i]); return runs[r].firstIndex + Int(runs[r].count) }

    /// The local versions the changes cover: the last change's `lvEnd`.
    @inline(__always) var lvEnd: Int { runs.isEmpty ? 0 : runs[runs.count - 1].lvStart + runs[runs.count - 1].length }

    mutating func reserveCapacity(_ n: Int) {
        runOf.reserveCapacity(n)
        unitOffset.reserveCapacity(n)
    }

    /// How many changes the per-change arrays have room for.
    var capacity: Int { Swift.min(runOf.capacity, unitOffset.capacity) }

    // MARK: Rolling back

    /// The table as it stands, for `rollBack(to:)`: its counts, and the one run that later
    /// appends may change in place (the last).
    struct Checkpoint: Sendable {
        fileprivate let changes: Int
        fileprivate let runs: Int
        fileprivate let lastRun: Run?
        fileprivate let depPool: Int
        fileprivate let agents: Int
        fileprivate let metas: Int
        fileprivate let lastMeta: Meta?
        fileprivate let lastMetaIndex: UInt32
    }

    func checkpoint() -> Checkpoint {
        Checkpoint(changes: runOf.count, runs: runs.count, lastRun: runs.last, depPool: depPool.count, agents: agentRuns.count,
                   metas: metas.count, lastMeta: lastMeta, lastMetaIndex: lastMetaIndex)
    }

    /// Removes every change appended since `checkpoint` was taken, leaving the table as it was
    /// then. Appends only ever add runs, metas and dependencies at the ends and change the last
    /// run in place (its count and length), so the counts and that run restore it.
    mutating func rollBack(to checkpoint: Checkpoint) {
        precondition(runs.count >= checkpoint.runs && runOf.count >= checkpoint.changes, "a checkpoint of this table, not rolled back past")
        // Each run appended since is the last of its agent's list: taken off newest first.
        for r in stride(from: runs.count - 1, through: checkpoint.runs, by: -1) {
            agentRuns[Int(runs[r].agent)].removeLast()
        }
        agentRuns.removeLast(agentRuns.count - checkpoint.agents)
        runs.removeLast(runs.count - checkpoint.runs)
        if let last = checkpoint.lastRun { runs[runs.count - 1] = last }
        runOf.removeLast(runOf.count - checkpoint.changes)
        unitOffset.removeLast(unitOffset.count - checkpoint.changes)
        depPool.removeLast(depPool.count - checkpoint.depPool)
        for meta in metas[checkpoint.metas...] { metaIndex[meta] = nil }
        metas.removeLast(metas.count - checkpoint.metas)
        lastMeta = checkpoint.lastMeta
        lastMetaIndex = checkpoint.lastMetaIndex
    }

    // MARK: Per agent

    /// The last change of `agent`, if any.
    @inline(__always) func lastIndex(agent: UInt32) -> Int? {
        guard Int(agent) < agentRuns.count, let last = agentRuns[Int(agent)].last else { return nil }
        return runs[Int(last)].firstIndex + Int(runs[Int(last)].count) - 1
    }

    /// How many changes `agent` made (its last change's seq).
    func changeCount(agent: UInt32) -> Int {
        guard Int(agent) < agentRuns.count, let last = agentRuns[Int(agent)].last else { return 0 }
        return Int(runs[Int(last)].seqStart) + Int(runs[Int(last)].count) - 1
    }

    /// Calls `body(firstIndex, agent, seqStart, count)` for each run of changes (one agent's,
    /// numbered on from `seqStart`, at consecutive indices from `firstIndex`), in index order.
    func forEachRun(_ body: (Int, UInt32, UInt32, Int) -> Void) {
        for r in runs.indices { body(runs[r].firstIndex, runs[r].agent, runs[r].seqStart, Int(runs[r].count)) }
    }

    /// The index of `agent`'s change `seq`, and how many changes from it on its run holds
    /// (changes `seq ..< seq + n` are at `index ..< index + n`); nil when there is no such change.
    func indexAndRest(agent: UInt32, seq: UInt32) -> (index: Int, rest: Int)? {
        guard Int(agent) < agentRuns.count, seq >= 1 else { return nil }
        let list = agentRuns[Int(agent)]
        var lo = 0, hi = list.count - 1
        while lo <= hi {
            let mid = (lo + hi) / 2
            let r = runs[Int(list[mid])]
            if seq < r.seqStart { hi = mid - 1 } else if Int(seq) >= Int(r.seqStart) + Int(r.count) { lo = mid + 1 } else {
                let k = Int(seq - r.seqStart)
                return (r.firstIndex + k, Int(r.count) - k)
            }
        }
        return nil
    }

    /// Appends the indices of `agent`'s changes numbered past `seq` to `out`, in seq order (a
    /// run at a time: each run's changes are consecutive indices).
    func appendIndices(agent: UInt32, after seq: Int, to out: inout [Int]) {
        guard Int(agent) < agentRuns.count else { return }
        for r in agentRuns[Int(agent)] {
            let run = runs[Int(r)]
            let first = Int(run.seqStart), end = first + Int(run.count)
            guard end > seq + 1 else { continue }
            let from = Swift.max(first, seq + 1)
            out.append(contentsOf: run.firstIndex + (from - first) ..< run.firstIndex + Int(run.count))
        }
    }

    /// The change of `agent` numbered `seq`, if there is one.
    @inline(__always) func index(agent: UInt32, seq: UInt32) -> Int? { indexAndRest(agent: agent, seq: seq)?.index }

    /// The local version of `agent`'s op unit `counter`, and how many of its units from there
    /// on have consecutive local versions (the rest of its run), if the table holds it: a search
    /// over the agent's runs only (no change is looked for), with nothing copied.
    func lvSpan(agent: UInt32, counter: UInt32) -> (lv: Int, count: Int)? {
        var hint = -2
        return lvSpan(agent: agent, counter: counter, hint: &hint)
    }

    /// `lvSpan(agent:counter:)` for lookups that often land in the run of the one before or the
    /// next: `hint` is where among the agent's runs the last lookup found its unit (0 at first),
    /// and is tried, then the run after it, before the search.
    func lvSpan(agent: UInt32, counter: UInt32, hint: inout Int) -> (lv: Int, count: Int)? {
        guard Int(agent) < agentRuns.count else { return nil }
        return agentRuns[Int(agent)].withUnsafeBufferPointer { list in
            runs.withUnsafeBufferPointer { runs -> (lv: Int, count: Int)? in
                // (A hint of -2, from `lvSpan(agent:counter:)`, tries nothing.)
                var guess = hint
                while guess >= 0 && guess <= hint + 1 && guess < list.count {
                    let r = Int(list[guess])
                    let offset = Int(counter) - Int(runs[r].counterStart)
                    if offset >= 0 && offset < runs[r].length {
                        hint = guess
                        return (runs[r].lvStart + offset, runs[r].length - offset)
                    }
                    guess += 1
                }
                var lo = 0, hi = list.count - 1
                while lo <= hi {
                    let mid = (lo + hi) / 2
                    let r = Int(list[mid])
                    let start = runs[r].counterStart
                    if counter < start {
                        hi = mid - 1
                    } else if Int(counter) - Int(start) >= runs[r].length {
                        lo = mid + 1
                    } else {
                        let offset = Int(counter) - Int(start)
                        hint = mid
                        return (runs[r].lvStart + offset, runs[r].length - offset)
                    }
                }
                return nil
            }
        }
    }

    /// The change of `agent` holding its op unit `counter`, if there is one.
    func index(agent: UInt32, counter: UInt32) -> Int? {
        guard Int(agent) < agentRuns.count else { return nil }
        let list = agentRuns[Int(agent)]
        var lo = 0, hi = list.count - 1
        while lo <= hi {
            let mid = (lo + hi) / 2
            let r = runs[Int(list[mid])]
            if counter < r.counterStart { hi = mid - 1 } else if Int(counter) >= Int(r.counterStart) + r.length { lo = mid + 1 } else {
                // The last change of the run starting at or before the unit (empty changes share
                // their offset with the change after them).
                let off = counter - r.counterStart
                var a = r.firstIndex, b = r.firstIndex + Int(r.count) - 1
                while a < b {
                    let m = (a + b + 1) / 2
                    if unitOffset[m] <= off { a = m } else { b = m - 1 }
                }
                return a
            }
        }
        return nil
    }

    // MARK: Appending

    /// Appends `c` on top of `deps` (sorted); `c` must start where the last change ends.
    mutating func append(_ c: ChangeRecord, deps: some Collection<Int>) {
        precondition(c.lvStart == lvEnd, "a change must start where the last one ends")
        appendEmpty(agent: c.agent, seq: c.seq, counterStart: c.counterStart,
                    meta: Meta(author: c.author, message: c.message, extra: c.extra),
                    deps: deps, lamport: c.lamport, time: c.time)
        extendLast(by: c.length)
    }

    /// Appends a change with no op units yet by `agent` on top of the last change alone, with
    /// `meta` and `time`, when that joins the last run (the last change is `agent`'s, with the
    /// same meta and time): its seq, op counter and Lamport timestamp then follow on. Returns
    /// false, changing nothing, otherwise. The fast path of typing, and of loading it.
    @inline(__always)
    mutating func appendContinuing(agent: UInt32, meta: Meta, time: Int64) -> Bool {
        let l = runs.count - 1
        guard l >= 0, meta == lastMeta, runs[l].agent == agent, runs[l].time == time, runs[l].length <= Int(UInt32.max) else { return false }
        runs[l].count += 1
        runOf.append(UInt32(l))
        unitOffset.append(UInt32(runs[l].length))
        return true
    }

    /// Whether changes by `agent` with `meta` at `time` join the last run (see `appendContinuing`).
    func continuesLastRun(agent: UInt32, meta: Meta, time: Int64) -> Bool {
        let l = runs.count - 1
        return l >= 0 && meta == lastMeta && runs[l].agent == agent && runs[l].time == time
    }

    /// Whether `appendContinuing` would append changes by `agent` with `meta` at `time`,
    /// holding `units` op units in all (they join the last run, whose offsets stay 32-bit).
    func canAppendContinuing(agent: UInt32, meta: Meta, time: Int64, units: Int) -> Bool {
        let l = runs.count - 1
        return l >= 0 && meta == lastMeta && runs[l].agent == agent && runs[l].time == time && runs[l].length + units <= Int(UInt32.max)
    }

    /// Appends `lengths.count` changes, holding `lengths` op units each, as `appendContinuing`
    /// would one by one (each on top of the one before, the first on top of the last change),
    /// with their units. False, changing nothing, when they do not join the last run.
    mutating func appendContinuing<L: Collection>(agent: UInt32, meta: Meta, time: Int64, lengths: L) -> Bool where L.Element: BinaryInteger {
        appendContinuing(agent: agent, meta: meta, time: time, ones: 0, then: lengths)
    }

    /// The same for lengths held as `ChangeLengths`: its leading changes of one unit each take
    /// one fill of each per-change array, with no per-change sums.
    mutating func appendContinuing(agent: UInt32, meta: Meta, time: Int64, lengths: ChangeLengths) -> Bool {
        appendContinuing(agent: agent, meta: meta, time: time, ones: lengths.ones, then: lengths.rest)
    }

    /// Appends `ones` changes of one unit each, then a change for each of `rest`.
    private mutating func appendContinuing<L: Collection>(agent: UInt32, meta: Meta, time: Int64, ones: Int, then rest: L) -> Bool where L.Element: BinaryInteger {
        let l = runs.count - 1
        guard l >= 0, meta == lastMeta, runs[l].agent == agent, runs[l].time == time else { return false }
        var total = ones
        for x in rest { total += Int(x) }
        // Every change's first unit must have a 32-bit offset in the run.
        guard runs[l].length + total <= Int(UInt32.max) else { return false }
        let count = ones + rest.count
        var offset = runs[l].length
        runOf.append(contentsOf: repeatElement(UInt32(l), count: count))
        // Room for the offsets in one append (it grows the array geometrically: an exact
        // `reserveCapacity`, called burst after burst, would copy it every time), then filled in.
        let base = unitOffset.count
        unitOffset.append(contentsOf: repeatElement(0, count: count))
        unitOffset.withUnsafeMutableBufferPointer { offsets in
            let first = UInt32(offset)
            for k in 0 ..< ones { offsets[base + k] = first &+ UInt32(k) }
            offset += ones
            var k = base + ones
            for x in rest {
                offsets[k] = UInt32(offset)
                offset += Int(x)
                k += 1
            }
        }
        runs[l].count += UInt32(count)
        runs[l].length = offset
        return true
    }

    /// Appends a change with no op units yet (it starts and ends at `lvEnd`) on top of `deps`
    /// (sorted, earlier changes). It joins the last run when it continues it.
    mutating func appendEmpty<D: Collection<Int>>(agent: UInt32, seq: UInt32, counterStart: UInt32, meta: Meta, deps: D, lamport: UInt64, time: Int64) {
        if meta != lastMeta {
            if let known = metaIndex[meta] {
                lastMetaIndex = known
            } else {
                lastMetaIndex = UInt32(metas.count)
                metas.append(meta)
                metaIndex[meta] = lastMetaIndex
            }
            lastMeta = meta
        }
        let index = runOf.count
        let l = runs.count - 1
        if l >= 0, runs[l].agent == agent, runs[l].meta == lastMetaIndex, runs[l].time == time, runs[l].length <= Int(UInt32.max),
           Int(runs[l].seqStart) + Int(runs[l].count) == Int(seq), Int(runs[l].counterStart) + runs[l].length == Int(counterStart),
           runs[l].lamport &+ UInt64(runs[l].length) == lamport, deps.count == 1, deps.first == index - 1 {
            runs[l].count += 1
            runOf.append(UInt32(l))
            unitOffset.append(UInt32(runs[l].length))
            return
        }
        let runIndex = UInt32(runs.count)
        runs.append(Run(agent: agent, seqStart: seq, counterStart: counterStart, meta: lastMetaIndex, count: 1,
                        depCount: UInt32(deps.count), firstIndex: index, lvStart: lvEnd, length: 0,
                        depStart: depPool.count, lamport: lamport, time: time))
        if deps.count == 1, let only = deps.first { depPool.append(only) } else { depPool.append(contentsOf: deps) }
        runOf.append(runIndex)
        unitOffset.append(0)
        while agentRuns.count <= Int(agent) { agentRuns.append([]) }
        agentRuns[Int(agent)].append(runIndex)
    }

    /// Adds `length` op units to the last change.
    mutating func extendLast(by length: Int) {
        runs[runs.count - 1].length += length
    }
}

/// The op units of each of a run of changes, as a burst of keystrokes gathers them: `ones`
/// changes of one unit each (a keystroke each: nearly always all of them), then those in
/// `rest`. A change of one unit adds to a count, where an array would grow by one element.
struct ChangeLengths: RandomAccessCollection, Sendable {
    /// The leading changes of one unit each.
    private(set) var ones = 0
    /// The changes after them (empty until a change holds other than one unit).
    private(set) var rest: [UInt32] = []

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { ones + rest.count }
    subscript(i: Int) -> UInt32 { i < ones ? 1 : rest[i - ones] }

    /// Adds a change of `units` units.
    @inline(__always)
    mutating func append(_ units: UInt32) {
        if units == 1 && rest.isEmpty { ones += 1 } else { rest.append(units) }
    }

    /// Adds `units` more to the last change (there must be one).
    mutating func extendLast(by units: UInt32) {
        if rest.isEmpty {
            precondition(ones > 0, "no change to extend")
            ones -= 1
            rest.append(1 + units)
        } else {
            rest[rest.count - 1] += units
        }
    }

    /// Empties it, keeping `rest`'s storage when `keepingCapacity`.
    mutating func removeAll(keepingCapacity: Bool) {
        ones = 0
        rest.removeAll(keepingCapacity: keepingCapacity)
    }

    /// The capacity of `rest`'s storage.
    var capacity: Int { rest.capacity }
}
