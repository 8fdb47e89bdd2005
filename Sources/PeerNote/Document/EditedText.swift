/// One body's text around its edits, in body order, to find text one side added at the edge of
/// text only the other side deleted, where it belongs with that text: "See: "
/// typed before a paragraph the other side deleted, " Added!" typed after a deleted sentence.
/// Text typed next to a deletion is not always part of it: a word typed at the start of the
/// paragraph after a deleted one, or at the end of the line before a deleted line, reads as
/// meant. Which side text belongs with is read from the characters it joins:
/// - an insert joins the neighbour it runs into, in this copy's text: a letter or digit more
///   than punctuation, punctuation more than a space; a line break, the start or end of the
///   body, or an insert's own line break at that end joins nothing. Equal neighbours (inside a
///   word) both hold it. It is reported when a neighbour it joins was deleted by the other side
///   only (or both its neighbours were).
/// - a deletion may be recorded at any of the placements that take out the same text ("Para two
///   is here.\n\n" before "Para three." is also "wo is here.\n\nPara t"), and text typed a few
///   characters away merges the same as text typed at its edge. So the deletion is read where
///   `TextDiff.cleanupLossless` would put it (its ends on the best boundaries, the later one on
///   a tie) among the placements that give the merged text, before the neighbours are looked
///   at. It is slid only across text neither side touched, and not at all when other edits
///   adjoin it.
///
/// Only the ends of runs are read, so a long run keeps only its ends: untouched text `context`
/// elements at each end, with a barrier between that no deletion slides across; an edited run
/// (which a slide or a score reaches at most one untouched run's length into) a little more,
/// with nothing between.
struct EditedText {
    /// Whether to look at mine's inserts (theirs deleted text) and at theirs' (mine did).
    let mine: Bool, theirs: Bool
    /// Untouched text kept on each side of an edit: a longer stretch keeps this much at each end
    /// with a barrier between (a deletion does not slide across it).
    let context: Int
    /// A mask for the barrier element.
    static let barrier: UInt8 = 16

    /// The elements: untouched visible text, and text either side inserted or deleted (not text
    /// deleted before the merge, nor text one side inserted and deleted itself, which neither
    /// side's text holds now).
    private(set) var scalars: [Unicode.Scalar] = []
    /// Each element's lists as an `EditSegments` mask (1 mine inserted, 2 theirs inserted, 4 mine
    /// deleted, 8 theirs deleted), or `barrier`.
    private(set) var masks: [UInt8] = []
    /// Where each place (in `NoteEdits.overlaps`) with elements here starts: its first element
    /// and its number, in order.
    private var placeStarts: [(element: Int, place: Int)] = []
    /// Where each run of elements with one mask starts, in order.
    private(set) var runStarts: [Int] = []
    /// Where the untouched stretch at the end starts.
    private var stretchStart = 0

    init(mine: Bool = true, theirs: Bool = true, context: Int = 1_000) {
        precondition(context > 0)
        (self.mine, self.theirs, self.context) = (mine, theirs, context)
    }

    /// Appends the body's next elements: `mask` as in `EditSegments` (one membership throughout),
    /// `deleted` whether the merged body has them deleted, `place` the place they are in.
    mutating func append(_ content: ScalarRun, mask: UInt8, deleted: Bool, place: Int) {
        guard !content.isEmpty else { return }
        if mask == 0 {
            if !deleted { appendUntouched(content) }
            return
        }
        if mask & 5 == 5 || mask & 10 == 10 { return }
        if placeStarts.last?.place != place { placeStarts.append((scalars.count, place)) }
        // A side's inserts that are not looked at are only text the other side does not hold:
        // one element stands for a run of them.
        if (mask == 1 && !mine) || (mask == 2 && !theirs) {
            if masks.last != mask { add(content.prefix(1), mask: mask) }
        } else {
            // An untouched run holds at most 3 * context elements, and a slide or a score reads
            // at most that far, plus two, into an edited run from either end (`touchesDeletion`).
            let start = masks.last == mask ? runStarts[runStarts.count - 1] : scalars.count
            appendCapped(content, mask: mask, from: start, keeping: 3 * context + 3, barrier: false)
        }
        stretchStart = scalars.count
    }

