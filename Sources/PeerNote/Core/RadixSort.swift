/// A stable sort of 32-bit keys by their digits (least significant first, 11 bits a pass, as
/// many passes as the largest key needs): linear in the number of keys, where a comparison sort
/// of the same keys took most of the work of the places that use it (building a list's id index
/// and reading a list's structure, which sort tens of thousands of keys each).
enum RadixSort {
    /// The indices `0 ..< keys.count` in the order of their keys, equal keys in index order.
    /// When the keys are in order already, that order at once.
    static func order(of keys: [UInt32]) -> [Int] {
        let count = keys.count
        var sorted = true, largest: UInt32 = 0
        keys.withUnsafeBufferPointer { keys in
            var previous: UInt32 = 0
            for key in keys {
                largest = max(largest, key)
                if key < previous { sorted = false }
                previous = key
            }
        }
        guard !sorted else { return Array(0 ..< count) }
        // Two pairs of buffers, each pass reading one pair and writing the other.
        let bits: UInt32 = 11, mask = UInt32(1 << bits - 1)
        let keysA = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: count)
        let keysB = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: count)
        let orderA = UnsafeMutableBufferPointer<Int>.allocate(capacity: count)
        let orderB = UnsafeMutableBufferPointer<Int>.allocate(capacity: count)
        let start = UnsafeMutableBufferPointer<Int>.allocate(capacity: Int(mask) + 2)
        defer {
            keysA.deallocate()
            keysB.deallocate()
            orderA.deallocate()
            orderB.deallocate()
            start.deallocate()
        }
        _ = keysA.initialize(from: keys)
        for i in 0 ..< count { orderA[i] = i }
        var (fromKeys, toKeys, fromOrder, toOrder) = (keysA, keysB, orderA, orderB)
        var shift: UInt32 = 0
        repeat {
            start.initialize(repeating: 0)
            // start[d + 1] counts the keys of digit d, then start[d] becomes where the keys of
            // digit d go.
            for key in fromKeys { start[Int((key >> shift) & mask) + 1] += 1 }
            for d in 1 ..< start.count { start[d] += start[d - 1] }
            for i in 0 ..< count {
                let key = fromKeys[i]
                let d = Int((key >> shift) & mask)
                let at = start[d]
                start[d] = at + 1
                toKeys[at] = key
                toOrder[at] = fromOrder[i]
            }
            swap(&fromKeys, &toKeys)
            swap(&fromOrder, &toOrder)
            shift += bits
        } while shift < 32 && largest >> shift != 0
        return Array(fromOrder)
    }
}
