import Testing
@testable import PeerNote

@Suite("RadixSort: a stable order of 32-bit keys")
struct RadixSortTests {
    /// The order a stable comparison sort gives.
    static func expected(_ keys: [UInt32]) -> [Int] {
        keys.indices.sorted { keys[$0] < keys[$1] || (keys[$0] == keys[$1] && $0 < $1) }
    }

    @Test("Random keys of every width, with repeats, sort as a stable comparison sort sorts them", arguments: [1, 2, 3])
    func randomKeys(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        // Widths needing one, two and three passes of 11 bits, and keys repeated often.
        for bound: UInt32 in [2, 1 << 11, 1 << 12, 1 << 22, 1 << 23, .max] {
            for count in [0, 1, 2, 17, 1_000, 5_000] {
                let keys = (0 ..< count).map { _ in UInt32.random(in: 0 ... bound, using: &rng) }
                let same = RadixSort.order(of: keys) == Self.expected(keys)
                #expect(same, "bound \(bound), \(count) keys")
            }
        }
    }

    @Test("Keys in order, or all equal, keep their order; reversed ones are reversed")
    func orderedKeys() {
        let up = (1 ... 3_000).map { UInt32($0 * 7) }
        let inOrder = RadixSort.order(of: up) == Array(up.indices)
        #expect(inOrder)
        #expect(RadixSort.order(of: [UInt32](repeating: 9, count: 100)) == Array(0 ..< 100))
        let down = Array(up.reversed()) + [UInt32.max, 0]
        let reversed = RadixSort.order(of: down) == [down.count - 1] + Array((0 ..< up.count).reversed()) + [down.count - 2]
        #expect(reversed)
    }
}