    /// The place of the edited element at `k` (-1 for untouched text).
    func place(of k: Int) -> Int {
        guard masks[k] != 0 && masks[k] != Self.barrier else { return -1 }
        var lo = 0, hi = placeStarts.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if placeStarts[mid].element <= k { lo = mid + 1 } else { hi = mid }
        }
        return placeStarts[lo - 1].place
    }

    private mutating func add(_ content: some Collection<Unicode.Scalar>, mask: UInt8) {
        if masks.last != mask && !content.isEmpty { runStarts.append(scalars.count) }
        scalars.append(contentsOf: content)
        masks.append(contentsOf: repeatElement(mask, count: content.count))
    }

    /// Appends untouched text. A stretch longer than three times `context` keeps its first and
    /// last `context` elements, with a barrier between.
    private mutating func appendUntouched(_ content: ScalarRun) {
        appendCapped(content, mask: 0, from: stretchStart, keeping: context, barrier: true)
    }

    /// Appends `content` with `mask` to the stretch of elements with that mask that starts at
    /// `start`: a stretch longer than three times `keep` keeps its first and last `keep`
    /// elements, with a barrier between if `barrier`.
    private mutating func appendCapped(_ content: ScalarRun, mask: UInt8, from start: Int, keeping keep: Int, barrier: Bool) {
        let head = min(content.count, max(0, keep - (scalars.count - start)))
        add(content.prefix(head), mask: mask)
        let rest = content.dropFirst(head)
        guard scalars.count - start + rest.count > 3 * keep else {
            add(rest, mask: mask)
            return
        }
        let tailStart = start + keep
        var tail: [Unicode.Scalar] = []
        if rest.count < keep {
            let kept = zip(scalars[tailStart...], masks[tailStart...]).filter { $0.1 == mask }.map(\.0)
            tail = Array(kept.suffix(keep - rest.count))
        }
        tail += rest.suffix(keep)
        scalars.removeSubrange(tailStart...)
        masks.removeSubrange(tailStart...)
        while let last = runStarts.last, last >= tailStart { runStarts.removeLast() }
        if barrier { add(CollectionOfOne(" "), mask: Self.barrier) }
        add(tail, mask: mask)
    }

    /// A stretch of a body, as `append` takes it.
    struct Piece {
        var content: ScalarRun
        var mask: UInt8
        var deleted: Bool
        var place: Int
    }

    /// `insertsAtDeletedEdges()` of an `EditedText` given all of `pieces` in order, computed on
    /// fewer of them: only around the inserts it looks at. Untouched text long enough to get a
    /// barrier (more than three times `context` elements between two edited pieces) cuts the
    /// body into clusters that cannot see each other: no walk, slide or score crosses a barrier,
    /// and what is read past one (up to two elements, by `baseElements`) lies in that same
    /// untouched stretch. So each run of clusters holding such an insert is appended on its own,
    /// with the whole untouched stretch before and after it, and the rest is never copied (a long
    /// history edited all over, merged with a few edits elsewhere, had the whole body copied).
    static func insertsAtDeletedEdges(of pieces: [Piece], mine: Bool, theirs: Bool, context: Int = 1_000) -> [Int] {
        guard mine || theirs else { return [] }
        // The long untouched stretches, as piece ranges (pieces `append` passes over included).
        var stretches: [Range<Int>] = []
        // Whether each cluster (the pieces between two long stretches) holds an insert looked at.
        var relevant: [Bool] = [false]
        var stretchStart = 0, untouched = 0
        for (k, p) in pieces.enumerated() where !p.content.isEmpty {
            if p.mask == 0 {
                if !p.deleted { untouched += p.content.count }
                continue
            }
            if p.mask & 5 == 5 || p.mask & 10 == 10 { continue }
            if untouched > 3 * context {
                stretches.append(stretchStart ..< k)
                relevant.append(false)
            }
            stretchStart = k + 1
            untouched = 0
            if (p.mask == 1 && mine) || (p.mask == 2 && theirs) { relevant[relevant.count - 1] = true }
        }
        if untouched > 3 * context { stretches.append(stretchStart ..< pieces.count) }
        var out: [Int] = []
        var c = 0
        while c < relevant.count {
            guard relevant[c] else { c += 1; continue }
            var last = c
            while last + 1 < relevant.count && relevant[last + 1] { last += 1 }
            // Clusters c ... last, with the stretch before c and the one after last.
            let from = c == 0 ? 0 : stretches[c - 1].lowerBound
            let to = last < stretches.count ? stretches[last].upperBound : pieces.count
            var text = EditedText(mine: mine, theirs: theirs, context: context)
            for p in pieces[from ..< to] { text.append(p.content, mask: p.mask, deleted: p.deleted, place: p.place) }
            out += text.insertsAtDeletedEdges()
            c = last + 1
        }
        return out
    }

    /// One side's bits.
    private struct Side {
        var inserted: UInt8, deleted: UInt8, otherInserted: UInt8, otherDeleted: UInt8
    }

    /// The places holding text one side added that belongs with text only the other side
    /// deleted (see the type), in no particular order.
    func insertsAtDeletedEdges() -> [Int] {
        var out: [Int] = []
        let n = masks.count
        let sides = [Side(inserted: 1, deleted: 4, otherInserted: 2, otherDeleted: 8),
                     Side(inserted: 2, deleted: 8, otherInserted: 1, otherDeleted: 4)]
        // Each side's inserts in one pass over the runs: the last element of the last insert
        // looked at, per side.
        var done = [mine ? -1 : n, theirs ? -1 : n]
        for run in runStarts.indices {
            let i = runStarts[run], mask = masks[i]
            guard mask == 1 || mask == 2, i > done[Int(mask) - 1] else { continue }
            let side = sides[Int(mask) - 1]
            // Elements this side's text does not hold (the other side's inserts, its own deletions).
            let unseen = side.otherInserted | side.deleted
            // The insert, as this side reads it, from i to last; its neighbours there are l and r.
            var last = i, r = i, cleanRight = true
            for next in run ..< runStarts.count {
                r = runStarts[next]
                if masks[r] == side.inserted {
                    cleanRight = true
                } else if masks[r] & unseen != 0 {
                    cleanRight = false
                } else {
                    break
                }
                r = next + 1 < runStarts.count ? runStarts[next + 1] : n
                if masks[r - 1] == side.inserted { last = r - 1 }
            }
            done[Int(mask) - 1] = last
            var l = i - 1, cleanLeft = true
            while l >= 0 && masks[l] & unseen != 0 {
                l = edge(of: l, -1)
                cleanLeft = false
            }
            let left = touchesDeletion(l, -1, clean: cleanLeft, side)
            let right = touchesDeletion(r, 1, clean: cleanRight, side)
            if left || right {
                let joinsLeft = join(l, scalars[i]), joinsRight = join(r, scalars[last])
                if (left && right) || (left && joinsLeft > 0 && joinsLeft >= joinsRight)
                    || (right && joinsRight > 0 && joinsRight >= joinsLeft) {
                    out.append(place(of: i))
                }
            }
        }
        return out
    }

    /// The first element past the run holding element `k`, going in `direction` (-1 or 1):
    /// -1 or `masks.count` past the ends.
    private func edge(of k: Int, _ direction: Int) -> Int {
        var lo = 0, hi = runStarts.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if runStarts[mid] <= k { lo = mid + 1 } else { hi = mid }
        }
        // runStarts[lo - 1] starts the run holding k.
        return direction < 0 ? runStarts[lo - 1] - 1 : lo < runStarts.count ? runStarts[lo] : masks.count
    }

    /// Up to two elements of the body's text (its inserts left out) from `k` on in `direction`,
    /// nearest first; a barrier reads as a letter.
    private func baseElements(from k: Int, _ direction: Int) -> (first: Unicode.Scalar, second: Unicode.Scalar, count: Int) {
        var found: (first: Unicode.Scalar, second: Unicode.Scalar, count: Int) = (" ", " ", 0)
        var j = k
        while j >= 0 && j < masks.count && found.count < 2 {
            if masks[j] & 3 == 0 {
                let c: Unicode.Scalar = masks[j] == Self.barrier ? "a" : scalars[j]
                if found.count == 0 { found.first = c } else { found.second = c }
                found.count += 1
            }
            j += direction
        }
        return found
    }

    /// How strongly an insert whose end element is `end` runs into the element at `k` (its
    /// neighbour in its side's text): 0 for none (a line break either side, or no element),
    /// 1 a space, 2 punctuation, 3 a letter or digit.
    private func join(_ k: Int, _ end: Unicode.Scalar) -> Int {
        guard k >= 0 && k < masks.count, !Self.isBreak(end) else { return 0 }
        if masks[k] == Self.barrier { return 3 }
        let c = scalars[k]
        if Self.isBreak(c) { return 0 }
        if c.properties.isWhitespace { return 1 }
        return Self.isWordy(c) ? 3 : 2
    }

    static func isBreak(_ c: Unicode.Scalar) -> Bool { c == "\n" || c == "\r" }
    static func isWordy(_ c: Unicode.Scalar) -> Bool {
        c.properties.isAlphabetic || c.properties.numericType != nil
            || [.nonspacingMark, .spacingMark, .enclosingMark].contains(c.properties.generalCategory)
    }

    /// Whether the insert whose neighbour (in its side's text) on the `direction` side (-1 left,
    /// 1 right) is `k` lies against text only the other side deleted, the deletion read where
    /// `TextDiff` would put it among the placements that give the merged text (see the type).
    /// `clean`: nothing lies between the insert and `k` (else the deletion is not slid).
    private func touchesDeletion(_ k: Int, _ direction: Int, clean: Bool, _ side: Side) -> Bool {
        let n = masks.count
        func within(_ j: Int) -> Bool { j >= 0 && j < n }
        guard within(k) else { return false }
        // The deletion runs from t (its end nearest the insert) to u (just past its far end),
        // d untouched elements away.
        var t = k
        if masks[k] != side.otherDeleted {
            guard clean && masks[k] == 0 else { return false }
            t = edge(of: k, direction)
            guard within(t) && masks[t] == side.otherDeleted else { return false }
        }
        let u = edge(of: t, direction)
        let d = abs(t - k)
        // It slides only between untouched text (or the body's ends).
        guard clean && (!within(u) || masks[u] == 0) else { return d == 0 }
        // Toward the insert, d elements: each element it takes must equal the one it gives up.
        for m in stride(from: 1, through: d, by: 1) where scalars[t - m * direction] != scalars[u - m * direction] {
            return false
        }
        // Away from it, as far as it goes.
        var away = 0
        while within(u + away * direction) && masks[u + away * direction] == 0
            && scalars[t + away * direction] == scalars[u + away * direction] {
            away += 1
        }
        if away == 0 && d == 0 { return true }
        // The text the placements span (the deletion and untouched text, elements low ..< high),
        // with up to two elements of the body's text (its inserts left out) either side, read
        // in place, to score where each placement begins and ends.
        let low = direction > 0 ? k : u + 1 - away, high = direction > 0 ? u + away : k + 1
        let before = baseElements(from: low - 1, -1), after = baseElements(from: high, 1)
        let span = high - low, count = before.count + span + after.count
        func at(_ p: Int) -> Unicode.Scalar {
            p < before.count ? (p == before.count - 1 ? before.first : before.second)
                : p < before.count + span ? scalars[low + p - before.count]
                : (p == before.count + span ? after.first : after.second)
        }
        let offset = before.count - low
        // Each placement from left to right, as a shift s (toward the insert is negative): its
        // ends are the gaps before elements t + s and u + s going right, u + 1 - s and t + 1 - s
        // going left. The last best is taken, as `cleanupLossless` does.
        var best = 0, bestScore = -1
        for step in 0 ... d + away {
            let s = direction > 0 ? step - d : away - step
            let (start, end) = direction > 0 ? (t + s, u + s) : (u + 1 - s, t + 1 - s)
            let score = TextDiff.boundaryScore(at, count, start + offset) + TextDiff.boundaryScore(at, count, end + offset)
            if score >= bestScore { (best, bestScore) = (s, score) }
        }
        return best == -d
    }
}
