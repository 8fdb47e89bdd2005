#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The full causal history of a document: every change and every op, in a
/// causal order (each change after all its dependencies).
///
/// Local versions (LVs) number op units in the order this log received them;
/// they are this log's own and never go on the wire. On the wire an op unit is
/// named by (replica id, counter) and a change by (replica id, seq).
///
/// Invariants: `changes[i].lvStart == changes[i-1].lvEnd`; `ops` tile the LVs
/// `0 ..< lvCount` in order; agent `a`'s changes have seqs 1, 2, 3, ... with
/// contiguous counters (`changes.index(agent:seq:)` finds them); `heads` are the
/// changes that no other change depends on.
struct OpLog: Sendable {
    private(set) var replicas: [ReplicaID] = []
    private(set) var replicaIndex: [ReplicaID: UInt32] = [:]
    private(set) var changes = ChangeTable()
    /// Interned author names and messages; index 0 is the empty string. Interned by their exact
    /// Unicode scalars (`ExactString`): two canonically equivalent spellings of a name are two entries.
    private(set) var strings: [String] = [""]
    private var stringIndex: [ExactString: UInt32] = [ExactString(""): 0]
    /// Unknown change fields kept verbatim; index 0 is none.
    private(set) var extras: [[UInt8]] = [[]]
    /// The ops a load adopted (shared with the file's verified record), then those appended since.
    private(set) var ops = OpStore()
    /// The inserted text the log holds itself: all of it unless `pendingText` is set, and then
    /// the text after `pendingText.count` (appended since a load; none while a load's text is
    /// unwritten).
    private var storedText = ScalarStore()
    /// Text the log does not hold (a load's: `beginUnwrittenText`, `deferText(to:)`); nil once
    /// it holds all of it.
    private var pendingText: PendingText?
    /// In no particular order (readers sort). Kept with `headPlaces` once there are many.
    private(set) var heads: [Int] = []
    /// Each head's place in `heads`, kept while there are more than `headIndexThreshold` heads
    /// (nil otherwise), so that a change retires each of its dependencies in constant time: a
    /// history of thousands of concurrent changes would otherwise scan every head per change.
    private var headPlaces: [Int: Int]?
    private static var headIndexThreshold: Int { 32 }
    /// The id of the first unit of the last op (to decide whether the next op continues it).
    private var lastOpFirstID = LocalID.none
    /// The last op's `contentStart` when it is an `insertText` op, else -1 (so that typing checks
    /// it without copying the op out of `ops`).
    private var lastOpTextStart = -1
    /// Fingerprints of changes `0 ..< fingerprints.count` (see `fingerprint(ofChange:)`, in
    /// OpLog+Fingerprints.swift, which fills it; a change to the log that alters a fingerprinted
    /// change clears it).
    var fingerprints: [Int] = []
    /// This process's hashes of `replicas`, `strings` and `extras` (a prefix of each), so that a
    /// fingerprint hashes eight bytes for each instead of its contents (`fingerprint(ofChange:)`
    /// brings it up to date).
    var contentHashes = ContentHashes()
    /// How many shared-history checks this log has been part of (see `Document.relation(to:)`).
    var sharedHistoryChecks = 0
    /// How many of the first changes have no ops or text here (`dropContent(ofChangesBelow:)`):
    /// their entries in `changes` stay, and nothing reads their content. 0 for every log but a
    /// trimmed merge source's.
    private(set) var changesWithoutContent = 0
    /// While `beginAdoptingOps` is in effect: the ops the log is to end up with.
    private var adopted: AdoptedOps?
    /// Whether ops are being adopted (`ops` then holds only the last op appended).
    var isAdoptingOps: Bool { adopted != nil }

    /// Ops a replay is expected to append (`beginAdoptingOps`), and how many of them the ops
    /// appended so far matched: `ops` then holds only the last op appended, which later units
    /// may still extend, and is compared when the next op starts, or at the end.
    private struct AdoptedOps: Sendable {
        let ops: [Op]
        var matched = 0
    }

    var lvCount: Int { changes.lvEnd }

    // MARK: Text

    /// The first `count` scalars of the text when the log does not hold them itself: a load's,
    /// not yet read in (`source` nil: placeholders), or held by the notes' arenas (`source`).
    /// `storedText` then holds the scalars after them.
    private struct PendingText: Sendable {
        var count: Int
        var source: DeferredText?
    }

    /// How many scalars the log's text holds (`textView`).
    var textCount: Int { (pendingText?.count ?? 0) + storedText.count }

    /// Whether the first part of the log's text is read in the notes' arenas of a load
    /// (`deferText(to:)`).
    var textIsDeferred: Bool { pendingText?.source != nil }

    /// Whether all of the log's text is a load's, not read in yet (`beginUnwrittenText`):
    /// placeholders to whatever reads it.
    var textIsUnwritten: Bool {
        guard let pending = pendingText else { return false }
        return pending.source == nil && storedText.isEmpty
    }

    /// Inserted text of every `insertText` op, as Unicode scalars (one byte each while all of
    /// them are Latin-1: `ScalarStore`), from each op's `contentStart` on: a view that reads text
    /// a load left with the notes (`deferText(to:)`) in their arenas, and the text appended
    /// since where the log holds it. Every reader of the text reads it through this view.
    var textView: LogTextView {
        guard let pending = pendingText else { return LogTextView(tail: storedText) }
        return LogTextView(headCount: pending.count, head: pending.source, tail: storedText)
    }

    /// The whole text in one store (`textView`'s scalars), copied out when part of it is read in
    /// the notes' arenas: O(text) then. For `settleText` and tests; readers read `textView`.
    var text: ScalarStore {
        guard pendingText != nil else { return storedText }
        let view = textView
        var whole = ScalarStore(placeholders: view.count, reserving: view.count)
        view.copy(0 ..< view.count, into: &whole, at: 0)
        return whole
    }

