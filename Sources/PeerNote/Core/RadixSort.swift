/// A stable sort of 32-bit keys by their digits (least significant first, 11 bits a pass, as
/// many passes as the largest key needs): linear in the number of keys, where a comparison sort
/// of the same keys took most of the work of the places that use it (building a list's id index
/// and reading a list's structure, which sort tens of thousands of keys each).
enum RadixSort {
    /// The indices `0 ..< keys.count` in the order of their keys, equal keys in index order.
    /// When the keys are in order already, that order at once.
    static func order(of keys: [UInt32]) -> [Int] {
        let count = keys.count
        var order = [Int](repeating: 0, count: count)
        var sorted = true, largest: UInt32 = 0
        keys.withUnsafeBufferPointer { keys in
            order.withUnsafeMutableBufferPointer { order in
                var previous: UInt32 = 0
                for i in 0 ..< count {
                    let key = keys[i]
                    order[i] = i
                    largest = max(largest, key)
                    if key < previous { sorted = false }
                    previous = key
                }
            }
        }
        guard !sorted else { return order }
        let bits: UInt32 = 11, mask = UInt32(1 << bits - 1)
        var keys = keys
        var otherKeys = keys, otherOrder = order
        var start = [Int](repeating: 0, count: Int(mask) + 2)
        var shift: UInt32 = 0
        repeat {
            start.withUnsafeMutableBufferPointer { start in
                keys.withUnsafeBufferPointer { keys in
                    order.withUnsafeBufferPointer { order in
                        otherKeys.withUnsafeMutableBufferPointer { otherKeys in
                            otherOrder.withUnsafeMutableBufferPointer { otherOrder in
                                start.update(repeating: 0)
                                // start[d + 1] counts the keys of digit d, then start[d] becomes
                                // where the keys of digit d go.
                                for key in keys { start[Int((key >> shift) & mask) + 1] += 1 }
                                for d in 1 ..< start.count { start[d] += start[d - 1] }
                                for i in 0 ..< count {
                                    let key = keys[i]
                                    let d = Int((key >> shift) & mask)
                                    let at = start[d]
                                    start[d] = at + 1
                                    otherKeys[at] = key
                                    otherOrder[at] = order[i]
                                }
                            }
                        }
                    }
                }
            }
            swap(&keys, &otherKeys)
            swap(&order, &otherOrder)
            shift += bits
        } while shift < 32 && largest >> shift != 0
        return order
    }
}
