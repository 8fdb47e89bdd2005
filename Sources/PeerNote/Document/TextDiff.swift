/// A minimal edit script between two sequences (Myers' O(ND) algorithm),
/// used to record a new body as character inserts and deletes.
enum TextDiff {
    /// One edit at `offset` of the *old* sequence: delete `deleteCount` elements, then insert `insert`.
    /// Edits are sorted by offset and do not overlap.
    struct Edit<Element: Equatable>: Equatable {
        var offset: Int
        var deleteCount: Int
        var insert: [Element]
    }

    /// Past this many differences, the differing middle is replaced wholesale
    /// (bounds time and memory on unrelated texts).
    static let maxDifferences = 4_000

    static func edits<Element: Equatable>(from a: [Element], to b: [Element]) -> [Edit<Element>] {
        var prefix = 0
        while prefix < a.count && prefix < b.count && a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix && suffix < b.count - prefix && a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        let x = Array(a[prefix ..< a.count - suffix])
        let y = Array(b[prefix ..< b.count - suffix])
        if x.isEmpty && y.isEmpty { return [] }
        if x.isEmpty || y.isEmpty {
            return [Edit(offset: prefix, deleteCount: x.count, insert: y)]
        }
        guard let script = myers(x, y) else {
            return [Edit(offset: prefix, deleteCount: x.count, insert: y)]
        }
        // Turn the (deleteOld, insertNew) index script into grouped edits.
        var out: [Edit<Element>] = []
        for (i, del, ins) in script {
            let e = Edit(offset: prefix + i, deleteCount: del, insert: ins.map { y[$0] })
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

    /// Myers' greedy shortest edit script. Returns runs of (old index, deleted count, inserted new indices),
    /// or nil when more than `maxDifferences` edits are needed.
    private static func myers<Element: Equatable>(_ a: [Element], _ b: [Element]) -> [(Int, Int, [Int])]? {
        let n = a.count, m = b.count
        let maxD = min(n + m, maxDifferences)
        let offset = maxD + 1
        var v = [Int](repeating: 0, count: 2 * maxD + 3)
        var trace: [[Int]] = []
        var found = false
        outer: for d in 0 ... maxD {
            trace.append(v)
            for k in stride(from: -d, through: d, by: 2) {
                var x: Int
                if k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) {
                    x = v[offset + k + 1]
                } else {
                    x = v[offset + k - 1] + 1
                }
                var y = x - k
                while x < n && y < m && a[x] == b[y] { x += 1; y += 1 }
                v[offset + k] = x
                if x >= n && y >= m { found = true; break outer }
            }
        }
        guard found else { return nil }
        // Backtrack: each step moves one along x (delete a[x]) or y (insert b[y] at old position x).
        var x = n, y = m
        var steps: [(isDelete: Bool, old: Int, new: Int)] = []
        for d in stride(from: trace.count - 1, through: 1, by: -1) {
            let vd = trace[d]
            let k = x - y
            let prevK = (k == -d || (k != d && vd[offset + k - 1] < vd[offset + k + 1])) ? k + 1 : k - 1
            let prevX = vd[offset + prevK]
            let prevY = prevX - prevK
            while x > prevX && y > prevY { x -= 1; y -= 1 }
            steps.append((x != prevX, prevX, prevY))
            x = prevX
            y = prevY
        }
        var runs: [(Int, Int, [Int])] = []
        for step in steps.reversed() {
            if let last = runs.last, last.0 + last.1 == step.old {
                if step.isDelete { runs[runs.count - 1].1 += 1 } else { runs[runs.count - 1].2.append(step.new) }
            } else {
                runs.append(step.isDelete ? (step.old, 1, []) : (step.old, 0, [step.new]))
            }
        }
        return runs
    }
}
