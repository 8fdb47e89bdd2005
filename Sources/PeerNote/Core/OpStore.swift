/// The ops of an `OpLog`, in LV order: the ops a load adopted (`OpLog.beginAdoptingOps`), then
/// those appended since.
///
/// The adopted ops are one array that the file's verified record holds too (`VerifiedFile`): the
/// document and its record share it. Appends and changes to the last op go to an array of the
/// store's own, so that the first edit after a load does not copy the adopted ops (4.5 MB for a
/// 20,000-note notebook), which both would then hold. A change to the last op while it is
/// adopted moves it to the appended part first (typing and deleting extend the last op in
/// place); a roll-back past the appended ops takes adopted ones off the end without writing to
/// the array. Only a change to an earlier adopted op (`OpLog.setInsertOrigins`, on a load's own
/// ops) writes into the adopted array, which copies it if it is shared.
///
/// Invariants: `adoptedCount <= adopted.count`; the ops are `adopted[0 ..< adoptedCount]`, then
/// `appended`; a store without adopted ops holds no array in `adopted`.
///
/// - Complexity: reading an op is O(1) (one comparison more than an array's); appending is
///   amortized O(1) and never copies the adopted ops.
struct OpStore: RandomAccessCollection, Equatable, Sendable {
    typealias Element = Op
    typealias Index = Int
    typealias Indices = Range<Int>

    private var adopted: [Op] = []
    private var adoptedCount = 0
    private var appended: [Op] = []

    /// No ops.
    init() {}

    /// `ops`, in an array of the store's own.
    init(_ ops: [Op]) { appended = ops }

    /// `ops`, adopted: their array is shared, never appended to.
    init(adopting ops: [Op]) {
        adopted = ops
        adoptedCount = ops.count
    }

    @inline(__always) var startIndex: Int { 0 }
    @inline(__always) var endIndex: Int { adoptedCount + appended.count }
    @inline(__always) var count: Int { adoptedCount + appended.count }
    @inline(__always) var isEmpty: Bool { adoptedCount == 0 && appended.isEmpty }

    /// Op `i`. Setting the last op while it is adopted moves it to the appended part; setting an
    /// earlier adopted op writes into the adopted array (`update`).
    subscript(i: Int) -> Op {
        @inline(__always) get { i < adoptedCount ? adopted[i] : appended[i - adoptedCount] }
        set { update(i) { $0 = newValue } }
    }

    /// Calls `body` with op `i` where it lies, to change it in place: in the appended part, or,
    /// adopted, the last moved there first, an earlier one in the adopted array (copied when
    /// shared). A closure, not a `_modify` accessor: a coroutine would allocate its frame on each
    /// call, and loads extend the last op once per op.
    @inline(__always)
    mutating func update<R>(_ i: Int, _ body: (inout Op) throws -> R) rethrows -> R {
        // The buffers below are not bounds-checked: a bad index traps here instead.
        precondition(i >= 0 && i < count, "an op of the store")
        if i >= adoptedCount {
            let k = i - adoptedCount
            return try appended.withUnsafeMutableBufferPointer { try body(&$0[k]) }
        }
        if i == adoptedCount - 1 && appended.isEmpty {
            moveLastAdopted()
            return try appended.withUnsafeMutableBufferPointer { try body(&$0[0]) }
        }
        return try adopted.withUnsafeMutableBufferPointer { try body(&$0[i]) }
    }

    /// The last adopted op, moved to the appended part (which is empty), so that it can change
    /// without writing to the adopted array.
    private mutating func moveLastAdopted() {
        appended.append(adopted[adoptedCount - 1])
        dropAdopted(1)
    }

    /// Takes `k` adopted ops off the end; the array goes with the last of them.
    private mutating func dropAdopted(_ k: Int) {
        adoptedCount -= k
        if adoptedCount == 0 { adopted = [] }
    }

    mutating func append(_ op: Op) { appended.append(op) }

    /// Makes room for `capacity` ops in all (the adopted ones count; their array is not grown).
    mutating func reserveCapacity(_ capacity: Int) {
        appended.reserveCapacity(Swift.max(0, capacity - adoptedCount))
    }

    /// Removes the last `k` ops.
    mutating func removeLast(_ k: Int) {
        precondition(k >= 0 && k <= count, "removes at most every op")
        let fromAppended = Swift.min(k, appended.count)
        appended.removeLast(fromAppended)
        if k > fromAppended { dropAdopted(k - fromAppended) }
    }

    /// Removes every op (the appended part's capacity kept when `keepingCapacity`).
    mutating func removeAll(keepingCapacity: Bool = false) {
        appended.removeAll(keepingCapacity: keepingCapacity)
        dropAdopted(adoptedCount)
    }

    /// Gives the store arrays of its own (copies of those it shares), with room for one op more.
    mutating func copyStorage() {
        if adoptedCount > 0 {
            var own = [Op]()
            own.reserveCapacity(count + 1)
            own.append(contentsOf: adopted[..<adoptedCount])
            own.append(contentsOf: appended)
            self = OpStore(own)
        } else {
            appended.reserveCapacity(appended.count + 1)
        }
    }

    /// Calls `body` with the ops where they lie, in order: the adopted part, then the appended
    /// part (either may be empty). Reading in place, without copying each op out (which retains
    /// and releases what its body holds).
    func withParts<R>(_ body: (UnsafeBufferPointer<Op>, UnsafeBufferPointer<Op>) throws -> R) rethrows -> R {
        try adopted.withUnsafeBufferPointer { a in
            try appended.withUnsafeBufferPointer { b in
                try body(UnsafeBufferPointer(rebasing: a[..<adoptedCount]), b)
            }
        }
    }

    /// Calls `body` with the ops in one buffer: where they lie when they are all in one part (as
    /// after a load), else a copy.
    func withContiguousOps<R>(_ body: (UnsafeBufferPointer<Op>) throws -> R) rethrows -> R {
        if appended.isEmpty {
            return try adopted.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[..<adoptedCount])) }
        }
        if adoptedCount == 0 { return try appended.withUnsafeBufferPointer(body) }
        return try Array(self).withUnsafeBufferPointer(body)
    }

    /// The ops in one array: the appended part itself when nothing is adopted, else a copy.
    var array: [Op] { adoptedCount == 0 ? appended : Array(self) }

    static func == (a: OpStore, b: OpStore) -> Bool { a.elementsEqual(b) }
}
