/// A block's changes, run-length encoded: 8 bytes a change instead of a 48-byte `WireChange`.
///
/// A run is a change and the changes after it that each continue the one before: the same
/// replica, the next seq, one dependency that is the row before and comes next in `depRows`,
/// the same time, author and message, and no extra fields. A run stores its first change; a
/// later one is derived from it (seq advances, the dependency is the next `depRows` entry,
/// extra fields start where the first's end). Lengths are stored per change.
///
/// Invariant: `runOf[i]` is the run holding change `i`; runs hold consecutive changes in order;
/// `firsts[r]` is run `r`'s first change and `templates[r]` that change (its `length` unused).
/// Which changes share a run is a matter of storage only: two lists with equal elements are
/// equal however they are cut into runs.
struct WireChanges: RandomAccessCollection, Sendable, Equatable {
    private var templates: [WireChange] = []
    private var firsts: [Int] = []
    private var runOf: [UInt32] = []
    private var lengths: [UInt32] = []

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { lengths.count }
    /// How many runs the changes form (for tests).
    var runCount: Int { templates.count }

    mutating func reserveCapacity(_ n: Int) {
        runOf.reserveCapacity(n)
        lengths.reserveCapacity(n)
    }

    subscript(i: Int) -> WireChange {
        @inline(__always) get {
            let r = Int(runOf[i])
            var c = templates[r]
            let k = i - firsts[r]
            if k > 0 { Self.advance(&c, by: k) }
            c.length = Int(lengths[i])
            return c
        }
        set {
            // Rare (tests and fixtures edit a change by hand): change `i` becomes a run of its
            // own, and the change after it starts another, so nothing else is derived from it.
            isolate(i + 1)
            isolate(i)
            templates[Int(runOf[i])] = newValue
            lengths[i] = UInt32(newValue.length)
        }
    }

    /// Change `i`'s length (without making the whole record).
    @inline(__always) func length(_ i: Int) -> Int { Int(lengths[i]) }
    /// The lengths of changes `range`.
    @inline(__always) func lengths(_ range: Range<Int>) -> ArraySlice<UInt32> { lengths[range] }

    /// Calls `body(i, length, continues)` for each change `i` in order, read straight from the
    /// table's storage (`continues`: `continuesPrevious(i)`); stops, returning false, when `body` does.
    @inline(__always) func forEachLength(_ body: (Int, Int, Bool) -> Bool) -> Bool {
        runOf.withUnsafeBufferPointer { run in
            lengths.withUnsafeBufferPointer { len in
                for i in 0 ..< len.count where !body(i, Int(len[i]), i > 0 && run[i] == run[i - 1]) { return false }
                return true
            }
        }
    }

    /// Every change's length, in order (the table's own storage, not a copy).
    var lengthColumn: [UInt32] { lengths }

    /// Run `r`: its changes, and the record of its first change (with that change's length).
    /// Runs are in order and cover the changes; a later change of a run continues the one
    /// before it (`continuesPrevious`).
    @inline(__always) func run(_ r: Int) -> (changes: Range<Int>, first: WireChange) {
        let start = firsts[r]
        var c = templates[r]
        c.length = Int(lengths[start])
        return (start ..< (r + 1 < firsts.count ? firsts[r + 1] : lengths.count), c)
    }

    /// Whether change `i` (> 0) is stored as continuing change `i - 1` (see the type's rule).
    @inline(__always) func continuesPrevious(_ i: Int) -> Bool { runOf[i] == runOf[i - 1] }

    /// The changes from `i` on that are stored as continuing the one before (`continuesPrevious`),
    /// as many as have lengths adding up to at most `room`: where they end, and their units.
    /// `(i, 0)` when change `i` does not continue change `i - 1`.
    func continuingStretch(from i: Int, room: Int) -> (end: Int, units: Int) {
        guard i > 0, i < count, continuesPrevious(i) else { return (i, 0) }
        let r = Int(runOf[i])
        let runEnd = r + 1 < firsts.count ? firsts[r + 1] : count
        return lengths.withUnsafeBufferPointer { p in
            var j = i, units = 0
            while j < runEnd && units + Int(p[j]) <= room {
                units += Int(p[j])
                j += 1
            }
            return (j, units)
        }
    }

    /// Change `first` of a run advanced to the run's `k`-th later change.
    @inline(__always) private static func advance(_ c: inout WireChange, by k: Int) {
        c.seq = c.seq &+ UInt32(truncatingIfNeeded: k)
        c.depStart = c.depStart + c.depCount + (k - 1)
        c.depCount = 1
        c.extraStart = c.extraStart + c.extraCount
        c.extraCount = 0
    }