    /// From here until `deferText(to:)` or `writeUnwrittenText()`, inserts append no text: only
    /// its length is kept (a load's replay of a block whose text the state section holds, which
    /// would append placeholders, on the thread that builds the log alone). For a log with no
    /// text yet.
    mutating func beginUnwrittenText() {
        precondition(textCount == 0 && pendingText == nil, "a log without text leaves its text unwritten")
        storedText = ScalarStore()
        pendingText = PendingText(count: 0, source: nil)
    }

    /// Appends placeholders for text left unwritten (`beginUnwrittenText`), so that the log holds
    /// its text itself; nothing otherwise.
    mutating func writeUnwrittenText() {
        guard let pending = pendingText, pending.source == nil else { return }
        var placeholders = ScalarStore(placeholders: pending.count, reserving: pending.count + storedText.count + pending.count / 8)
        placeholders.append(contentsOf: storedText[0 ..< storedText.count])
        storedText = placeholders
        pendingText = nil
    }

    /// Lets `source` hold the log's text, which it gives exactly (a load whose notes' arenas
    /// hold every inserted character): the log lets go of its own (placeholders, or the count
    /// of unwritten text). Text appended later is the log's own, after it.
    mutating func deferText(to source: DeferredText) {
        precondition(source.count == textCount, "a deferred text of the log's length")
        storedText = ScalarStore()
        pendingText = PendingText(count: source.count, source: source)
        fingerprints.removeAll()
    }

    /// Makes the log hold all of its text itself: to write into it in place, or so that a log
    /// kept after its notebook is let go (`MergeSource.keepingHistory(of:)`) does not keep the
    /// notes' arenas alive. A copy of the text when it is read in the arenas; nothing otherwise.
    mutating func settleText() {
        guard let pending = pendingText else { return }
        guard pending.source != nil else { return writeUnwrittenText() }
        storedText = text
        pendingText = nil
    }

    /// Lets go of the ops and text of changes `0 ..< count`, keeping their entries in `changes`
    /// (ids, dependencies, lengths): for a merge source whose first changes the copy it is
    /// merged into holds byte for byte (`MergeSource.keepingHistory(of:sharingFileWith:)`), so
    /// that it keeps only what that copy may lack. Their units' local versions are those of the
    /// first ops no longer held (an op running past them is cut there), and their text
    /// positions those of text counted but not held: what is kept keeps its local versions and
    /// text positions. Reading what was let go is a programming error; so is appending to the
    /// log afterwards, or fingerprinting it (`changesWithoutContent`).
    /// - Complexity: O(ops and text kept).
    mutating func dropContent(ofChangesBelow count: Int) {
        precondition(count >= changesWithoutContent && count <= changes.count && adopted == nil, "changes of the log, not yet let go")
        guard count > changesWithoutContent else { return }
        let end = count == changes.count ? lvCount : changes.lvStart(count)
        var kept: [Op] = []
        if end < lvCount {
            var k = opIndex(containingLV: end)
            if ops[k].lv < end {
                kept.append(slice(ops[k], from: end, to: ops[k].lv + ops[k].length))
                k += 1
            }
            kept.reserveCapacity(kept.count + ops.count - k)
            while k < ops.count { kept.append(ops[k]); k += 1 }
        }
        // Text is appended in op order: what the kept inserts insert starts at the first one's.
        var textStart = textCount
        for op in kept { if case .insertText(_, _, _, let start) = op.body { textStart = start; break } }
        let view = textView
        var tail = ScalarStore()
        if textStart < view.count {
            tail = ScalarStore(placeholders: view.count - textStart, reserving: view.count - textStart)
            view.copy(textStart ..< view.count, into: &tail, at: 0)
        }
        ops = OpStore(kept)
        storedText = tail
        pendingText = PendingText(count: textStart, source: nil)
        fingerprints.removeAll()
        changesWithoutContent = count
    }

    /// `settleText`, unless every arena the log reads its text in reads it in place (a state
    /// section's bytes, `DeferredText.readsInPlace`): then the log keeps reading it there, and
    /// keeps alive those bytes alone, not the notes' memory.
    mutating func settleTextOutsideSection() {
        if let source = pendingText?.source, source.readsInPlace { return }
        settleText()
    }

    /// Appends `scalars` to the text (counted alone while it is unwritten).
    private mutating func appendToText(_ scalars: some Collection<Unicode.Scalar>) {
        if let pending = pendingText, pending.source == nil {
            pendingText?.count += scalars.count
            return
        }
        storedText.append(contentsOf: scalars)
    }

    // MARK: Replicas

    /// Makes room for `more` changes, `moreOps` op rows and `moreText` inserted characters, so
    /// that a load grows its arrays once instead of doubling them (copying each several times and
    /// briefly holding both copies). Ops and text
    /// get an eighth more: a document is loaded to be edited or merged, and an exact capacity
    /// would double (and copy) at the first keystroke.
    mutating func reserve(changes more: Int, ops moreOps: Int = 0, text moreText: Int = 0) {
        changes.reserveCapacity(changes.count + more)
        if moreOps > 0 { ops.reserveCapacity(ops.count + moreOps + moreOps / 8) }
        if moreText > 0 && !(pendingText != nil && pendingText?.source == nil) { storedText.reserveCapacity(storedText.count + moreText + moreText / 8) }
    }

    /// Makes room for `more` changes beyond those the log has, growing the per-change arrays
    /// geometrically: a merge that takes in a few changes at a time (a document merged after
    /// every few edits) would copy them whole each time it reserved exactly what it needs. By an
    /// eighth, as `reserve` gives ops and text: a one-off merge (pnmerge) holds little unused room.
    mutating func reserveGrowing(changes more: Int) {
        let needed = changes.count + more
        if changes.capacity < needed { changes.reserveCapacity(Swift.max(needed, changes.capacity + changes.capacity / 8)) }
    }

    // MARK: Adopting a block's ops

