/// The reference replay of a sequential trace: plain Unicode scalars in a gap buffer (edits
/// are local, so moving the gap is cheap), independent of the CRDT. It gives the text that
/// the library must produce for any prefix of a trace.
struct ReferenceText {
    private var storage: [Unicode.Scalar]
    private var gapStart: Int
    private var gapEnd: Int
    private static let filler: Unicode.Scalar = "\u{0}"

    init(_ text: String) {
        storage = Array(text.unicodeScalars)
        gapStart = storage.count
        gapEnd = storage.count
    }

    var count: Int { storage.count - (gapEnd - gapStart) }

    var string: String {
        var s = String.UnicodeScalarView()
        s.append(contentsOf: storage[..<gapStart])
        s.append(contentsOf: storage[gapEnd...])
        return String(s)
    }

    /// Deletes `deleteCount` scalars at `position`, then inserts `text` there; false when out of range.
    mutating func apply(_ patch: TracePatch) -> Bool {
        guard patch.position + patch.deleteCount <= count else { return false }
        moveGap(to: patch.position)
        gapEnd += patch.deleteCount
        let inserted = patch.text.unicodeScalars
        let n = inserted.count
        if gapEnd - gapStart < n { grow(by: n) }
        for u in inserted {
            storage[gapStart] = u
            gapStart += 1
        }
        return true
    }

    private mutating func moveGap(to position: Int) {
        while gapStart > position {
            gapStart -= 1
            gapEnd -= 1
            storage[gapEnd] = storage[gapStart]
        }
        while gapStart < position {
            storage[gapStart] = storage[gapEnd]
            gapStart += 1
            gapEnd += 1
        }
    }

    private mutating func grow(by needed: Int) {
        let capacity = max(storage.count * 2, count + needed + 256)
        var s: [Unicode.Scalar] = []
        s.reserveCapacity(capacity)
        s.append(contentsOf: storage[..<gapStart])
        let tail = storage[gapEnd...]
        let newGapEnd = capacity - tail.count
        s.append(contentsOf: repeatElement(Self.filler, count: newGapEnd - gapStart))
        s.append(contentsOf: tail)
        storage = s
        gapEnd = newGapEnd
    }
}
