/// A minimal edit script between two sequences (Myers' O(ND) algorithm, in linear space),
/// used to record a new body as character inserts and deletes.
enum TextDiff {
    /// One edit at `offset` of the *old* sequence: delete `deleteCount` elements, then insert `insert`.
    /// Edits are sorted by offset and do not overlap.
    struct Edit<Element: Equatable>: Equatable {
        var offset: Int
        var deleteCount: Int
        var insert: [Element]
    }

    /// Past about this many differences, the differing middle is replaced wholesale
    /// (bounds the time on unrelated texts).
    static let maxDifferences = 4_000

    static func edits<Element: Equatable>(from a: [Element], to b: [Element]) -> [Edit<Element>] {
        var prefix = 0
        while prefix < a.count && prefix < b.count && a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix && suffix < b.count - prefix && a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        let x = Array(a[prefix ..< a.count - suffix])
        let y = Array(b[prefix ..< b.count - suffix])
        if x.isEmpty && y.isEmpty { return [] }
        let wholesale = [Edit(offset: prefix, deleteCount: x.count, insert: y)]
        if x.isEmpty || y.isEmpty { return wholesale }
        var script = Script(x, y)
        guard script.run(budget: maxDifferences) else { return wholesale }
        // Turn the script into grouped edits: a delete and the inserts where it ends are one edit.
        var out: [Edit<Element>] = []
        for step in script.steps {
            let e = Edit(offset: prefix + step.old, deleteCount: step.deleted, insert: Array(y[step.new ..< step.new + step.inserted]))
            if var last = out.last, last.offset + last.deleteCount == e.offset {
                last.deleteCount += e.deleteCount
                last.insert += e.insert
                out[out.count - 1] = last
            } else {
                out.append(e)
            }
        }
        return out
    }

    /// Myers' linear-space refinement: the middle snake of an optimal path splits the problem
    /// in two, and each half is solved the same way. Memory is O(N + M) (the greedy version
    /// kept one array of 2·D entries per step: 256 MB for 4,000 differences); time is
    /// O((N + M) · D), about twice the greedy version's.
    private struct Script<Element: Equatable> {
        /// Delete `deleted` elements of the old sequence at `old`, or insert `inserted` elements
        /// of the new one (from `new`) before old position `old`. In order of both sequences.
        struct Step { var old: Int, deleted: Int, new: Int, inserted: Int }
        let a: [Element], b: [Element]
        private(set) var steps: [Step] = []

        init(_ a: [Element], _ b: [Element]) { self.a = a; self.b = b }

        /// Builds the script; false (and no script) when it needs more than about `budget`
        /// differences.
        mutating func run(budget: Int) -> Bool {
            // Halves still to solve, the leftmost on top (so steps come out in order).
            var pending = [(aLo: 0, aHi: a.count, bLo: 0, bHi: b.count)]
            var first = true
            while let (aLo0, aHi0, bLo0, bHi0) = pending.popLast() {
                var (aLo, aHi, bLo, bHi) = (aLo0, aHi0, bLo0, bHi0)
                while aLo < aHi && bLo < bHi && a[aLo] == b[bLo] { aLo += 1; bLo += 1 }
                while aLo < aHi && bLo < bHi && a[aHi - 1] == b[bHi - 1] { aHi -= 1; bHi -= 1 }
                if aLo == aHi || bLo == bHi {
                    if aLo < aHi { steps.append(Step(old: aLo, deleted: aHi - aLo, new: bLo, inserted: 0)) }
                    if bLo < bHi { steps.append(Step(old: aLo, deleted: 0, new: bLo, inserted: bHi - bLo)) }
                    continue
                }
                // Only the whole problem is bounded: its halves' differences add up to its own.
                guard let (x, y) = middle(aLo, aHi, bLo, bHi, budget: first ? budget / 2 + 1 : .max) else {
                    steps = []
                    return false
                }
                first = false
                pending.append((x, aHi, y, bHi))
                pending.append((aLo, x, bLo, y))
            }
            return true
        }

        /// A point (x, y) on an optimal path through `a[aLo ..< aHi]` and `b[bLo ..< bHi]`
        /// (both non-empty, differing at both ends) that splits it in two smaller problems:
        /// where the furthest-reaching forward and backward paths first overlap. Nil when
        /// that takes more than `budget` steps each way.
        private func middle(_ aLo: Int, _ aHi: Int, _ bLo: Int, _ bHi: Int, budget: Int) -> (Int, Int)? {
            let n = aHi - aLo, m = bHi - bLo
            let maxD = (n + m + 1) / 2
            let offset = maxD + 1
            // Furthest x reached on each diagonal k = x - y (forward) and, counted from the
            // ends, on each diagonal of the reversed problem (backward); -1 where not reached.
            var forward = [Int](repeating: -1, count: 2 * maxD + 3)
            var backward = forward
            forward[offset + 1] = 0
            backward[offset + 1] = 0
            let delta = n - m
            // With an odd delta the paths meet while going forward, else while going back.
            let meetForward = delta & 1 != 0
            // Diagonals that ran off the grid are skipped from then on.
            var fStart = 0, fEnd = 0, bStart = 0, bEnd = 0
            for d in 0 ..< min(maxD, budget) {
                for k in stride(from: -d + fStart, through: d - fEnd, by: 2) {
                    var x = k == -d || (k != d && forward[offset + k - 1] < forward[offset + k + 1]) ? forward[offset + k + 1] : forward[offset + k - 1] + 1
                    var y = x - k
                    while x < n && y < m && a[aLo + x] == b[bLo + y] { x += 1; y += 1 }
                    forward[offset + k] = x
                    if x > n { fEnd += 2 } else if y > m { fStart += 2 } else if meetForward {
                        let kb = offset + delta - k
                        if kb >= 0 && kb < backward.count && backward[kb] != -1 && x >= n - backward[kb] {
                            return (aLo + x, bLo + y)
                        }
                    }
                }
                for k in stride(from: -d + bStart, through: d - bEnd, by: 2) {
                    var x = k == -d || (k != d && backward[offset + k - 1] < backward[offset + k + 1]) ? backward[offset + k + 1] : backward[offset + k - 1] + 1
                    var y = x - k
                    while x < n && y < m && a[aHi - 1 - x] == b[bHi - 1 - y] { x += 1; y += 1 }
                    backward[offset + k] = x
                    if x > n { bEnd += 2 } else if y > m { bStart += 2 } else if !meetForward {
                        let kf = offset + delta - k
                        if kf >= 0 && kf < forward.count && forward[kf] != -1 {
                            let fx = forward[kf], fy = fx - (kf - offset)
                            if fx >= n - x { return (aLo + fx, bLo + fy) }
                        }
                    }
                }
            }
            guard budget >= maxD else { return nil }
            // Not reached for non-empty problems (the paths meet by step maxD); splitting at a
            // corner still makes progress.
            return (aLo + 1, bLo)
        }
    }
}