    /// Makes the log, which has no ops yet, end up with `ops` itself, its storage shared rather
    /// than copied, when the appends up to `endAdoptingOps()` give those same ops. A load appends
    /// a base block's ops, which their writer stored as its log held them: each then exists
    /// once instead of twice (a 20,000-note notebook's are 4.5 MB). Each op appended is compared
    /// with `ops` once it is complete; at the first that differs (a writer that split ops this
    /// log joins, or numbered replicas otherwise), those that matched are copied from `ops` and
    /// the appends go on as they would have, so that the log ends the same either way.
    /// Nothing but appends may read or change the ops until `endAdoptingOps()`.
    mutating func beginAdoptingOps(_ ops: [Op]) {
        precondition(self.ops.isEmpty && adopted == nil, "ops are adopted into a log without any")
        adopted = AdoptedOps(ops: ops)
    }

    /// Ends `beginAdoptingOps`: the ops are the adopted array when the appends gave exactly its
    /// ops, else what the appends gave. Does nothing when no ops are being adopted.
    mutating func endAdoptingOps() {
        guard let a = adopted.take() else { return }
        let complete = a.matched + ops.count == a.ops.count && ops.count <= 1
        if complete, ops.first.map({ $0 == a.ops[a.matched] }) ?? true {
            ops = OpStore(adopting: a.ops)
        } else {
            ops = OpStore(Self.matchedThenAppended(a, ops.array))
        }
    }

    /// The adopted ops `a` matched, then `appended`: the ops the appends gave, in room for the
    /// rest of the adopted ops and an eighth more (as `reserve` gives).
    private static func matchedThenAppended(_ a: AdoptedOps, _ appended: [Op]) -> [Op] {
        var all: [Op] = []
        all.reserveCapacity(a.ops.count + a.ops.count / 8 + appended.count)
        all.append(contentsOf: a.ops[..<a.matched])
        all.append(contentsOf: appended)
        return all
    }

    /// Appends `op` after the last op, which is then complete: compared with the adopted ops,
    /// if any (`beginAdoptingOps`).
    @inline(__always) private mutating func appendNewOp(_ op: Op) {
        if adopted != nil { confirmLastOp() }
        ops.append(op)
    }

    /// The last op, complete, matched against the next adopted op: dropped from `ops` when it is
    /// the same, else the adoption ends with the ops matched so far copied in before it.
    private mutating func confirmLastOp() {
        guard let k = adopted?.matched, !ops.isEmpty else { return }
        let same = adopted?.ops.withUnsafeBufferPointer { adopted in
            // While ops are adopted, the log's own are appended ones only.
            ops.withParts { _, ops in
                guard k < adopted.count, let a = adopted.baseAddress, let o = ops.baseAddress else { return false }
                return Self.same(a + k, o + ops.count - 1)
            }
        } ?? false
        if same {
            adopted?.matched += 1
            ops.removeAll(keepingCapacity: true)
        } else if let a = adopted.take() {
            ops = OpStore(Self.matchedThenAppended(a, ops.array))
        }
    }

    /// Whether two ops are equal, read where they lie: first byte for byte (an op appended from
    /// a block's op holds the same values, its strings and arrays the same storage), then as
    /// `==` judges, which copies each body it compares (retaining what it holds).
    @inline(__always) private static func same(_ a: UnsafePointer<Op>, _ b: UnsafePointer<Op>) -> Bool {
        memcmp(a, b, MemoryLayout<Op>.size) == 0 || a.pointee == b.pointee
    }

    // MARK: Rolling back

    /// The log as it stands, for `rollBack(to:)`: its counts, and what appends change in place
    /// (the last op, which typing and deleting extend, the heads and the last op's bookkeeping).
    /// A merge takes one instead of a copy of the whole log, which its first append would copy
    /// again (every op, retained one by one) and its end release.
    struct Checkpoint: Sendable {
        fileprivate let replicas: Int
        fileprivate let strings: Int
        fileprivate let extras: Int
        fileprivate let ops: Int
        fileprivate let lastOp: Op?
        fileprivate let text: Int
        fileprivate let heads: [Int]
        fileprivate let lastOpFirstID: LocalID
        fileprivate let lastOpTextStart: Int
        fileprivate let changes: ChangeTable.Checkpoint
    }

    func checkpoint() -> Checkpoint {
        assert(adopted == nil, "no checkpoint while ops are adopted")
        return Checkpoint(replicas: replicas.count, strings: strings.count, extras: extras.count, ops: ops.count, lastOp: ops.last,
                          text: textCount, heads: heads, lastOpFirstID: lastOpFirstID, lastOpTextStart: lastOpTextStart,
                          changes: changes.checkpoint())
    }

    /// Removes everything appended since `checkpoint` was taken (changes, ops, text, and the
    /// replicas and strings they brought), leaving the log as it was then. Appending changes
    /// only adds at the ends of the log's arrays and changes its last op in place.
    mutating func rollBack(to checkpoint: Checkpoint) {
        assert(adopted == nil, "no roll-back while ops are adopted")
        precondition(replicas.count >= checkpoint.replicas && ops.count >= checkpoint.ops && textCount >= checkpoint.text,
                     "a checkpoint of this log, not rolled back past")
        for r in replicas[checkpoint.replicas...] { replicaIndex[r] = nil }
        replicas.removeLast(replicas.count - checkpoint.replicas)
        for s in strings[checkpoint.strings...] { stringIndex[ExactString(s)] = nil }
        strings.removeLast(strings.count - checkpoint.strings)
        extras.removeLast(extras.count - checkpoint.extras)
        ops.removeLast(ops.count - checkpoint.ops)
        if let last = checkpoint.lastOp { ops[ops.count - 1] = last }
        if textCount > checkpoint.text {
            if checkpoint.text < (pendingText?.count ?? 0) { settleText() }
            storedText.removeLast(textCount - checkpoint.text)
        }
        heads = checkpoint.heads
        headPlaces = nil
        lastOpFirstID = checkpoint.lastOpFirstID
        lastOpTextStart = checkpoint.lastOpTextStart
        changes.rollBack(to: checkpoint.changes)
        // Fingerprints of removed changes, and hashes of removed replicas and strings (later
        // ones may take their indices), go too.
        if fingerprints.count > changes.count { fingerprints.removeLast(fingerprints.count - changes.count) }
        contentHashes.truncate(replicas: replicas.count, strings: strings.count, extras: extras.count)
    }

