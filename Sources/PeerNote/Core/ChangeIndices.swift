/// A sequence of change indices (an order of a log's changes, or a change → row map) that
/// takes no memory while it is a plain range, as it is for a loaded file, a log with one
/// replica, and every compact save of those: a table of 260,000 indices is 2 MB.
///
/// When it is not a range it is a table of 32-bit indices (half the room of `[Int]`; a log
/// holds far fewer than 2³² changes). Invariant: `table`, when present, holds exactly `count`
/// indices. Positions are `0 ..< count`.
struct ChangeIndices: RandomAccessCollection, Sendable {
    private var range: Range<Int>
    private var table: [UInt32]?

    /// The indices `range`, in order.
    init(_ range: Range<Int>) {
        self.range = range
        self.table = nil
    }

    /// These indices, in this order.
    init(_ table: [UInt32]) {
        self.range = 0 ..< table.count
        self.table = table
    }

    /// These indices, in this order.
    init(_ table: [Int]) {
        self.init(table.map { UInt32($0) })
    }

    /// `0 ..< count` sorted by `less` (a strict total order); a range when already sorted.
    ///
    /// `sortedEnd(i)` (> i) says how far from `i` the indices are known to be in order already
    /// (a log's run of changes by one replica, each on the previous, is), so only the stretches'
    /// ends are compared. The ascending parts found that way are then merged pairwise, galloping
    /// past long stretches of one side: a log that is a few ordered parts (a merged log: the
    /// file's changes, then the ones merged in) sorts with about as many comparisons as the
    /// parts interleave, not `n log n`.
    static func sorted(count: Int, sortedEnd: (Int) -> Int = { $0 + 1 }, by less: (Int, Int) -> Bool) -> ChangeIndices {
        var parts: [ChangeIndices] = []
        var start = 0, i = 0
        while i < count {
            if i > start && !less(i - 1, i) {
                parts.append(ChangeIndices(start ..< i))
                start = i
            }
            i = Swift.max(Swift.min(sortedEnd(i), count), i + 1)
        }
        if parts.isEmpty { return ChangeIndices(0 ..< count) }
        parts.append(ChangeIndices(start ..< count))
        while parts.count > 1 {
            var next: [ChangeIndices] = []
            next.reserveCapacity((parts.count + 1) / 2)
            var k = 0
            while k + 1 < parts.count {
                next.append(merge(parts[k], parts[k + 1], by: less))
                k += 2
            }
            if k < parts.count { next.append(parts[k]) }
            parts = next
        }
        return parts[0]
    }

    /// Two ascending sequences merged into one (`a`'s element first on a tie).
    private static func merge(_ a: ChangeIndices, _ b: ChangeIndices, by less: (Int, Int) -> Bool) -> ChangeIndices {
        // Written through a pointer into uninitialized room for all of it: a range's indices by
        // a counting loop (appending a lazily mapped range costs about 30 instructions an index,
        // and zeros appended first to be overwritten about 6), a table's by a copy.
        let out = [UInt32](unsafeUninitializedCapacity: a.count + b.count) { buffer, initialized in
            var n = 0
            func take(_ s: ChangeIndices, _ from: Int, _ to: Int) {
                guard to > from else { return }
                if let table = s.table {
                    table.withUnsafeBufferPointer { t in
                        if let target = buffer.baseAddress, let source = t.baseAddress {
                            (target + n).initialize(from: source + from, count: to - from)
                        }
                    }
                } else {
                    let first = s.range.lowerBound + from
                    for k in 0 ..< to - from { buffer.initializeElement(at: n + k, to: UInt32(truncatingIfNeeded: first + k)) }
                }
                n += to - from
            }
            var i = 0, j = 0
            while i < a.count && j < b.count {
                if less(b[j], a[i]) {
                    let bound = a[i]
                    let end = gallop(b, from: j) { less($0, bound) }
                    take(b, j, end)
                    j = end
                } else {
                    let bound = b[j]
                    let end = gallop(a, from: i) { !less(bound, $0) }
                    take(a, i, end)
                    i = end
                }
            }
            take(a, i, a.count)
            take(b, j, b.count)
            initialized = n
        }
        return ChangeIndices(out)
    }

    /// The first position at or after `from` where `holds` is false (`holds` is true at `from`
    /// and stays true then false along `s`): exponential steps, then a binary search.
    private static func gallop(_ s: ChangeIndices, from: Int, while holds: (Int) -> Bool) -> Int {
        var low = from + 1, step = 1
        var high = from + 1
        while high < s.count && holds(s[high]) {
            low = high + 1
            step *= 2
            high = from + step
        }
        high = Swift.min(high, s.count)
        while low < high {
            let mid = (low + high) / 2
            if holds(s[mid]) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    var startIndex: Int { 0 }
    var endIndex: Int { range.count }

    @inline(__always)
    subscript(position: Int) -> Int {
        if let table { return Int(table[position]) }
        return range.lowerBound + position
    }

    /// The first position `j` after `i` (at most `count`) where the indices stop counting up by
    /// one from `self[i]`, or reach `limit`: `self[i + 1 ..< j]` continue `self[i]` below `limit`.
    func consecutiveEnd(after i: Int, below limit: Int) -> Int {
        guard let table else { return Swift.min(count, i + Swift.max(1, limit - self[i])) }
        return table.withUnsafeBufferPointer { p in
            // Counting up by one from `p[i]`, the indices stay below `limit` up to `stop`.
            let stop = Swift.min(p.count, i + Swift.max(1, limit - Int(p[i])))
            var j = i + 1
            var expected = p[i] &+ 1
            while j < stop && p[j] == expected {
                j += 1
                expected &+= 1
            }
            return j
        }
    }

    /// Whether the indices are a plain range (nothing stored).
    var isRange: Bool { table == nil }

    /// The indices at `positions`, in order; a range stays a range.
    func at(_ positions: Range<Int>) -> ChangeIndices {
        guard let table else { return ChangeIndices(range.lowerBound + positions.lowerBound ..< range.lowerBound + positions.upperBound) }
        return ChangeIndices(Array(table[positions]))
    }

    /// The indices followed by `more`; stays a range when both continue each other.
    func appending(_ more: Range<Int>) -> ChangeIndices {
        if table == nil && range.upperBound == more.lowerBound { return ChangeIndices(range.lowerBound ..< more.upperBound) }
        return ChangeIndices((table ?? map { UInt32($0) }) + more.map { UInt32($0) })
    }

    /// The inverse map (the position of each index) of a permutation of `0 ..< count`; the
    /// range `0 ..< count` is its own inverse.
    func inverse() -> ChangeIndices {
        guard let table else { return self }
        var out = [UInt32](repeating: 0, count: table.count)
        let complete: Bool = out.withUnsafeMutableBufferPointer { o in
            table.withUnsafeBufferPointer { t in
                for i in t.indices {
                    let v = Int(t[i])
                    guard v < o.count else { return false }
                    o[v] = UInt32(truncatingIfNeeded: i)
                }
                return true
            }
        }
        precondition(complete, "inverse() of indices that are not a permutation")
        return ChangeIndices(out)
    }
}
