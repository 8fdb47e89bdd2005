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

    /// `0 ..< count` sorted by `areInIncreasingOrder` (a strict total order); a range when already sorted.
    static func sorted(count: Int, by areInIncreasingOrder: (Int, Int) -> Bool) -> ChangeIndices {
        if !(1 ..< Swift.max(count, 1)).contains(where: { !areInIncreasingOrder($0 - 1, $0) }) { return ChangeIndices(0 ..< count) }
        var table = (0 ..< count).map { UInt32($0) }
        table.sort { areInIncreasingOrder(Int($0), Int($1)) }
        return ChangeIndices(table)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { range.count }

    @inline(__always)
    subscript(position: Int) -> Int {
        if let table { return Int(table[position]) }
        return range.lowerBound + position
    }

    /// Whether the indices are a plain range (nothing stored).
    var isRange: Bool { table == nil }

    /// The indices followed by `more`; stays a range when both continue each other.
    func appending(_ more: Range<Int>) -> ChangeIndices {
        if table == nil && range.upperBound == more.lowerBound { return ChangeIndices(range.lowerBound ..< more.upperBound) }
        return ChangeIndices(map { UInt32($0) } + more.map { UInt32($0) })
    }

    /// The inverse map (the position of each index) of a permutation of `0 ..< count`; the
    /// range `0 ..< count` is its own inverse.
    func inverse() -> ChangeIndices {
        guard let table else { return self }
        var out = [UInt32](repeating: 0, count: table.count)
        for (i, v) in table.enumerated() { out[Int(v)] = UInt32(i) }
        return ChangeIndices(out)
    }
}