    mutating func agent(for replica: ReplicaID) -> UInt32 {
        if let a = replicaIndex[replica] { return a }
        let a = UInt32(replicas.count)
        replicas.append(replica)
        replicaIndex[replica] = a
        return a
    }

    func existingAgent(for replica: ReplicaID) -> UInt32? { replicaIndex[replica] }

    func replicaLess(_ a: UInt32, _ b: UInt32) -> Bool { replicas[Int(a)] < replicas[Int(b)] }

    // MARK: Change metadata

    /// The dependencies of change `ci` (indices of earlier changes).
    @inline(__always) func deps(of ci: Int) -> ChangeTable.Deps { changes.deps(of: ci) }

    @inline(__always) func lamport(ofChange ci: Int) -> UInt64 { changes.lamport(ci) }

    func author(of ci: Int) -> String { strings[Int(changes.author(ci))] }
    func message(of ci: Int) -> String { strings[Int(changes[ci].message)] }
    func extra(of ci: Int) -> [UInt8] { extras[Int(changes[ci].extra)] }

    /// The index of `s` in `strings`, adding it when new. Most changes repeat the previous
    /// change's author and message, so those are checked before the dictionary.
    private mutating func intern(_ s: String, previous: UInt32?) -> UInt32 {
        if s.isEmpty { return 0 }
        if let p = previous, strings[Int(p)].hasSameScalars(as: s) { return p }
        let key = ExactString(s)
        if let i = stringIndex[key] { return i }
        let i = UInt32(strings.count)
        strings.append(s)
        stringIndex[key] = i
        return i
    }

    /// The last change `agent` made, if any.
    @inline(__always) func lastChange(of agent: UInt32) -> Int? { changes.lastIndex(agent: agent) }

    /// The seq, op counter end and last Lamport timestamp of `agent`'s last change, if any (what
    /// a loader checks the agent's next change against), read in one call.
    @inline(__always) func lastChangeEnd(of agent: UInt32) -> (seq: Int, counterEnd: Int, lamportEnd: UInt64)? {
        guard let i = changes.lastIndex(agent: agent) else { return nil }
        return (Int(changes.seq(i)), changes.counterEnd(i), changes.lamportEnd(i))
    }

    /// How many changes `agent` made (its last change's seq).
    @inline(__always) func changeCount(of agent: UInt32) -> Int { changes.changeCount(agent: agent) }

    /// The change of `agent` numbered `seq`, if any.
    func changeIndex(agent: UInt32, seq: UInt32) -> Int? { changes.index(agent: agent, seq: seq) }

    /// Gives this log's ops storage of their own, so that a change to them copies nothing
    /// (for timing a copy's changes apart from the copy).
    mutating func copyOpsStorage() { ops.copyStorage() }

    /// Sets the origins of insertText ops (`op` indexes `ops`; each an insert): the origins a
    /// file left out (`buildBodies(from:)`).
    mutating func setInsertOrigins(_ origins: [(op: Int, left: LocalID, right: LocalID)]) {
        assert(adopted == nil, "ops are read whole only once adopted")
        for (i, left, right) in origins {
            guard case .insertText(let note, _, _, let start) = ops[i].body else { preconditionFailure("origins are set on inserts") }
            ops.update(i) { $0.body = .insertText(note: note, originLeft: left, originRight: right, contentStart: start) }
        }
        if !origins.isEmpty { fingerprints.removeAll() }
    }

    // MARK: Appending

    /// Starts a new change by `agent` on top of `deps` (default: the current heads).
    /// Its lamport timestamp is derived from its dependencies.
    mutating func beginChange(agent: UInt32, deps: [Int]? = nil, time: Int64, author: String, message: String, extra: [UInt8] = []) -> Int {
        if let deps { return beginChange(agent: agent, deps: deps[...], time: time, author: author, message: message, extra: extra) }
        // On top of the heads: every head is a dependency, so the new change is the only head.
        let last = changes.lastMeta
        // Typing: the next change on top of the last one, by its author with its message, joins
        // the last run of changes as it is (what interning both strings and appending gives).
        if heads.count == 1, heads[0] == changes.count - 1, extra.isEmpty, let last, last.extra == 0,
           strings[Int(last.author)].hasSameScalars(as: author), strings[Int(last.message)].hasSameScalars(as: message),
           changes.appendContinuing(agent: agent, meta: last, time: time) {
            heads[0] = changes.count - 1
            return heads[0]
        }
        let authorIndex = intern(author, previous: last?.author)
        let messageIndex = intern(message, previous: last?.message)
        if heads.count == 1 {
            // One head (typing): no array for the dependencies, and `heads` is rewritten in place
            // (a slice of it kept alive would make it copy its storage).
            let index = appendChange(agent: agent, deps: CollectionOfOne(heads[0]), time: time, author: authorIndex, message: messageIndex, extra: extra)
            heads[0] = index
            return index
        }
        let index = appendChange(agent: agent, deps: heads.sorted(), time: time, author: authorIndex, message: messageIndex, extra: extra)
        heads.removeAll(keepingCapacity: true)
        headPlaces = nil
        heads.append(index)
        return index
    }

    /// Starts a new change by `agent` on top of `deps` (indices of earlier changes).
    mutating func beginChange(agent: UInt32, deps: ArraySlice<Int>, time: Int64, author: String, message: String, extra: [UInt8]) -> Int {
        let last = changes.lastMeta
        let strings = (intern(author, previous: last?.author), intern(message, previous: last?.message))
        return beginChange(agent: agent, deps: deps, time: time, author: strings.0, message: strings.1, extra: extra)
    }

