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

    @Test("consecutiveEnd stops where the indices stop counting up by one or reach the limit, for ranges and tables (random, 2,000 cases)")
    func consecutiveEnd() {
        var rng = SeededRandom(state: 2026)
        for _ in 0 ..< 2_000 {
            // A table of a few counting stretches (sometimes touching: 5 6 | 7 8 counts on).
            var values: [Int] = []
            while values.count < 40 {
                let start = Int.random(in: 0 ..< 60, using: &rng)
                values += Array(start ..< start + Int.random(in: 1 ... 12, using: &rng))
            }
            let lower = Int.random(in: 0 ..< 50, using: &rng)
            let cases = [(ChangeIndices(values), values), (ChangeIndices(lower ..< lower + values.count), Array(lower ..< lower + values.count))]
            for (indices, plain) in cases {
                let i = Int.random(in: 0 ..< plain.count, using: &rng)
                let limit = Int.random(in: 0 ..< 120, using: &rng)
                var j = i + 1
                while j < plain.count && plain[j] == plain[j - 1] + 1 && plain[j] < limit { j += 1 }
                #expect(indices.consecutiveEnd(after: i, below: limit) == j, "\(plain) after \(i) below \(limit)")
            }
        }
    }

    @Test("A table's inverse gives each index's position, and appending keeps its entries")
    func tables() {
        let order = ChangeIndices([2, 0, 3, 1])
        #expect(!order.isRange)
        #expect(Array(order.inverse()) == [1, 3, 0, 2])
        #expect(Array(order.appending(4 ..< 6)) == [2, 0, 3, 1, 4, 5])
    }

    @Test("Sorting by a total order, told where stretches are already in order, gives the plain sort (random keys, 500 cases)")
    func sortedMatchesSort() {
        var rng = SystemRandomNumberGenerator()
        for round in 0 ..< 500 {
            let count = Int.random(in: 0 ... 300, using: &rng)
            // Distinct keys, in a few ascending parts that interleave (as a merged log's changes do).
            let partCount = Int.random(in: 1 ... 5, using: &rng)
            var keys = Array(0 ..< count).shuffled(using: &rng)
            var cuts = (0 ..< partCount - 1).map { _ in Int.random(in: 0 ... count, using: &rng) }.sorted()
            cuts = [0] + cuts + [count]
            for p in 0 ..< partCount where round % 7 != 0 { keys[cuts[p] ..< cuts[p + 1]].sort() }
            let less: (Int, Int) -> Bool = { keys[$0] < keys[$1] }
            // A truthful hint: from i, the indices stay ascending up to a random point of the ascending stretch.
            let sortedEnd: (Int) -> Int = { i in
                var e = i + 1
                while e < count && keys[e - 1] < keys[e] && (e - i) % 13 != 12 { e += 1 }
                return e
            }
            let order = ChangeIndices.sorted(count: count, sortedEnd: sortedEnd, by: less)
            let expected = Array(0 ..< count).sorted(by: less)
            #expect(Array(order) == expected, "round \(round)")
            #expect(order.isRange == (expected == Array(0 ..< count)), "round \(round)")
            #expect(Array(ChangeIndices.sorted(count: count, by: less)) == expected, "round \(round), no hint")
        }
    }
}
