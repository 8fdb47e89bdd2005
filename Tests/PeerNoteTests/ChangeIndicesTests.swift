import Testing
@testable import PeerNote

/// `ChangeIndices`: a change order or change → row map that stores nothing while it is a range.
@Suite("Change indices")
struct ChangeIndicesTests {
    @Test("A range reads as its indices, stays a range when a following range is appended, and is its own inverse")
    func ranges() {
        let r = ChangeIndices(0 ..< 5)
        #expect(Array(r) == [0, 1, 2, 3, 4])
        #expect(r.isRange)
        let longer = r.appending(5 ..< 8)
        #expect(longer.isRange && Array(longer) == Array(0 ..< 8))
        #expect(Array(r.inverse()) == Array(r))
        let gap = r.appending(6 ..< 8)
        #expect(!gap.isRange && Array(gap) == [0, 1, 2, 3, 4, 6, 7])
        #expect(Array(ChangeIndices(3 ..< 6)) == [3, 4, 5])
    }

    @Test("A table's inverse gives each index's position, and appending keeps its entries")
    func tables() {
        let order = ChangeIndices([2, 0, 3, 1])
        #expect(!order.isRange)
        #expect(Array(order.inverse()) == [1, 3, 0, 2])
        #expect(Array(order.appending(4 ..< 6)) == [2, 0, 3, 1, 4, 5])
    }
}
