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
        /// Diagonals visited and elements compared so far, and how many `run` may spend in all
        /// (repetitive texts make long snakes on many diagonals: a bound on differences alone
        /// let 800 similar lines, all changed, take seconds).
        private(set) var work = 0
        var workLimit = Int.max

        init(_ a: [Element], _ b: [Element]) { self.a = a; self.b = b }

        /// Builds the script; false (and no script) when it needs more than about `budget`
        /// differences or more than `workLimit` work.
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
        /// that takes more than `budget` steps each way, or the work passes `workLimit`.
        private mutating func middle(_ aLo: Int, _ aHi: Int, _ bLo: Int, _ bHi: Int, budget: Int) -> (Int, Int)? {
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
            // The paths meet by step maxD (a script of D differences meets at forward step
            // ceil(D / 2) ≤ maxD); stopping one short made all-different inputs split off one
            // element per search, each as long as the whole.
            for d in 0 ... min(maxD, budget) {
                if work > workLimit { return nil }
                for k in stride(from: -d + fStart, through: d - fEnd, by: 2) {
                    var x = k == -d || (k != d && forward[offset + k - 1] < forward[offset + k + 1]) ? forward[offset + k + 1] : forward[offset + k - 1] + 1
                    var y = x - k
                    let x0 = x
                    while x < n && y < m && a[aLo + x] == b[bLo + y] { x += 1; y += 1 }
                    work += 1 + x - x0
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
                    let x0 = x
                    while x < n && y < m && a[aHi - 1 - x] == b[bHi - 1 - y] { x += 1; y += 1 }
                    work += 1 + x - x0
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

// MARK: Bodies

extension TextDiff {
    /// A piece of a diff: text both bodies share, or text the old one loses or the new one gains.
    struct Segment: Equatable {
        enum Kind: Equatable { case equal, delete, insert }
        var kind: Kind
        var text: [Unicode.Scalar]
    }

    /// The edits that record a new body: a diff made for people and for merging rather than
    /// the shortest one. A minimal script replaces "bread" by "cheese" keeping the "e", so an
    /// insert made meanwhile on another copy next to that word lands inside the new one; here
    /// such short shared pieces between larger changes become part of the change, and each
    /// change is slid to a word or line boundary where it can be (as diff-match-patch's
    /// semantic cleanup does). Texts too different for a character diff within
    /// `maxDifferences` are compared line by line first, so a large edit still keeps the lines
    /// it did not touch (and what other copies did to them) in place.
    static func bodyEdits(from a: [Unicode.Scalar], to b: [Unicode.Scalar]) -> [Edit<Unicode.Scalar>] {
        var segments = diff(a[...], b[...], byLines: true)
        cleanupSemantic(&segments)
        cleanupLossless(&segments)
        return edits(of: segments)
    }

    /// The edits a list of segments makes to the old text, grouped as `edits(from:to:)` groups them.
    static func edits(of segments: [Segment]) -> [Edit<Unicode.Scalar>] {
        var out: [Edit<Unicode.Scalar>] = []
        var offset = 0
        for s in segments {
            switch s.kind {
            case .equal:
                offset += s.text.count
            case .delete, .insert:
                let deleted = s.kind == .delete ? s.text.count : 0
                let inserted = s.kind == .insert ? s.text : []
                if var last = out.last, last.offset + last.deleteCount == offset {
                    last.deleteCount += deleted
                    last.insert += inserted
                    out[out.count - 1] = last
                } else {
                    out.append(Edit(offset: offset, deleteCount: deleted, insert: inserted))
                }
                offset += deleted
            }
        }
        return out
    }

    /// Differing middles (both texts' together, in scalars) past which a body is compared
    /// line by line first.
    static let lineModeThreshold = 2_000
    /// Diagonals and comparisons a character diff may spend before it gives up (tens of
    /// milliseconds).
    static let workLimit = 20_000_000
    /// Diagonals and comparisons one body's diff may spend in all, its line scripts and the
    /// character diffs of its lines together (a few tenths of a second). Past it, lines still
    /// to compare are each replaced as a whole.
    static let totalWorkLimit = 2 * workLimit
    /// How deep the search for lines that occur once (`alignLines`) may go into the stretches
    /// between those it found.
    static let maxAnchorDepth = 8

    /// A diff of `x` and `y` past their common prefix and suffix: `byLines` and large, by
    /// lines (`lineDiff`, past the whole lines they begin and end with); otherwise minimal when that takes at most `maxDifferences`
    /// differences and `workLimit` work; otherwise the differing middle replaced wholesale.
    static func diff(_ x: ArraySlice<Unicode.Scalar>, _ y: ArraySlice<Unicode.Scalar>, byLines: Bool) -> [Segment] {
        var work = 0
        return diff(x, y, byLines: byLines, work: &work)
    }

    /// `diff(_:_:byLines:)`, adding the work it spends to `work` and spending no more once
    /// that passes `totalWorkLimit`.
    private static func diff(_ x: ArraySlice<Unicode.Scalar>, _ y: ArraySlice<Unicode.Scalar>, byLines: Bool, work: inout Int) -> [Segment] {
        var prefix = 0
        while prefix < x.count && prefix < y.count && x[x.startIndex + prefix] == y[y.startIndex + prefix] { prefix += 1 }
        var suffix = 0
        while suffix < x.count - prefix && suffix < y.count - prefix && x[x.endIndex - 1 - suffix] == y[y.endIndex - 1 - suffix] { suffix += 1 }
        let byLines = byLines && x.count + y.count - 2 * (prefix + suffix) > lineModeThreshold
            && x.count > prefix + suffix && y.count > prefix + suffix
        if byLines {
            // Whole lines: lines deleted at the end ("x\ny\nz\n" to "x\n") lose their own
            // breaks, not the break of the line before them.
            while prefix > 0 && x[x.startIndex + prefix - 1] != "\n" { prefix -= 1 }
            while suffix > 0 && (x[x.endIndex - 1 - suffix] != "\n" || y[y.endIndex - 1 - suffix] != "\n") { suffix -= 1 }
        }
        let mx = Array(x[x.startIndex + prefix ..< x.endIndex - suffix]), my = Array(y[y.startIndex + prefix ..< y.endIndex - suffix])
        var out: [Segment] = []
        if prefix > 0 { out.append(Segment(kind: .equal, text: Array(x.prefix(prefix)))) }
        if mx.isEmpty || my.isEmpty {
            if !mx.isEmpty { out.append(Segment(kind: .delete, text: mx)) }
            if !my.isEmpty { out.append(Segment(kind: .insert, text: my)) }
        } else if byLines {
            out += lineDiff(mx, my, work: &work)
        } else {
            out += characterDiff(mx, my, work: &work) ?? [Segment(kind: .delete, text: mx), Segment(kind: .insert, text: my)]
        }
        if suffix > 0 { out.append(Segment(kind: .equal, text: Array(x.suffix(suffix)))) }
        return out
    }

    /// A minimal diff of `x` and `y`, or nil when it takes more than `maxDifferences`
    /// differences or more work than `workLimit` and what is left of `totalWorkLimit`.
    private static func characterDiff(_ x: [Unicode.Scalar], _ y: [Unicode.Scalar], work: inout Int) -> [Segment]? {
        var script = Script(x, y)
        script.workLimit = min(workLimit, totalWorkLimit - work)
        let found = script.run(budget: maxDifferences)
        work += script.work
        return found ? segments(of: script.steps, x, y) : nil
    }

    /// A stretch of lines that differ: old lines `old` gave way to new lines `new`, the lines
    /// between two hunks being equal. `unaligned` when no line script was found for it.
    private struct Hunk { var old: Range<Int>, new: Range<Int>, unaligned: Bool }

    /// A diff of `x` and `y` by lines (each with its line break). Equal lines are kept: those
    /// of a minimal line script when one is found within `maxDifferences`; else those of a
    /// patience diff (`alignLines`). Each stretch of lines deleted and inserted between two
    /// equal ones is compared by characters (`changedLines`). The work is bounded by
    /// `totalWorkLimit` plus time linear in the texts (times `maxAnchorDepth`), so a body of
    /// any number of lines keeps its untouched lines in place; only a single line too
    /// different for a character diff is replaced as a whole.
    private static func lineDiff(_ x: [Unicode.Scalar], _ y: [Unicode.Scalar], work: inout Int) -> [Segment] {
        var numbers: [ArraySlice<Unicode.Scalar>: Int] = [:]
        func lines(_ t: [Unicode.Scalar]) -> (lines: [ArraySlice<Unicode.Scalar>], ids: [Int]) {
            var out: [ArraySlice<Unicode.Scalar>] = [], ids: [Int] = []
            var start = 0
            for i in t.indices where t[i] == "\n" || i == t.count - 1 {
                let line = t[start ... i]
                out.append(line)
                if let id = numbers[line] { ids.append(id) } else {
                    numbers[line] = numbers.count
                    ids.append(numbers.count - 1)
                }
                start = i + 1
            }
            return (out, ids)
        }
        let (xl, xi) = lines(x), (yl, yi) = lines(y)
        var hunks: [Hunk] = []
        alignLines(xi, yi, 0 ..< xi.count, 0 ..< yi.count, depth: 0, work: &work, into: &hunks)
        var out: [Segment] = []
        var old = 0
        for h in hunks {
            if h.old.lowerBound > old { out.append(Segment(kind: .equal, text: Array(xl[old ..< h.old.lowerBound].joined()))) }
            out += changedLines(xl[h.old], yl[h.new], unaligned: h.unaligned, work: &work)
            old = h.old.upperBound
        }
        if old < xl.count { out.append(Segment(kind: .equal, text: Array(xl[old...].joined()))) }
        return out
    }

    /// Appends to `hunks`, in order, the stretches in which lines `xi[xr]` and `yi[yr]` (line
    /// numbers) differ. A minimal line script when one is found within `maxDifferences` and
    /// the work left; else a patience diff: the lines that occur exactly once in each, the
    /// longest run of them in the same order in both (O(n log n)), are kept and the
    /// stretches between them diffed the same way (`maxAnchorDepth` deep); a stretch without
    /// such lines is one unaligned hunk.
    private static func alignLines(_ xi: [Int], _ yi: [Int], _ xr: Range<Int>, _ yr: Range<Int>, depth: Int, work: inout Int, into hunks: inout [Hunk]) {
        var (xLo, xHi, yLo, yHi) = (xr.lowerBound, xr.upperBound, yr.lowerBound, yr.upperBound)
        while xLo < xHi && yLo < yHi && xi[xLo] == yi[yLo] { xLo += 1; yLo += 1 }
        while xLo < xHi && yLo < yHi && xi[xHi - 1] == yi[yHi - 1] { xHi -= 1; yHi -= 1 }
        if xLo == xHi || yLo == yHi {
            if xLo < xHi || yLo < yHi { hunks.append(Hunk(old: xLo ..< xHi, new: yLo ..< yHi, unaligned: false)) }
            return
        }
        var script = Script(Array(xi[xLo ..< xHi]), Array(yi[yLo ..< yHi]))
        script.workLimit = min(workLimit, totalWorkLimit - work)
        let found = script.run(budget: maxDifferences)
        work += script.work
        if found {
            // A delete and the inserts where it ends (or the reverse) are one hunk.
            let steps = script.steps
            var i = 0
            while i < steps.count {
                let (old, new) = (steps[i].old, steps[i].new)
                var delEnd = old, insEnd = new
                while i < steps.count && steps[i].old == delEnd && steps[i].new == insEnd {
                    delEnd += steps[i].deleted
                    insEnd += steps[i].inserted
                    i += 1
                }
                hunks.append(Hunk(old: xLo + old ..< xLo + delEnd, new: yLo + new ..< yLo + insEnd, unaligned: false))
            }
            return
        }
        let anchors = depth < maxAnchorDepth ? uniqueAnchors(xi, yi, xLo ..< xHi, yLo ..< yHi) : []
        guard !anchors.isEmpty else {
            hunks.append(Hunk(old: xLo ..< xHi, new: yLo ..< yHi, unaligned: true))
            return
        }
        var (i, j) = (xLo, yLo)
        for (a, b) in anchors {
            alignLines(xi, yi, i ..< a, j ..< b, depth: depth + 1, work: &work, into: &hunks)
            (i, j) = (a + 1, b + 1)
        }
        alignLines(xi, yi, i ..< xHi, j ..< yHi, depth: depth + 1, work: &work, into: &hunks)
    }

    /// The positions (in `xi`, in `yi`) of lines that occur exactly once in `xi[xr]` and once
    /// in `yi[yr]`: the longest run of them in the same order in both, by patience sorting.
    private static func uniqueAnchors(_ xi: [Int], _ yi: [Int], _ xr: Range<Int>, _ yr: Range<Int>) -> [(Int, Int)] {
        // Each line's position, or -1 once it repeats.
        var inX: [Int: Int] = [:], inY: [Int: Int] = [:]
        for i in xr { inX[xi[i]] = inX[xi[i]] == nil ? i : -1 }
        for j in yr { inY[yi[j]] = inY[yi[j]] == nil ? j : -1 }
        var pairs: [(Int, Int)] = []
        for i in xr where inX[xi[i]] == i {
            if let j = inY[xi[i]], j >= 0 { pairs.append((i, j)) }
        }
        // tails[k]: the pair ending the best run of length k + 1 found so far (least j).
        var tails: [Int] = [], previous = [Int](repeating: -1, count: pairs.count)
        for (k, p) in pairs.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if pairs[tails[mid]].1 < p.1 { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[k] = tails[lo - 1] }
            if lo == tails.count { tails.append(k) } else { tails[lo] = k }
        }
        var out: [(Int, Int)] = []
        var k = tails.last ?? -1
        while k >= 0 {
            out.append(pairs[k])
            k = previous[k]
        }
        return out.reversed()
    }

    /// The diff of a hunk: lines `gone` replaced by lines `came`. Small, or all on one side,
    /// it is compared by characters as a whole. Larger, its lines are paired (`pairedLines`)
    /// and each pair compared by characters: at once when as many lines went as came or the
    /// hunk is `unaligned` (too different for a script), else when the hunk as a whole is too
    /// different for a character diff.
    private static func changedLines(_ gone: ArraySlice<ArraySlice<Unicode.Scalar>>, _ came: ArraySlice<ArraySlice<Unicode.Scalar>>,
                                     unaligned: Bool, work: inout Int) -> [Segment] {
        let goneText = Array(gone.joined()), cameText = Array(came.joined())
        if goneText.count + cameText.count <= lineModeThreshold || gone.isEmpty || came.isEmpty {
            return diff(goneText[...], cameText[...], byLines: false, work: &work)
        }
        if !unaligned && gone.count != came.count, let whole = characterDiff(goneText, cameText, work: &work) {
            return whole
        }
        return pairedLines(gone, came, work: &work)
    }

    /// Lines `gone` and `came` paired in order, each pair compared by characters, the lines
    /// one side has more kept together as one block deleted or inserted whole. The block goes
    /// where the pairs are most alike (their common prefixes and suffixes longest), so lines
    /// added at the top, or anywhere, of lines that were all changed do not shift every pair.
    private static func pairedLines(_ gone: ArraySlice<ArraySlice<Unicode.Scalar>>, _ came: ArraySlice<ArraySlice<Unicode.Scalar>>, work: inout Int) -> [Segment] {
        let g = Array(gone), c = Array(came)
        let pairs = min(g.count, c.count), extra = max(g.count, c.count) - pairs
        func alike(_ a: ArraySlice<Unicode.Scalar>, _ b: ArraySlice<Unicode.Scalar>) -> Int {
            var p = 0
            while p < a.count && p < b.count && a[a.startIndex + p] == b[b.startIndex + p] { p += 1 }
            var s = 0
            while s < a.count - p && s < b.count - p && a[a.endIndex - 1 - s] == b[b.endIndex - 1 - s] { s += 1 }
            return p + s
        }
        // The block at `at`: pairs before it are (g[i], c[i]), after it (g[i], c[i + extra])
        // when lines came, (g[i + extra], c[i]) when they went. Score every place, ties to the end.
        var at = pairs
        if extra > 0 {
            let moreCame = c.count > g.count
            var after = 0
            for i in 0 ..< pairs { after += moreCame ? alike(g[i], c[i + extra]) : alike(g[i + extra], c[i]) }
            var score = after, best = after
            at = 0
            for i in 0 ..< pairs {
                score += alike(g[i], c[i]) - (moreCame ? alike(g[i], c[i + extra]) : alike(g[i + extra], c[i]))
                if score >= best { (best, at) = (score, i + 1) }
            }
        }
        var out: [Segment] = []
        for i in 0 ..< pairs {
            if i == at && extra > 0 {
                if c.count > g.count { out.append(Segment(kind: .insert, text: Array(c[at ..< at + extra].joined()))) }
                else { out.append(Segment(kind: .delete, text: Array(g[at ..< at + extra].joined()))) }
            }
            let (old, new) = i < at ? (g[i], c[i]) : c.count > g.count ? (g[i], c[i + extra]) : (g[i + extra], c[i])
            out += diff(old, new, byLines: false, work: &work)
        }
        if at == pairs && extra > 0 {
            if c.count > g.count { out.append(Segment(kind: .insert, text: Array(c[at ..< at + extra].joined()))) }
            else { out.append(Segment(kind: .delete, text: Array(g[at ..< at + extra].joined()))) }
        }
        return out
    }

    /// Segments of a script's steps through `x` and `y` (equal text between them).
    private static func segments(of steps: [Script<Unicode.Scalar>.Step], _ x: [Unicode.Scalar], _ y: [Unicode.Scalar]) -> [Segment] {
        var out: [Segment] = []
        var old = 0
        for s in steps {
            if s.old > old { out.append(Segment(kind: .equal, text: Array(x[old ..< s.old]))) }
            if s.deleted > 0 { out.append(Segment(kind: .delete, text: Array(x[s.old ..< s.old + s.deleted]))) }
            if s.inserted > 0 { out.append(Segment(kind: .insert, text: Array(y[s.new ..< s.new + s.inserted]))) }
            old = s.old + s.deleted
        }
        if old < x.count { out.append(Segment(kind: .equal, text: Array(x[old...]))) }
        return out
    }
}

// MARK: Cleanup (after diff-match-patch's semantic cleanup)

extension TextDiff {
    /// Puts the segments in normal form: no empty segment, no two equal ones in a row, and
    /// between two equal segments at most one delete followed by at most one insert, with what
    /// those two share at their ends moved into the equal text around them.
    static func normalize(_ segments: inout [Segment]) {
        var out: [Segment] = []
        var deleted: [Unicode.Scalar] = [], inserted: [Unicode.Scalar] = []
        func keep(_ text: ArraySlice<Unicode.Scalar>) {
            guard !text.isEmpty else { return }
            if let last = out.last, last.kind == .equal { out[out.count - 1].text += text } else { out.append(Segment(kind: .equal, text: Array(text))) }
        }
        func flush() {
            var prefix = 0
            while prefix < deleted.count && prefix < inserted.count && deleted[prefix] == inserted[prefix] { prefix += 1 }
            var suffix = 0
            while suffix < deleted.count - prefix && suffix < inserted.count - prefix
                    && deleted[deleted.count - 1 - suffix] == inserted[inserted.count - 1 - suffix] { suffix += 1 }
            keep(inserted[..<prefix])
            if deleted.count - suffix > prefix { out.append(Segment(kind: .delete, text: Array(deleted[prefix ..< deleted.count - suffix]))) }
            if inserted.count - suffix > prefix { out.append(Segment(kind: .insert, text: Array(inserted[prefix ..< inserted.count - suffix]))) }
            keep(inserted[(inserted.count - suffix)...])
            deleted.removeAll()
            inserted.removeAll()
        }
        for s in segments {
            switch s.kind {
            case .equal:
                flush()
                keep(s.text[...])
            case .delete: deleted += s.text
            case .insert: inserted += s.text
            }
        }
        flush()
        segments = out
    }

    /// Turns short equal pieces between larger changes into part of the change: an equal
    /// segment no longer than the larger side of the changes before it and of those after it
    /// goes (its text deleted and inserted again). "bread" to "cheese" keeps its "e" in a
    /// minimal diff; here it becomes one replacement of the word. An equal segment that holds
    /// a line break stays: lines changed one after another stay changes of their own lines
    /// (every line of a long body changed was otherwise one replacement of all of them, and an
    /// insert made meanwhile on another copy in one of those lines did not stay in it). After
    /// an equal segment goes, the scan resumes after the equal segment before it, whose
    /// changes have just grown.
    static func cleanupSemantic(_ segments: inout [Segment]) {
        normalize(&segments)
        var equalities: [Int] = []       // indices of the equal segments met, still in play
        var lastEqualLength: Int?         // the length of the last of them, while it may go
        var before = (deleted: 0, inserted: 0), after = (deleted: 0, inserted: 0)
        // Equal segments that went: deleted and inserted again. Marked rather than split in
        // place (an insert into the array per line made a long body's edit quadratic).
        var gone = [Bool](repeating: false, count: segments.count)
        var changed = false
        var i = 0
        while i < segments.count {
            let s = segments[i]
            if s.kind == .equal && !gone[i] {
                equalities.append(i)
                before = after
                after = (0, 0)
                lastEqualLength = s.text.contains("\n") ? nil : s.text.count
            } else {
                if s.kind != .insert { after.deleted += s.text.count }
                if s.kind != .delete { after.inserted += s.text.count }
                if let n = lastEqualLength, let e = equalities.last,
                   n <= max(before.deleted, before.inserted) && n <= max(after.deleted, after.inserted) {
                    gone[e] = true
                    equalities.removeLast()
                    if !equalities.isEmpty { equalities.removeLast() }
                    i = equalities.last ?? -1
                    before = (0, 0)
                    after = (0, 0)
                    lastEqualLength = nil
                    changed = true
                }
            }
            i += 1
        }
        guard changed else { return }
        var out: [Segment] = []
        out.reserveCapacity(segments.count)
        for (s, went) in zip(segments, gone) {
            if went {
                out.append(Segment(kind: .delete, text: s.text))
                out.append(Segment(kind: .insert, text: s.text))
            } else {
                out.append(s)
            }
        }
        segments = out
        normalize(&segments)
    }

    /// Slides each lone insert or delete between two equal segments to where its ends fall on
    /// the best boundaries (a line break, a space, punctuation; not inside a word): typing
    /// "cat " before "came" may diff as "c" + "at c" + "ame"; it becomes "" + "cat " + "came".
    /// It slides up to a change beyond its equal neighbours only where nothing scores better.
    /// The texts stay the same.
    static func cleanupLossless(_ segments: inout [Segment]) {
        var i = 1
        while i + 1 < segments.count {
            guard segments[i - 1].kind == .equal, segments[i + 1].kind == .equal, segments[i].kind != .equal else { i += 1; continue }
            let left = segments[i - 1].text, edit = segments[i].text, right = segments[i + 1].text
            // The three as one text (read in place); the edit is the window [start, start + n)
            // and may slide by one where the character it leaves equals the one it takes.
            let n = edit.count, count = left.count + n + right.count
            let at: (Int) -> Unicode.Scalar = { p in
                p < left.count ? left[p] : p < left.count + n ? edit[p - left.count] : right[p - left.count - n]
            }
            // The ends of the three are the text's ends only for the first and last segments;
            // elsewhere an edit slid to them joins the change beyond, which may be on another
            // line ("\n" + lines added after a changed line would join that line's change).
            let textStart = i == 1, textEnd = i + 2 == segments.count
            func score(_ p: Int) -> Int {
                (p == 0 && !textStart) || (p == count && !textEnd) ? 0 : boundaryScore(at, count, p)
            }
            var start = left.count
            while start > 0 && at(start - 1) == at(start + n - 1) { start -= 1 }
            var best = start, bestScore = -1
            while true {
                let score = score(start) + score(start + n)
                if score >= bestScore { (best, bestScore) = (start, score) }
                guard start + n < count && at(start) == at(start + n) else { break }
                start += 1
            }
            guard best != left.count else { i += 1; continue }
            let newLeft = (0 ..< best).map(at), newEdit = (best ..< best + n).map(at), newRight = (best + n ..< count).map(at)
            var replacement: [Segment] = []
            if !newLeft.isEmpty { replacement.append(Segment(kind: .equal, text: newLeft)) }
            replacement.append(Segment(kind: segments[i].kind, text: newEdit))
            if !newRight.isEmpty { replacement.append(Segment(kind: .equal, text: newRight)) }
            segments.replaceSubrange(i - 1 ... i + 1, with: replacement)
            // Go on after the edit: at the segment after it (which may now be the next edit).
            i = (newLeft.isEmpty ? i - 1 : i) + 2
        }
        normalize(&segments)
    }

    /// How good a place position `p` of a text (`count` long, read by `at`) is for a change
    /// to begin or end: 6 at either end, 5 at a blank line, 4 at a line break, 3 after the end
    /// of a sentence, 2 at a space, 1 at other punctuation, 0 inside a word.
    static func boundaryScore(_ at: (Int) -> Unicode.Scalar, _ count: Int, _ p: Int) -> Int {
        guard p > 0 && p < count else { return 6 }
        let l = at(p - 1), r = at(p)
        func isSpace(_ c: Unicode.Scalar) -> Bool { c.properties.isWhitespace }
        func isBreak(_ c: Unicode.Scalar) -> Bool { c == "\n" || c == "\r" }
        func isWordy(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c.properties.numericType != nil }
        if (l == "\n" && p >= 2 && at(p - 2) == "\n") || (r == "\n" && p + 1 < count && at(p + 1) == "\n") { return 5 }
        if isBreak(l) || isBreak(r) { return 4 }
        if !isWordy(l) && !isSpace(l) && isSpace(r) { return 3 }
        if isSpace(l) || isSpace(r) { return 2 }
        if !isWordy(l) || !isWordy(r) { return 1 }
        return 0
    }
}
