/// The op log's inserted text where a load found it (`OpLog.deferText(to:)`): a load that reads
/// a notebook's visible text from its state section has every inserted character in its note's
/// arena, and the log's text is only those characters again, in op order: stretches of one
/// note's arena after another's (`pieces`). The log reads them there instead of holding a copy.
/// The bodies that read their section's bytes in place are stretches of one store over those
/// bytes (`init(arenas:sources:runs:)`), not an arena copied for each note.
///
/// Invariants: the pieces follow each other in the text, from 0 to `count`; each lies in its
/// arena (`init` checks it; the load checks that they are the inserts' characters). The arenas are values: what the notes do later changes
/// copies of them, not these.
/// - Complexity: finding the piece at a position, O(log pieces).
struct DeferredText: Sendable {
    /// One piece: the text from `start` on is `arenas[arena]` from `from` on, up to the next
    /// piece's start. (16 bytes: a notebook of 20,000 notes has about 50,000 pieces.)
    struct Piece: Sendable {
        var start: Int
        var arena: Int32
        var from: UInt32
    }

    let count: Int
    private let pieces: [Piece]
    private let arenas: [ScalarStore]

    /// Whether every arena reads its text in place (`ScalarStore.readsInPlace`) or is empty:
    /// the text then keeps alive the bytes they read (a state section's) and this, no note's
    /// own memory.
    var readsInPlace: Bool { arenas.allSatisfy { $0.readsInPlace || $0.isEmpty } }

    /// Pieces `(arena, length)` in text order, each after what the arena's earlier pieces took.
    /// Nil when one does not lie within its arena, or starts past 2^32 scalars into it.
    init?(arenas: [ScalarStore], runs: some Sequence<(arena: Int, length: Int)>) {
        self.init(arenas: arenas, sources: arenas.indices.map { ($0, 0 ..< arenas[$0].count) },
                  runs: runs.lazy.map { (source: $0.arena, length: $0.length) })
    }

    /// Pieces `(source, length)` in text order, where source `k` is the stretch
    /// `sources[k].range` of arena `sources[k].arena` (several sources may share an arena: the
    /// bodies that read a state section's bytes in place are stretches of one store reading all
    /// of them), each piece after what the source's earlier pieces took. Nil when a source does
    /// not lie within its arena, a piece not within its source, or one starts past 2^32 scalars
    /// into its arena.
    init?(arenas: [ScalarStore], sources: [(arena: Int, range: Range<Int>)], runs: some Sequence<(source: Int, length: Int)>) {
        for s in sources {
            guard s.arena >= 0, s.arena < arenas.count, s.arena <= Int(Int32.max), s.range.lowerBound >= 0,
                  s.range.upperBound <= arenas[s.arena].count else { return nil }
        }
        var pieces: [Piece] = []
        // Room for every run at once (a load's runs are an array): grown by doubling, the
        // array's earlier buffers would be left as holes in the heap when the load ends.
        pieces.reserveCapacity(runs.underestimatedCount)
        var used = [Int](repeating: 0, count: sources.count)
        var start = 0
        for run in runs {
            guard run.source >= 0, run.source < sources.count, run.length > 0 else { return nil }
            let source = sources[run.source]
            guard run.length <= source.range.count - used[run.source],
                  let from = UInt32(exactly: source.range.lowerBound + used[run.source]) else { return nil }
            pieces.append(Piece(start: start, arena: Int32(source.arena), from: from))
            used[run.source] += run.length
            start += run.length
        }
        self.count = start
        self.pieces = pieces
        self.arenas = arenas
    }

    /// The piece holding position `i` (in `0 ..< count`).
    private func pieceIndex(at i: Int) -> Int {
        var low = 0, high = pieces.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if pieces[mid].start <= i { low = mid } else { high = mid - 1 }
        }
        return low
    }

    private func end(of k: Int) -> Int { k + 1 < pieces.count ? pieces[k + 1].start : count }

    /// Calls `visit(arena, arenaRange)` for each stretch of `range`, in order.
    func forEachStretch(_ range: Range<Int>, _ visit: (ScalarStore, Range<Int>) -> Void) {
        guard !range.isEmpty else { return }
        var k = pieceIndex(at: range.lowerBound)
        var at = range.lowerBound
        while at < range.upperBound {
            let p = pieces[k], upTo = Swift.min(end(of: k), range.upperBound)
            let from = Int(p.from) + at - p.start
            visit(arenas[Int(p.arena)], from ..< from + upTo - at)
            at = upTo
            k += 1
        }
    }

    /// The scalars at `range` when one piece holds them all: its arena, and where they lie in it.
    func stretch(_ range: Range<Int>) -> (store: ScalarStore, range: Range<Int>)? {
        withStretch(range) { store, r in (store, r) }
    }

    /// `body(arena, where range lies in it)` when one piece holds all of `range`, else nil; the
    /// arena is lent, not copied (a copy retains and releases its buffers).
    func withStretch<R>(_ range: Range<Int>, _ body: (borrowing ScalarStore, Range<Int>) -> R) -> R? {
        guard !range.isEmpty else { return nil }
        let k = pieceIndex(at: range.lowerBound)
        guard range.upperBound <= end(of: k) else { return nil }
        let p = pieces[k], from = Int(p.from) + range.lowerBound - p.start
        return body(arenas[Int(p.arena)], from ..< from + range.count)
    }
}