    /// Interns `s` in `strings` (for a caller that maps a whole table of strings at once).
    mutating func internString(_ s: String) -> UInt32 { intern(s, previous: nil) }

    /// Starts a new change by `agent` on top of `deps`, with author and message given as indices
    /// into `strings` (see `internString`). Generic so that one dependency needs no array.
    mutating func beginChange<D: Collection<Int>>(agent: UInt32, deps: D, time: Int64, author: UInt32, message: UInt32, extra: [UInt8]) -> Int {
        precondition(changesWithoutContent == 0, "a log whose first changes' content was let go takes no more changes")
        let index: Int
        if deps.count > 1 {
            index = appendChange(agent: agent, deps: deps.sorted(), time: time, author: author, message: message, extra: extra)
        } else {
            index = appendChange(agent: agent, deps: deps, time: time, author: author, message: message, extra: extra)
        }
        if heads.count == 1 && deps.count == 1 && heads.first == deps.first {
            heads[0] = index
        } else {
            for d in deps { removeHead(d) }
            addHead(index)
        }
        return index
    }

    /// Appends a change record on top of `deps` (sorted), leaving `heads` to the caller.
    private mutating func appendChange<D: Collection<Int>>(agent: UInt32, deps d: D, time: Int64, author authorIndex: UInt32, message messageIndex: UInt32, extra: [UInt8]) -> Int {
        let index = changes.count
        if d.count == 1, d.first == index - 1, extra.isEmpty,
           changes.appendContinuing(agent: agent, meta: ChangeTable.Meta(author: authorIndex, message: messageIndex, extra: 0), time: time) {
            return index
        }
        var lamport: UInt64 = 1
        for x in d where changes.lamportEnd(x) + 1 > lamport { lamport = changes.lamportEnd(x) + 1 }
        let last = lastChange(of: agent)
        let previousCount = last.map { Int(changes.seq($0)) } ?? 0
        let counterStart: UInt32 = last.map { UInt32(changes.counterEnd($0)) } ?? 0
        var extraIndex: UInt32 = 0
        if !extra.isEmpty {
            extraIndex = UInt32(extras.count)
            extras.append(extra)
        }
        changes.appendEmpty(agent: agent, seq: UInt32(previousCount + 1), counterStart: counterStart,
                            meta: ChangeTable.Meta(author: authorIndex, message: messageIndex, extra: extraIndex),
                            deps: d, lamport: lamport, time: time)
        return index
    }

    /// The Lamport timestamp the next op unit of the open (last) change gets.
    @inline(__always) var lamportOfNextUnit: UInt64 {
        let i = changes.count - 1
        return changes.lamport(i) + UInt64(changes.length(i))
    }

    /// The id the next op unit of the open (last) change gets.
    @inline(__always) var nextID: LocalID {
        let i = changes.count - 1
        return LocalID(agent: changes.agent(i), counter: UInt32(truncatingIfNeeded: changes.counterEnd(i)))
    }

    /// The id `agent`'s next op unit gets when the log's last change is `agent`'s (whether that
    /// change is still open or a new one follows it); nil otherwise.
    @inline(__always) func nextID(ifLastChangeBy agent: UInt32) -> LocalID? {
        changes.count > 0 && changes.agent(changes.count - 1) == agent ? nextID : nil
    }

    /// Appends an op to the last change, merging it into the previous op when it continues it.
    /// For `insertText`, pass the scalars in `scalars`; the body's `contentStart` is filled in.
    mutating func append(_ body: OpBody, length: Int, scalars: some Collection<Unicode.Scalar> = EmptyCollection()) {
        var body = body
        if case .insertText(let note, let left, let right, _) = body {
            body = .insertText(note: note, originLeft: left, originRight: right, contentStart: textCount)
            appendToText(scalars)
        }
        appendOp(body, length: length)
    }

