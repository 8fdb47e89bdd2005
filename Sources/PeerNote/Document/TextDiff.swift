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

    /// A diff of `x` and `y` past their common prefix and suffix: `byLines` and large, by
    /// lines first (`lineDiff`); otherwise minimal when that takes at most `maxDifferences`
    /// differences and `workLimit` work; otherwise the differing middle replaced wholesale.
    static func diff(_ x: ArraySlice<Unicode.Scalar>, _ y: ArraySlice<Unicode.Scalar>, byLines: Bool) -> [Segment] {
        var prefix = 0
        while prefix < x.count && prefix < y.count && x[x.startIndex + prefix] == y[y.startIndex + prefix] { prefix += 1 }
        var suffix = 0
        while suffix < x.count - prefix && suffix < y.count - prefix && x[x.endIndex - 1 - suffix] == y[y.endIndex - 1 - suffix] { suffix += 1 }
        let mx = Array(x[x.startIndex + prefix ..< x.endIndex - suffix]), my = Array(y[y.startIndex + prefix ..< y.endIndex - suffix])
        var out: [Segment] = []
        if prefix > 0 { out.append(Segment(kind: .equal, text: Array(x.prefix(prefix)))) }
        if mx.isEmpty || my.isEmpty {
            if !mx.isEmpty { out.append(Segment(kind: .delete, text: mx)) }
            if !my.isEmpty { out.append(Segment(kind: .insert, text: my)) }
        } else if byLines && mx.count + my.count > lineModeThreshold, let lines = lineDiff(mx, my) {
            out += lines
        } else {
            var script = Script(mx, my)
            script.workLimit = workLimit
            if script.run(budget: maxDifferences) {
                out += segments(of: script.steps, mx, my)
            } else {
                out += [Segment(kind: .delete, text: mx), Segment(kind: .insert, text: my)]
            }
        }
        if suffix > 0 { out.append(Segment(kind: .equal, text: Array(x.suffix(suffix)))) }
        return out
    }

    /// A diff of `x` and `y` by lines (each with its line break): equal lines are kept, and
    /// each stretch of lines deleted and inserted between two equal ones is compared by
    /// characters: line by line when as many lines went as came and the stretch is large,
    /// else as a whole. Nil when the lines differ in more than `maxDifferences`.
    private static func lineDiff(_ x: [Unicode.Scalar], _ y: [Unicode.Scalar]) -> [Segment]? {
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
        var script = Script(xi, yi)
        script.workLimit = workLimit
        guard script.run(budget: maxDifferences) else { return nil }
        var out: [Segment] = []
        func keep(_ lines: ArraySlice<ArraySlice<Unicode.Scalar>>) {
            if !lines.isEmpty { out.append(Segment(kind: .equal, text: Array(lines.joined()))) }
        }
        let steps = script.steps
        var old = 0, new = 0, i = 0
        while i < steps.count {
            keep(xl[old ..< steps[i].old])
            (old, new) = (steps[i].old, steps[i].new)
            var delEnd = old, insEnd = new
            while i < steps.count && steps[i].old == delEnd && steps[i].new == insEnd {
                delEnd += steps[i].deleted
                insEnd += steps[i].inserted
                i += 1
            }
            let gone = xl[old ..< delEnd], came = yl[new ..< insEnd]
            let goneText = Array(gone.joined()), cameText = Array(came.joined())
            if gone.count == came.count && goneText.count + cameText.count > lineModeThreshold {
                for (g, c) in zip(gone, came) { out += diff(g, c, byLines: false) }
            } else {
                out += diff(goneText[...], cameText[...], byLines: false)
            }
            (old, new) = (delEnd, insEnd)
        }
        keep(xl[old...])
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
    /// minimal diff; here it becomes one replacement of the word. After an equal segment goes,
    /// the scan resumes after the equal segment before it, whose changes have just grown.
    static func cleanupSemantic(_ segments: inout [Segment]) {
        normalize(&segments)
        var equalities: [Int] = []       // indices of the equal segments met, still in play
        var lastEqualLength: Int?         // the length of the last of them, while it may go
        var before = (deleted: 0, inserted: 0), after = (deleted: 0, inserted: 0)
        var changed = false
        var i = 0
        while i < segments.count {
            let s = segments[i]
            if s.kind == .equal {
                equalities.append(i)
                before = after
                after = (0, 0)
                lastEqualLength = s.text.count
            } else {
                if s.kind == .delete { after.deleted += s.text.count } else { after.inserted += s.text.count }
                if let n = lastEqualLength, let e = equalities.last,
                   n <= max(before.deleted, before.inserted) && n <= max(after.deleted, after.inserted) {
                    let text = segments[e].text
                    segments[e] = Segment(kind: .insert, text: text)
                    segments.insert(Segment(kind: .delete, text: text), at: e)
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
        if changed { normalize(&segments) }
    }

    /// Slides each lone insert or delete between two equal segments to where its ends fall on
    /// the best boundaries (a line break, a space, punctuation; not inside a word): typing
    /// "cat " before "came" may diff as "c" + "at c" + "ame"; it becomes "" + "cat " + "came".
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
            var start = left.count
            while start > 0 && at(start - 1) == at(start + n - 1) { start -= 1 }
            var best = start, bestScore = -1
            while true {
                let score = boundaryScore(at, count, start) + boundaryScore(at, count, start + n)
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