/// The op log's inserted text as one collection of scalars (`OpLog.textView`): its first
/// `headCount` scalars where a load left them (`DeferredText`), the rest where the log holds
/// them. A stretch within one store is read where it lies (its `ScalarRun`'s indices are then
/// that store's); one across stores is copied out. Unlike a collection's usual slice, then,
/// `self[range]` does not share this view's indices: read it from its own `startIndex`.
struct LogTextView: RandomAccessCollection, Sendable {
    private let headCount: Int
    private let head: DeferredText?
    private let tail: ScalarStore

    init(tail: ScalarStore) {
        headCount = 0
        head = nil
        self.tail = tail
    }

    init(headCount: Int, head: DeferredText?, tail: ScalarStore) {
        self.headCount = headCount
        self.head = head
        self.tail = tail
    }

    var startIndex: Int { 0 }
    var endIndex: Int { headCount + tail.count }

    /// The first part: where the load left it, or placeholders for a load's text not yet read
    /// in (which nothing is expected to read: `OpLog.writeUnwrittenText`).
    private func forEachHeadStretch(_ range: Range<Int>, _ visit: (ScalarStore, Range<Int>) -> Void) {
        guard !range.isEmpty else { return }
        if let head { return head.forEachStretch(range, visit) }
        assertionFailure("the text of a load is read before it was read in")
        visit(ScalarStore(placeholders: range.count, reserving: 0), 0 ..< range.count)
    }

    subscript(_ i: Int) -> Unicode.Scalar { i < headCount ? self[i ..< i + 1].first ?? .placeholder : tail[i - headCount] }

    subscript(_ range: Range<Int>) -> ScalarRun {
        if let (store, start) = part(holding: range) { return store[start ..< start + range.count] }
        var both = ScalarStore(placeholders: range.count, reserving: range.count)
        copy(range, into: &both, at: 0)
        return both[0 ..< range.count]
    }

    /// The store holding all of `range` and where `range` starts in it; nil when it runs across
    /// pieces.
    private func part(holding range: Range<Int>) -> (store: ScalarStore, start: Int)? {
        if range.lowerBound >= headCount { return (tail, range.lowerBound - headCount) }
        if range.upperBound <= headCount, let head, let (store, r) = head.stretch(range) { return (store, r.lowerBound) }
        return nil
    }

    /// `range` cut where the first part ends: its stretch in the first part, and in the second
    /// (by the second part's offsets).
    private func split(_ range: Range<Int>) -> (head: Range<Int>, tail: Range<Int>) {
        let cut = Swift.min(Swift.max(range.lowerBound, headCount), range.upperBound)
        return (range.lowerBound ..< cut, cut - headCount ..< range.upperBound - headCount)
    }

    /// Writes the scalars at `range` into `store` from `start` on (`ScalarStore.overwrite`).
    func copy(_ range: Range<Int>, into store: inout ScalarStore, at start: Int) {
        let (h, t) = split(range)
        var at = start
        forEachHeadStretch(h) { source, r in
            store.overwrite(from: at, with: source, r)
            at += r.count
        }
        if !t.isEmpty { store.overwrite(from: at, with: tail, t) }
    }

    /// `ScalarStore.hash` of the scalars at `range`: the same value however they are held.
    func hash(_ range: Range<Int>, into hasher: inout Hasher) {
        let (h, t) = split(range)
        forEachHeadStretch(h) { source, r in source.hash(r, into: &hasher) }
        if !t.isEmpty { tail.hash(t, into: &hasher) }
    }

    /// Appends the scalars at `range` to `out`.
    func append(_ range: Range<Int>, to out: inout [Unicode.Scalar]) {
        let (h, t) = split(range)
        forEachHeadStretch(h) { source, r in source.append(r, to: &out) }
        if !t.isEmpty { tail.append(t, to: &out) }
    }

    /// Appends the UTF-8 of the scalars at `range` to `out` (`ScalarStore.appendUTF8`).
    func appendUTF8(_ range: Range<Int>, to out: inout [UInt8]) {
        let (h, t) = split(range)
        forEachHeadStretch(h) { source, r in source.appendUTF8(r, to: &out) }
        if !t.isEmpty { tail.appendUTF8(t, to: &out) }
    }

    /// Whether the scalars at `range` are those `other` holds from `otherStart` on: one memory
    /// comparison when each stretch lies in one part.
    func sameScalars(_ range: Range<Int>, as other: LogTextView, from otherStart: Int) -> Bool {
        let n = range.count
        guard n > 0 else { return true }
        let inParts = withPart(holding: range) { a, aStart in
            other.withPart(holding: otherStart ..< otherStart + n) { b, bStart in a.sameScalars(aStart ..< aStart + n, as: b, from: bStart) }
        }
        if let same = inParts ?? nil { return same }
        return zip(self[range], other[otherStart ..< otherStart + n]).allSatisfy { $0 == $1 }
    }

    /// `body(store, start)` with the store holding all of `range` and where `range` starts in it,
    /// lent rather than copied (`part(holding:)`); nil when `range` runs across pieces.
    private func withPart<R>(holding range: Range<Int>, _ body: (borrowing ScalarStore, Int) -> R) -> R? {
        if range.lowerBound >= headCount { return body(tail, range.lowerBound - headCount) }
        guard range.upperBound <= headCount else { return nil }
        return head?.withStretch(range) { store, r in body(store, r.lowerBound) } ?? nil
    }
}