    /// Appends `s`'s scalars to `text` (for an `insertText` op appended next with `appendOp`)
    /// and returns how many there are. ASCII, most typing, is copied byte by byte.
    @discardableResult
    mutating func appendText(_ s: String) -> Int {
        writeUnwrittenText()
        let before = storedText.count
        var s = s
        let ascii = s.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return false }
            storedText.append(ascii: bytes)
            return true
        }
        if !ascii { storedText.append(contentsOf: s.unicodeScalars) }
        return storedText.count - before
    }

    /// Appends `scalars` to `text` (for an `insertText` op appended next with `appendOp`).
    mutating func appendText(_ scalars: [Unicode.Scalar]) {
        writeUnwrittenText()
        storedText.append(contentsOf: scalars)
    }

    /// Appends a local insert into `note` of `length` units, already in `text` from
    /// `contentStart`, whose left origin is the unit before it (typing on): extends the last op
    /// when the insert continues it, as `appendOp` does, reading only what that needs.
    mutating func appendTypingInsert(note: LocalID, originRight: LocalID, contentStart: Int, length: Int) {
        let n = ops.count - 1
        let next = nextID
        if n >= 0, lastOpTextStart >= 0, ops[n].lv + ops[n].length == lvCount,
           lastOpFirstID.agent == next.agent, Int(lastOpFirstID.counter) + ops[n].length == Int(next.counter),
           case .insertText(let n1, _, let r1, let s1) = ops[n].body, n1 == note, r1 == originRight, s1 + ops[n].length == contentStart {
            changes.extendLast(by: length)
            dropFingerprintOfLastChange()
            ops.update(n) { $0.length += length }
            return
        }
        appendOp(.insertText(note: note, originLeft: next.advanced(by: -1), originRight: originRight, contentStart: contentStart), length: length)
    }

    /// The last change's fingerprint (when computed) no longer holds once its ops grow.
    @inline(__always) private mutating func dropFingerprintOfLastChange() {
        if fingerprints.count >= changes.count { fingerprints.removeLast(fingerprints.count - changes.count + 1) }
    }

    /// Appends an op to the last change, merging it into the previous op when it continues it.
    /// An `insertText` op's units must already be in `text` from its `contentStart`.
    mutating func appendOp(_ body: OpBody, length: Int) {
        if body.mayListPredecessors {
            appendOpAsIs(withPredecessorsInOrder(body), length: length)
        } else {
            appendOpAsIs(body, length: length)
        }
    }

    private mutating func appendOpAsIs(_ body: OpBody, length: Int) {
        let lv = lvCount
        changes.extendLast(by: length)
        dropFingerprintOfLastChange()
        let bID = localID(ofLV: lv, change: changes.count - 1)
        let last = ops.count - 1
        if last >= 0, ops[last].lv + ops[last].length == lv, ops.update(last, { Self.extend(&$0, firstID: lastOpFirstID, with: body, length: length, firstID: bID) }) {
            return
        }
        appendNewOp(Op(lv: lv, length: length, body: body))
        lastOpFirstID = bID
        if case .insertText(_, _, _, let start) = body { lastOpTextStart = start } else { lastOpTextStart = -1 }
    }

    /// `body` with its predecessors (or, for removeTag, the tag adds it removes) sorted by replica
    /// id, then counter: the order files list them in (peernote(5), Op columns). An op made here
    /// lists them in the order its register held them; sorted, one op reads alike in every copy,
    /// made here, loaded or merged in (the shared-history check compares ops, and fingerprints
    /// hash them, in order).
    private func withPredecessorsInOrder(_ body: OpBody) -> OpBody {
        func sorted(_ ids: [LocalID]) -> [LocalID] {
            let replicas = self.replicas
            func less(_ a: LocalID, _ b: LocalID) -> Bool {
                guard a.agent != b.agent else { return a.counter < b.counter }
                guard Int(a.agent) < replicas.count, Int(b.agent) < replicas.count else { return a.agent < b.agent }
                return replicas[Int(a.agent)] < replicas[Int(b.agent)]
            }
            return ids.sorted(by: less)
        }
        switch body {
        case .setNotebookTitle(let v, let p) where p.count > 1: return .setNotebookTitle(v, preds: sorted(p))
        case .setNoteTitle(let n, let v, let p) where p.count > 1: return .setNoteTitle(note: n, v, preds: sorted(p))
        case .removeTag(let n, let t, let r) where r.count > 1: return .removeTag(note: n, t, removes: sorted(r))
        case .setPriority(let n, let v, let p) where p.count > 1: return .setPriority(note: n, v, preds: sorted(p))
        case .deleteNote(let n, let p) where p.count > 1: return .deleteNote(note: n, preds: sorted(p))
        case .restoreNote(let n, let p) where p.count > 1: return .restoreNote(note: n, preds: sorted(p))
        case .moveNote(let n, let l, let r, let p) where p.count > 1: return .moveNote(note: n, originLeft: l, originRight: r, preds: sorted(p))
        default: return body
        }
    }

    /// Extends `a` by the op `body` of `length` units whose first unit is `bID` when it
    /// continues `a` (as `merge` decides), without copying `a`; false, changing nothing, otherwise.
    static func extend(_ a: inout Op, firstID aID: LocalID, with body: OpBody, length: Int, firstID bID: LocalID) -> Bool {
        guard aID.agent == bID.agent, Int(aID.counter) + a.length == Int(bID.counter) else { return false }
        // Each body matched on its own: a switch over the pair built a tuple, copying both
        // bodies (retaining their payloads) on every call, which loading makes once an op.
        switch body {
        case let .insertText(n2, l2, r2, s2):
            guard case let .insertText(n1, _, r1, s1) = a.body, n1 == n2, r1 == r2, s2 == s1 + a.length, l2 == bID.advanced(by: -1) else { return false }
            a.length += length
            return true
        case let .deleteText(n2, t2, rev2):
            guard case let .deleteText(n1, t1, rev1) = a.body, n1 == n2,
                  let reversed = continuedDelete(target: t1, reversed: rev1, length: a.length, by: t2, reversed: rev2, length: length) else { return false }
            if reversed != rev1 { a.body = .deleteText(note: n1, target: t1, reversed: reversed) }
            a.length += length
            return true
        default:
            return false
        }
    }

    /// Whether a delete of `bLength` units from `t2` continues one of `aLength` units from `t1`
    /// (the rule `merge` states), and if so whether the joined delete runs backwards.
    @inline(__always)
    private static func continuedDelete(target t1: LocalID, reversed rev1: Bool, length aLength: Int,
                                        by t2: LocalID, reversed rev2: Bool, length bLength: Int) -> Bool? {
        if !rev1 && (!rev2 || bLength == 1) && t2 == t1.advanced(by: aLength) { return false }
        if (rev1 || aLength == 1) && (rev2 || bLength == 1) && t2 == t1.advanced(by: -aLength) && Int(t1.counter) >= aLength { return true }
        return nil
    }

    /// Extends the last op by `length` units of `scalars`, in the open change, when it is an
    /// insert ending at the end of the log (so the new units continue it exactly: their left
    /// origin is its last unit, their ids follow on). Returns false, changing nothing, otherwise.
    /// Loading uses it for a typing run that the file stores as one op over many changes.
    mutating func extendLastInsert(by length: Int, scalars: some Collection<Unicode.Scalar>) -> Bool {
        guard canExtendLastInsert, scalars.count == length else { return false }
        changes.extendLast(by: length)
        dropFingerprintOfLastChange()
        ops.update(ops.count - 1) { $0.length += length }
        appendToText(scalars)
        return true
    }

    /// Appends changes by `agent`, each on top of the one before and the first on top of the last
    /// change (which must be `agent`'s), all with its time, author and message, holding
    /// `lengths` units each: `scalars`, which continue the last insert op exactly (as
    /// `extendLastInsert` requires). Typing, as loading meets it, one change per keystroke: the
    /// changes join the last change's run, so everything about them follows from it. Returns
    /// false, changing nothing, when any of that does not hold.
    mutating func appendTypingChanges<L: Collection>(agent: UInt32, time: Int64, author: UInt32, message: UInt32, lengths: L,
                                                    scalars: some Collection<Unicode.Scalar>) -> Bool where L.Element: BinaryInteger {
        let total = scalars.count
        let index = changes.count
        guard total > 0, !lengths.isEmpty, index > 0, changes.agent(index - 1) == agent, canExtendLastInsert,
              changes.counterEnd(index - 1) + total < Int(UInt32.max),
              changes.appendContinuing(agent: agent, meta: ChangeTable.Meta(author: author, message: message, extra: 0), time: time, lengths: lengths)
        else { return false }
        replaceHead(index - 1, with: changes.count - 1)
        ops.update(ops.count - 1) { $0.length += total }
        appendToText(scalars)
        return true
    }

    /// Appends changes as `appendTypingChanges` does, whose ops are one delete `body` of all
    /// their units that continues the log's last op (as `appendOp` would merge it: deleting on
    /// in one direction). Deleting, as loading meets it: a run of keystrokes the file stores as
    /// one op over many changes. Returns false, changing nothing, when any of that does not hold.
    mutating func appendDeletingChanges<L: Collection>(agent: UInt32, time: Int64, author: UInt32, message: UInt32, lengths: L,
                                                      total: Int, body: OpBody) -> Bool where L.Element: BinaryInteger {
        let index = changes.count
        let meta = ChangeTable.Meta(author: author, message: message, extra: 0)
        guard case .deleteText = body, total > 0, !lengths.isEmpty, index > 0, changes.agent(index - 1) == agent,
              let last = ops.indices.last, ops[last].lv + ops[last].length == lvCount,
              changes.counterEnd(index - 1) + total < Int(UInt32.max),
              changes.canAppendContinuing(agent: agent, meta: meta, time: time, units: total) else { return false }
        // The op is extended in place (a copy of it, extended and stored back, cost three copies
        // of its body a call); the changes are appended after, where they are known to join.
        guard case let .deleteText(note, target, reversed) = ops[last].body else { return false }
        let length = ops[last].length
        let firstID = lastOpFirstID, next = nextID
        guard ops.update(last, { Self.extend(&$0, firstID: firstID, with: body, length: total, firstID: next) }) else { return false }
        guard changes.appendContinuing(agent: agent, meta: meta, time: time, lengths: lengths) else {
            // Not expected (`total` is what `lengths` add up to): the op is put back as it was.
            ops[last] = Op(lv: ops[last].lv, length: length, body: .deleteText(note: note, target: target, reversed: reversed))
            return false
        }
        replaceHead(index - 1, with: changes.count - 1)
        return true
    }

    /// Appends changes as `appendTypingChanges` does, whose units delete the elements of
    /// `note`'s body in `spans` (runs of contiguous ids, in list order; as many units as
    /// `lengths` gives): in list order, or `backwards` from the last (each run counting down).
    /// Each run's op is merged into the op before it where `appendOp` would merge it, one
    /// keystroke's delete after another. Keystrokes deleting, applied at once (see
    /// `DocumentCore.Burst`). Returns false, changing nothing, when the changes do not join the
    /// last change's run.
    mutating func appendDeleteBurst(agent: UInt32, time: Int64, meta: ChangeTable.Meta, lengths: ChangeLengths,
                                    note: LocalID, spans: [(LocalID, Int)], backwards: Bool) -> Bool {
        let index = changes.count
        let total = spans.reduce(0) { $0 + $1.1 }
        let first = nextID
        guard burstJoinsLastRun(agent: agent, time: time, meta: meta, total: total),
              changes.appendContinuing(agent: agent, meta: meta, time: time, lengths: lengths) else { return false }
        assert(lengths.reduce(0, { $0 + Int($1) }) == total)
        replaceHead(index - 1, with: changes.count - 1)
        var lv = changes.lvEnd - total
        var id = first
        for k in spans.indices {
            // Backwards, a run's keystrokes delete its ids counting down: as one op, merged
            // keystroke by keystroke, from its last id, reversed (one keystroke: not reversed).
            let (start, length) = spans[backwards ? spans.count - 1 - k : k]
            let body = backwards ? OpBody.deleteText(note: note, target: start.advanced(by: length - 1), reversed: length > 1)
                                 : OpBody.deleteText(note: note, target: start, reversed: false)
            let last = ops.count - 1
            if !(last >= 0 && ops[last].lv + ops[last].length == lv && ops.update(last, { Self.extend(&$0, firstID: lastOpFirstID, with: body, length: length, firstID: id) })) {
                appendNewOp(Op(lv: lv, length: length, body: body))
                lastOpFirstID = id
                lastOpTextStart = -1
            }
            lv += length
            id = id.advanced(by: length)
        }
        return true
    }

    /// Appends changes as `appendTypingChanges` does, whose units insert `scalars` into `note`'s
    /// body as one insert with the given origins, merged into the last op where `appendOp`
    /// would merge it (typing on). Keystrokes typing, applied at once (see
    /// `DocumentCore.Burst`). Returns false, changing nothing, when the changes do not join the
    /// last change's run.
    mutating func appendInsertBurst(agent: UInt32, time: Int64, meta: ChangeTable.Meta, lengths: ChangeLengths, note: LocalID,
                                    originLeft: LocalID, originRight: LocalID, scalars: some Collection<Unicode.Scalar>) -> Bool {
        let index = changes.count
        let total = scalars.count
        let first = nextID
        guard burstJoinsLastRun(agent: agent, time: time, meta: meta, total: total),
              changes.appendContinuing(agent: agent, meta: meta, time: time, lengths: lengths) else { return false }
        replaceHead(index - 1, with: changes.count - 1)
        let lv = changes.lvEnd - total
        let body = OpBody.insertText(note: note, originLeft: originLeft, originRight: originRight, contentStart: textCount)
        appendToText(scalars)
        let last = ops.count - 1
        if !(last >= 0 && ops[last].lv + ops[last].length == lv && ops.update(last, { Self.extend(&$0, firstID: lastOpFirstID, with: body, length: total, firstID: first) })) {
            appendNewOp(Op(lv: lv, length: total, body: body))
            lastOpFirstID = first
            lastOpTextStart = textCount - total
        }
        return true
    }

    /// Whether `total` units in changes by `agent` with `meta` at `time` join the last change's
    /// run (`appendInsertBurst` and `appendDeleteBurst` then succeed).
    func burstJoinsLastRun(agent: UInt32, time: Int64, meta: ChangeTable.Meta, total: Int) -> Bool {
        let index = changes.count
        return total > 0 && index > 0 && changes.agent(index - 1) == agent && meta.extra == 0
            && changes.counterEnd(index - 1) + total < Int(UInt32.max) && changes.continuesLastRun(agent: agent, meta: meta, time: time)
    }

    /// The last change's author, message and extra indices when a change by `agent` at `time`,
    /// with `author` and `message` and no extra fields, on top of the heads joins its run (as
    /// `beginChange` joins typing): the only head is the last change, by `agent`, at `time`,
    /// with that author and message. Nil otherwise.
    func continuingMeta(agent: UInt32, time: Int64, author: String, message: String) -> ChangeTable.Meta? {
        guard heads.count == 1, let last = changes.lastMeta, last.extra == 0 else { return nil }
        let i = heads[0]
        guard i == changes.count - 1, changes.agent(i) == agent, changes.time(i) == time,
              strings[Int(last.author)].hasSameScalars(as: author), strings[Int(last.message)].hasSameScalars(as: message) else { return nil }
        return last
    }

    /// Whether units typed into `note`, with right origin `originRight`, right after the log's
    /// last unit continue the last op (as `appendTypingInsert` extends it).
    func lastOpContinuesTyping(note: LocalID, originRight: LocalID) -> Bool {
        guard canExtendLastInsert, case .insertText(let n, _, let r, _) = ops[ops.count - 1].body else { return false }
        return n == note && r == originRight
    }

    /// Change `new` takes the place of `old` among the heads (it has `old` as its only dependency).
    private mutating func replaceHead(_ old: Int, with new: Int) {
        if heads.count == 1 && heads[0] == old {
            heads[0] = new
        } else {
            removeHead(old)
            addHead(new)
        }
    }

    /// Removes change `c` from the heads, if it is one (the last head takes its place).
    private mutating func removeHead(_ c: Int) {
        let place: Int
        if headPlaces != nil {
            guard let p = headPlaces?.removeValue(forKey: c) else { return }
            place = p
        } else {
            guard let p = heads.firstIndex(of: c) else { return }
            place = p
        }
        let last = heads.removeLast()
        if place < heads.count {
            heads[place] = last
            headPlaces?[last] = place
        }
        if heads.count <= Self.headIndexThreshold / 2 { headPlaces = nil }
    }

    private mutating func addHead(_ c: Int) {
        heads.append(c)
        if headPlaces != nil {
            headPlaces?[c] = heads.count - 1
        } else if heads.count > Self.headIndexThreshold {
            var places: [Int: Int] = [:]
            places.reserveCapacity(heads.count * 2)
            for (k, h) in heads.enumerated() { places[h] = k }
            headPlaces = places
        }
    }

    /// Whether the log's last op is an insert that ends the log and the text, by the last
    /// change's agent, with ids running on to the next unit: new units typed after it continue it.
    @inline(__always)
    private var canExtendLastInsert: Bool {
        let n = ops.count - 1
        guard lastOpTextStart >= 0, n >= 0, changes.count > 0 else { return false }
        let length = ops[n].length
        return ops[n].lv + length == lvCount && lastOpTextStart + length == textCount
            && lastOpFirstID.agent == changes.agent(changes.count - 1) && Int(lastOpFirstID.counter) + length == Int(nextID.counter)
    }

    /// Writes inserted characters in place, from `start` (an op's `contentStart` plus an
    /// offset) on. Loading a block whose text is stored in document order uses it
    /// (`buildBodies(from:fillingText:)`).
    mutating func overwriteInsertedText(from start: Int, with scalars: some Collection<Unicode.Scalar>) {
        fingerprints.removeAll()
        settleText()
        storedText.overwrite(from: start, with: scalars)
    }

    /// `a` and `b` as one op when `b` continues `a` (typing on, or deleting on in one direction):
    /// same replica, consecutive ids, and bodies that chain.
    static func merge(_ a: Op, firstID aID: LocalID, _ b: Op, firstID bID: LocalID) -> Op? {
        guard aID.agent == bID.agent, Int(aID.counter) + a.length == Int(bID.counter) else { return nil }
        switch (a.body, b.body) {
        case let (.insertText(n1, _, r1, s1), .insertText(n2, l2, r2, s2)):
            // b's first unit must have a's last unit as left origin: ids are consecutive,
            // so a's last id is bID - 1.
            guard n1 == n2, r1 == r2, s2 == s1 + a.length, l2 == bID.advanced(by: -1) else { return nil }
            return Op(lv: a.lv, length: a.length + b.length, body: a.body)
        case let (.deleteText(n1, t1, rev1), .deleteText(n2, t2, rev2)):
            guard n1 == n2, let reversed = continuedDelete(target: t1, reversed: rev1, length: a.length, by: t2, reversed: rev2, length: b.length) else { return nil }
            return Op(lv: a.lv, length: a.length + b.length, body: .deleteText(note: n1, target: t1, reversed: reversed))
        default:
            return nil
        }
    }

    /// Opens a change for tests that append raw ops (e.g. of unknown kinds).
    mutating func beginChangeIfNeededForTest(agent: UInt32, clock: () -> Date, author: String) {
        _ = beginChange(agent: agent, time: Int64(clock().timeIntervalSince1970), author: author, message: "future")
    }
}