    /// Whether `c` is what the run rule derives from `p`, the change before it (its one
    /// dependency's row is the caller's to check: `depRows` is the block's).
    static func derivable(_ c: WireChange, after p: WireChange) -> Bool {
        c.replica == p.replica && Int(c.seq) == Int(p.seq) + 1 && c.depCount == 1 && c.depStart == p.depStart + p.depCount
            && c.time == p.time && c.author == p.author && c.message == p.message
            && c.extraCount == 0 && c.extraStart == p.extraStart + p.extraCount
    }

    /// Appends `c`; it joins the last run when `continuesPrevious` (the caller has checked that
    /// its one dependency is the previous row) and `derivable(c, after: last)`.
    mutating func append(_ c: WireChange, continuesPrevious: Bool) {
        if continuesPrevious, let p = last, Self.derivable(c, after: p) {
            runOf.append(runOf[runOf.count - 1])
        } else {
            runOf.append(UInt32(templates.count))
            templates.append(c)
            firsts.append(lengths.count)
        }
        lengths.append(UInt32(c.length))
    }

    /// Makes change `i` (when there is one) the first of a run.
    private mutating func isolate(_ i: Int) {
        guard i < count, i > 0, runOf[i] == runOf[i - 1] else { return }
        let c = self[i]
        let r = Int(runOf[i]) + 1
        templates.insert(c, at: r)
        firsts.insert(i, at: r)
        var j = i
        while j < count && Int(runOf[j]) == r - 1 { runOf[j] = UInt32(r); j += 1 }
        while j < count { runOf[j] += 1; j += 1 }
    }

    /// Sets every change's author and message (the storage report's stripped copy).
    mutating func setAuthorsAndMessages(to value: Int) {
        for r in templates.indices { templates[r].author = value; templates[r].message = value }
    }

    static func == (a: WireChanges, b: WireChanges) -> Bool { a.elementsEqual(b) }

    // MARK: Building from columns

    /// The decoder's builder: the changes' fields arrive a column at a time. Every change starts
    /// in one run; each column splits runs where a change does not continue the one before
    /// in that field. Fields of a run's first change are set from each column; those of a new
    /// run's first change that earlier columns set are derived from the run it splits from
    /// (equal to what those columns held, since the change continued in them).
    struct Builder {
        private(set) var runFirsts: [Int] = []
        private(set) var runTemplates: [WireChange] = []
        private var lengths: [UInt32] = []
        let count: Int

        init(count n: Int) {
            count = n
            if n > 0 {
                runFirsts = [0]
                runTemplates = [WireChange(replica: 0, seq: 0, length: 0, time: 0, depStart: 0, depCount: 0, author: 0, message: 0, extraStart: 0, extraCount: 0)]
            }
        }

        /// One column pass: `breaks` are the changes (ascending, > 0) that do not continue the
        /// one before in this column; `set(&c, i)` writes change `i`'s field into `c`. Only runs'
        /// first changes are visited, so a pass costs the runs and breaks, not the changes.
        mutating func column<E: Error>(breaks: [Int], _ set: (inout WireChange, Int) throws(E) -> Void) throws(E) {
            var firsts: [Int] = [], templates: [WireChange] = []
            firsts.reserveCapacity(runFirsts.count + breaks.count)
            templates.reserveCapacity(runTemplates.count + breaks.count)
            var b = 0
            for r in runFirsts.indices {
                let first = runFirsts[r], end = r + 1 < runFirsts.count ? runFirsts[r + 1] : count
                var t = runTemplates[r]
                try set(&t, first)
                firsts.append(first)
                templates.append(t)
                while b < breaks.count && breaks[b] <= first { b += 1 }
                var open = first    // the first change of the run being extended
                while b < breaks.count && breaks[b] < end {
                    let i = breaks[b]
                    b += 1
                    var c = templates[templates.count - 1]
                    WireChanges.advance(&c, by: i - open)
                    try set(&c, i)
                    firsts.append(i)
                    templates.append(c)
                    open = i
                }
            }
            runFirsts = firsts
            runTemplates = templates
        }

        mutating func setLengths(_ l: [UInt32]) { lengths = l }

        func finish() -> WireChanges {
            var w = WireChanges()
            w.templates = runTemplates
            w.firsts = runFirsts
            w.lengths = lengths
            w.runOf.reserveCapacity(count)
            for r in runFirsts.indices {
                let end = r + 1 < runFirsts.count ? runFirsts[r + 1] : count
                w.runOf.append(contentsOf: repeatElement(UInt32(r), count: end - runFirsts[r]))
            }
            return w
        }
    }
}
