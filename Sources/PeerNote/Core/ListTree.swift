/// The storage of a `ListCRDT`: a B+ tree of runs kept in flat arrays (nodes
/// refer to each other by index, so copies are plain value copies), the
/// element arena, and an id index.
///
/// Invariant: nodes only ever split, never merge or shrink, so an element only
/// ever moves to a leaf further right. A tree of one leaf has no id index (a lookup scans the
/// leaf); from the first split on, the id index has an entry for the first id of every
/// run as inserted (and of some runs split off since), each naming the leaf that holds the
/// element with that id now: a leaf split updates the entries of the runs it moves. The ids
/// after an entry's, up to the next entry, are in that leaf or in leaves to its right (a run
/// split in two keeps its parts in id order), so a lookup walks right from the entry's leaf,
/// and records an entry for the run it found when that walk was long.
/// - Complexity: finding an id is O(log n) plus the leaves walked; a leaf split costs
///   O(runs moved × log n).
struct ListTree<Element: ListElement>: Sendable {
    static var leafCapacity: Int { 64 }
    static var fanout: Int { 32 }

    // Stored properties by size, the 8-byte ones first, so that the small ones share the
    // last words (a note's body is one of these: every note's state holds one).
    private(set) var leaves: [ListLeaf] = [ListLeaf()]
    private(set) var inners: [ListInner] = []
    /// Per agent, entries sorted by counter; empty while the tree is one leaf (`indexed` false).
    private var index: [[ListIndexEntry]] = []
    /// The run last inserted into or extended (typing continues there), or found by
    /// `editCursor`; checked before use.
    private var hint = RunPlace(leaf: 0, run: 0)
    /// Where `locate` last found an element through the index: the next element looked up is
    /// often in that run or one beside it (a run of deletes backwards, an insert's origin next
    /// to the last delete). Checked before use, as `hint` is.
    private var recent = RunPlace(leaf: 0, run: 0)
    /// Where `editCursor` last found an element (local edits mostly stay in one leaf, and
    /// typing in one run): see `Finger`.
    private var finger = Finger()
    var content = Element.Store()
    private(set) var root = NodeRef.leaf(0)
    /// How many times `locate` found the id index shared with another copy of the tree when it
    /// recorded a newer leaf, and so copied it (O(agents) each: one entry list per replica).
    /// A caller that keeps no second copy of the tree while it looks ids up leaves it at 0;
    /// tests hold integration to that (`SamePlaceTests`). 32 bits, wrapping: a count for
    /// tests, kept in every note's body.
    private(set) var sharedIndexCopies: UInt32 = 0
    /// How many leaves `locate` walked past, in all, from the leaf the id index named to the
    /// leaf holding the id looked up. Tests hold this to a few per lookup (`SamePlaceTests`).
    /// 32 bits, wrapping, as `sharedIndexCopies`.
    private(set) var indexWalkLeaves: UInt32 = 0
    /// Whether `index` is kept. A tree of one leaf (most note bodies: up to `leafCapacity` runs)
    /// finds an id by scanning that leaf, which a lookup through the index ends with anyway; the
    /// index is built at the first leaf split, from the runs then in the leaf (an entry per run
    /// meets the invariant). A note body then costs no index arrays.
    private var indexed = false
    /// Whether every run's `depth` and every node's `minDepth` are set (`buildDepths`), and so
    /// kept up to date by every change; and then, that the list is in depth-first order of the
    /// left-origin tree (each element's descendants come directly after it).
    private(set) var depthsKnown = false

    /// A leaf and how many visible elements come before it (`leaf` is -1 when unknown), and a
    /// run of that leaf and how many visible elements of the leaf come before that run (`run` is
    /// -1 when unknown). A count changing in another leaf, or a leaf splitting, forgets both;
    /// runs inserted, split or removed at or before `run` forget the run.
    struct Finger: Sendable {
        // In 32 bits each: every note's body holds a finger. Leaf indices fit (nodes and their
        // links are 32-bit already: `NodeRef`, `ListLeaf.parent`, `next`), and a run's index is
        // at most `leafCapacity` + 2.
        private var leafIndex: Int32 = -1
        private var runIndex: Int32 = -1
        var visibleBefore = 0
        var runVisibleBefore = 0

        init() {}

        init(leaf: Int, visibleBefore: Int) {
            self.leaf = leaf
            self.visibleBefore = visibleBefore
        }

        var leaf: Int {
            get { Int(leafIndex) }
            set { leafIndex = Int32(truncatingIfNeeded: newValue) }
        }

        var run: Int {
            get { Int(runIndex) }
            set { runIndex = Int32(truncatingIfNeeded: newValue) }
        }
    }

    /// A run's place, its leaf and its index in the leaf, in 8 bytes (the tree keeps two, and
    /// every note's body is a tree). Both fit, as `Finger`'s do; a place may be stale (a run
    /// moved or split since), and every use checks the run it names before trusting it.
    struct RunPlace: Sendable {
        private var leafIndex: UInt32
        private var runIndex: UInt32

        init(leaf: Int, run: Int) {
            leafIndex = UInt32(truncatingIfNeeded: leaf)
            runIndex = UInt32(truncatingIfNeeded: run)
        }

        init(_ c: ListCursor) { self.init(leaf: c.leaf, run: c.run) }

        var leaf: Int { Int(leafIndex) }
        var run: Int { Int(runIndex) }
    }

    var visibleCount: Int { root.isLeaf ? leaves[root.index].visible : inners[root.index].visible }
    var totalCount: Int { root.isLeaf ? leaves[root.index].total : inners[root.index].total }

    private func total(_ n: NodeRef) -> Int { n.isLeaf ? leaves[n.index].total : inners[n.index].total }
    private func visible(_ n: NodeRef) -> Int { n.isLeaf ? leaves[n.index].visible : inners[n.index].visible }
    private func parent(_ n: NodeRef) -> Int32 { n.isLeaf ? leaves[n.index].parent : inners[n.index].parent }
    private func minDepth(_ n: NodeRef) -> UInt32 { n.isLeaf ? leaves[n.index].minDepth : inners[n.index].minDepth }

    var firstLeaf: Int {
        var n = root
        while !n.isLeaf { n = inners[n.index].children[0] }
        return n.index
    }

    var lastLeaf: Int {
        var n = root
        while !n.isLeaf { n = inners[n.index].children[inners[n.index].children.count - 1] }
        return n.index
    }

    var startCursor: ListCursor { normalize(ListCursor(leaf: firstLeaf, run: 0, offset: 0)) }
    var endCursor: ListCursor { let l = lastLeaf; return ListCursor(leaf: l, run: leaves[l].runs.count, offset: 0) }

    func isEnd(_ c: ListCursor) -> Bool { c.run >= leaves[c.leaf].runs.count }

    /// Moves a cursor at the end of a leaf to the start of the next non-empty leaf, if any.
    func normalize(_ c: ListCursor) -> ListCursor {
        var c = c
        while c.run >= leaves[c.leaf].runs.count, leaves[c.leaf].next >= 0 {
            c = ListCursor(leaf: Int(leaves[c.leaf].next), run: 0, offset: 0)
        }
        return c
    }

    func run(at c: ListCursor) -> ListRun { leaves[c.leaf].runs[c.run] }
    func id(at c: ListCursor) -> LocalID { leaves[c.leaf].runs[c.run].id.advanced(by: c.offset) }

    func advance(_ c: ListCursor) -> ListCursor {
        if c.offset + 1 < leaves[c.leaf].runs[c.run].length { return ListCursor(leaf: c.leaf, run: c.run, offset: c.offset + 1) }
        return normalize(ListCursor(leaf: c.leaf, run: c.run + 1, offset: 0))
    }

    func nextRun(_ c: ListCursor) -> ListCursor {
        normalize(ListCursor(leaf: c.leaf, run: c.run + 1, offset: 0))
    }

    // MARK: Finding

    /// The element at visible index `v` (0 ≤ v < visibleCount).
    func cursor(visible v: Int) -> ListCursor? {
        guard v >= 0 && v < visibleCount, let (leaf, before) = leaf(visible: v) else { return nil }
        return cursor(inLeaf: leaf, visible: v - before)
    }

    /// `cursor(visible:)` for a local edit: starts from the leaf the last one found when `v`
    /// is still in it, and makes the found run the hint of the `locate` that applying the edit does.
    mutating func editCursor(visible v: Int) -> ListCursor? {
        guard v >= 0 && v < visibleCount else { return nil }
        if !(finger.leaf >= 0 && v >= finger.visibleBefore && v - finger.visibleBefore < leaves[finger.leaf].visible) {
            guard let found = self.leaf(visible: v) else { return nil }
            finger = Finger(leaf: found.leaf, visibleBefore: found.visibleBefore)
        }
        let leaf = finger.leaf
        let inLeaf = v - finger.visibleBefore
        // Scan from the run the last edit found when `v` is in it or after it.
        let fromRun = finger.run >= 0 && finger.run < leaves[leaf].runs.count && inLeaf >= finger.runVisibleBefore
        guard let c = fromRun ? cursor(inLeaf: leaf, visible: inLeaf - finger.runVisibleBefore, from: finger.run)
                              : cursor(inLeaf: leaf, visible: inLeaf) else { return nil }
        finger.run = c.run
        finger.runVisibleBefore = inLeaf - c.offset
        hint = RunPlace(c)
        return c
    }

    /// The leaf holding visible index `v` (0 ≤ v < visibleCount) and how many visible elements come before it.
    private func leaf(visible v: Int) -> (leaf: Int, visibleBefore: Int)? {
        var node = root
        var rem = v
        while !node.isLeaf {
            let n = node.index
            var found = NodeRef.none
            var k = 0
            let count = inners[n].children.count
            while k < count {
                let child = inners[n].children[k]
                let cv = visible(child)
                if rem < cv { found = child; break }
                rem -= cv
                k += 1
            }
            guard found != .none else { return nil }
            node = found
        }
        return (node.index, v - rem)
    }

    /// The element at visible index `v` of leaf `leaf`, counting that leaf's visible elements
    /// from the start of run `first` on.
    private func cursor(inLeaf leaf: Int, visible v: Int, from first: Int = 0) -> ListCursor? {
        var rem = v
        return leaves[leaf].runs.withUnsafeBufferPointer { runs in
            for i in first ..< runs.count where !runs[i].deleted {
                if rem < runs[i].length { return ListCursor(leaf: leaf, run: i, offset: rem) }
                rem -= runs[i].length
            }
            return nil
        }
    }

    /// Typing on: when the element at visible index `v - 1` ends the run `editCursor` last found
    /// (or the last insert extended), that run is visible and its ids and content end where
    /// `id` and the arena's end are, and the element after it is the run's right origin,
    /// appends `elements` (ids from `id` on) to that run and returns the right origin; nil,
    /// changing nothing, otherwise. The run and the counts before it come from the finger, so
    /// this reads no other leaf. Gives the sequence that finding the origins and integrating an
    /// insert there gives: the insert's left origin is the run's last element and nothing lies
    /// between the origins, so it goes right after the run and continues it. (Integrating would
    /// start a new run in the next leaf when this run ends its leaf; the elements are the same.)
    mutating func extendTypingRun(atVisible v: Int, id: LocalID, elements: some Collection<Element>) -> LocalID? {
        guard let next = typingRunRightOrigin(atVisible: v, id: id) else { return nil }
        let leaf = finger.leaf, i = finger.run
        let n = elements.count
        leaves[leaf].runs[i].length += n
        if n == 1, let e = elements.first { content.append(e) } else { content.append(contentsOf: elements) }
        addCounts(from: leaf, visible: n, total: n)
        return next
    }

    /// What `extendTypingRun(atVisible: v, id: id, ...)` would return, changing nothing: the
    /// right origin of an insert there that continues the run typed last, or nil.
    func typingRunRightOrigin(atVisible v: Int, id: LocalID) -> LocalID? {
        let leaf = finger.leaf, i = finger.run
        guard leaf >= 0, i >= 0, hint.leaf == leaf, hint.run == i, i < leaves[leaf].runs.count else { return nil }
        let r = leaves[leaf].runs[i]
        guard !r.deleted, finger.visibleBefore + finger.runVisibleBefore + r.length == v,
              r.id.agent == id.agent, Int(r.id.counter) + r.length == Int(id.counter),
              r.contentStart + r.length == content.count else { return nil }
        let after = nextRun(ListCursor(leaf: leaf, run: i, offset: 0))
        let next = isEnd(after) ? LocalID.none : self.id(at: after)
        return next == r.originRight ? next : nil
    }

    /// Where the element `id` is. Records a newer leaf in the index when it had to walk far.
    mutating func locate(_ id: LocalID) -> ListCursor? {
        if hint.leaf < leaves.count, hint.run < leaves[hint.leaf].runs.count, leaves[hint.leaf].runs[hint.run].contains(id) {
            return ListCursor(leaf: hint.leaf, run: hint.run, offset: Int(id.counter) - Int(leaves[hint.leaf].runs[hint.run].id.counter))
        }
        if let c = near(recent, id) {
            recent = RunPlace(c)
            return c
        }
        guard let (c, hops, _) = find(id) else { return nil }
        recent = RunPlace(c)
        indexWalkLeaves &+= UInt32(truncatingIfNeeded: hops)
        if hops > 2 {
            let storage = index.withUnsafeBufferPointer { $0.baseAddress }
            defer { if index.withUnsafeBufferPointer({ $0.baseAddress }) != storage { sharedIndexCopies &+= 1 } }
            // The id is in a part of a run split off from the part the entry names (which stays
            // in the entry's leaf): an entry for that part, so the next lookup there starts in
            // its leaf. Leaf splits keep it up to date as they keep every entry.
            insertIndex(leaves[c.leaf].runs[c.run].id, c.leaf)
        }
        return c
    }

    /// Where `id` is when it is in the run at `c` or in one of the runs beside it in the same
    /// leaf (`c` may be stale: each run is checked).
    @inline(__always)
    private func near(_ c: RunPlace, _ id: LocalID) -> ListCursor? {
        guard c.leaf < leaves.count else { return nil }
        return leaves[c.leaf].runs.withUnsafeBufferPointer { runs -> ListCursor? in
            let lo = max(c.run - 1, 0), hi = min(c.run + 2, runs.count)
            guard lo < hi else { return nil }
            for i in lo ..< hi {
                let offset = UInt32(truncatingIfNeeded: id.counter &- runs[i].id.counter)
                if runs[i].id.agent == id.agent && Int(offset) < runs[i].length {
                    return ListCursor(leaf: c.leaf, run: i, offset: Int(offset))
                }
            }
            return nil
        }
    }

    /// Where the element `id` is, how many leaves the walk from the index entry took, and that
    /// entry's position in the agent's index; the index is not touched.
    /// - Complexity: O(log n) plus the leaves walked; none when `id` is in the run that holds
    ///   the entry's id, or in a part of it split off into the same leaf.
    func find(_ id: LocalID) -> (ListCursor, Int, Int)? {
        if !indexed {
            guard let found = Self.scan(leaves[0].runs, for: id) else { return nil }
            return (ListCursor(leaf: 0, run: found.run, offset: found.offset), 0, 0)
        }
        let a = Int(id.agent)
        guard a < index.count, !index[a].isEmpty, index[a][0].counter <= id.counter else { return nil }
        // The last entry at or before `id`, through a buffer pointer (as the leaf scan below).
        let (lo, first) = index[a].withUnsafeBufferPointer { entries in
            var lo = 0, hi = entries.count - 1
            while lo < hi {
                let mid = (lo + hi + 1) / 2
                if entries[mid].counter <= id.counter { lo = mid } else { hi = mid - 1 }
            }
            return (lo, Int(entries[lo].leaf))
        }
        var leaf = first
        var hops = 0
        while leaf >= 0 {
            // Through a buffer pointer: a leaf holds up to 65 runs, and indexing the nested
            // arrays costs about four times as much per run as the comparison.
            if let found = Self.scan(leaves[leaf].runs, for: id) { return (ListCursor(leaf: leaf, run: found.run, offset: found.offset), hops, lo) }
            leaf = Int(leaves[leaf].next)
            hops += 1
        }
        return nil
    }

    /// The run of `runs` holding `id`, and `id`'s offset in it. Through a buffer pointer: a leaf
    /// holds up to 65 runs, and indexing the nested arrays costs about four times as much per
    /// run as the comparison.
    @inline(__always)
    private static func scan(_ runs: [ListRun], for id: LocalID) -> (run: Int, offset: Int)? {
        runs.withUnsafeBufferPointer { runs in
            for i in runs.indices {
                let r = runs[i]
                let offset = UInt32(truncatingIfNeeded: id.counter &- r.id.counter)
                if r.id.agent == id.agent && Int(offset) < r.length { return (i, Int(offset)) }
            }
            return nil
        }
    }

    /// Absolute position (counting tombstones) of the element at `c`.
    func position(_ c: ListCursor) -> Int {
        prefix(before: c, visibleOnly: false)
    }

    /// Visible index of the element at `c` (of the next visible one when it is deleted).
    func visiblePosition(_ c: ListCursor) -> Int {
        prefix(before: c, visibleOnly: true)
    }

    /// How many elements (all, or visible ones) come before `c`.
    private func prefix(before c: ListCursor, visibleOnly: Bool) -> Int {
        let runs = leaves[c.leaf].runs
        var pos = visibleOnly && runs[c.run].deleted ? 0 : c.offset
        for i in 0 ..< c.run where !(visibleOnly && runs[i].deleted) { pos += runs[i].length }
        var node = NodeRef.leaf(c.leaf)
        var p = leaves[c.leaf].parent
        while p >= 0 {
            for ch in inners[Int(p)].children {
                if ch == node { break }
                pos += visibleOnly ? visible(ch) : total(ch)
            }
            node = .inner(Int(p))
            p = inners[Int(p)].parent
        }
        return pos
    }

    // MARK: Depths (the sibling index of `ListCRDT.integrate`)

    /// The depth of the element at `c` (see `ListRun.depth`); depths must be known.
    func depth(at c: ListCursor) -> UInt32 { leaves[c.leaf].runs[c.run].depth &+ UInt32(truncatingIfNeeded: c.offset) }

    /// Sets every run's depth and every node's smallest depth, checking that the list is in
    /// depth-first order of its left-origin tree: every element's left origin is on the path
    /// from the root to the element before it (a stack of runs' prefixes), that is, nothing lies
    /// between an element and its left origin but that origin's descendants. Each element the
    /// list integrated as peernote(5) says keeps that order unless its right origin lies among
    /// its left origin's descendants without being its left origin's child (a crafted history;
    /// `ListCRDT` checks it). False, leaving depths unknown, when the order does not hold, a
    /// left origin is not found before its element, or a depth would not fit in 32 bits.
    /// - Complexity: O(runs).
    mutating func buildDepths() -> Bool {
        depthsKnown = false
        // The path from the root to the last element, as prefixes of runs: first id, length on
        // the path, depth of the first element.
        var path: [(id: LocalID, length: Int, depth: UInt32)] = []
        var leaf = firstLeaf
        while leaf >= 0 {
            var lowest = UInt32.max
            for i in leaves[leaf].runs.indices {
                let r = leaves[leaf].runs[i]
                var d: UInt32 = 1
                if r.originLeft.isNone {
                    path.removeAll(keepingCapacity: true)
                } else {
                    let p = r.originLeft
                    while let top = path.last {
                        let k = Int(p.counter) - Int(top.id.counter)
                        if top.id.agent == p.agent && k >= 0 && k < top.length {
                            path[path.count - 1].length = k + 1
                            d = top.depth + UInt32(k) + 1
                            break
                        }
                        path.removeLast()
                    }
                    if path.isEmpty { return false }
                }
                guard UInt64(d) + UInt64(r.length) < UInt64(UInt32.max) else { return false }
                leaves[leaf].runs[i].depth = d
                lowest = Swift.min(lowest, d)
                path.append((r.id, r.length, d))
            }
            leaves[leaf].minDepth = lowest
            leaf = Int(leaves[leaf].next)
        }
        if !root.isLeaf { _ = setMinDepths(root.index) }
        depthsKnown = true
        return true
    }

    /// Sets the smallest depth of inner node `n` and of the inner nodes under it, from their
    /// leaves' (children first: a node split later can sit at a larger index than its parent).
    private mutating func setMinDepths(_ n: Int) -> UInt32 {
        var lowest = UInt32.max
        for child in inners[n].children {
            lowest = Swift.min(lowest, child.isLeaf ? leaves[child.index].minDepth : setMinDepths(child.index))
        }
        inners[n].minDepth = lowest
        return lowest
    }

    /// Forgets the depths: later changes no longer keep them.
    mutating func forgetDepths() { depthsKnown = false }

    /// Lowers the smallest depth of `leaf` and its ancestors to `d` where it is larger.
    private mutating func lowerMinDepth(from leaf: Int, to d: UInt32) {
        guard leaves[leaf].minDepth > d else { return }
        leaves[leaf].minDepth = d
        var p = leaves[leaf].parent
        while p >= 0, inners[Int(p)].minDepth > d {
            inners[Int(p)].minDepth = d
            p = inners[Int(p)].parent
        }
    }

    /// The first element at or after `c` whose depth is at most `maxDepth`, or the end; depths
    /// must be known. In a list in depth-first order, from just after an element of depth d,
    /// `maxDepth` d finds the first element after its descendants, and d + 1 its next child.
    /// - Complexity: O(log n) nodes visited (each scanning its children or runs).
    func firstAtOrAfter(_ start: ListCursor, maxDepth: UInt32) -> ListCursor {
        let c = normalize(start)
        if isEnd(c) { return c }
        let runs = leaves[c.leaf].runs
        // Depths grow along a run: only its element at `c` can be shallow enough.
        if runs[c.run].depth &+ UInt32(truncatingIfNeeded: c.offset) <= maxDepth { return c }
        for i in (c.run + 1) ..< runs.count where runs[i].depth <= maxDepth {
            return ListCursor(leaf: c.leaf, run: i, offset: 0)
        }
        var node = NodeRef.leaf(c.leaf)
        var p = leaves[c.leaf].parent
        while p >= 0 {
            let children = inners[Int(p)].children
            var k = (children.firstIndex(of: node) ?? children.count - 1) + 1
            while k < children.count {
                if minDepth(children[k]) <= maxDepth { return firstInSubtree(children[k], maxDepth: maxDepth) }
                k += 1
            }
            node = .inner(Int(p))
            p = inners[Int(p)].parent
        }
        return endCursor
    }

    /// The first element of the subtree at `node` whose depth is at most `maxDepth` (its
    /// smallest depth is at most that).
    private func firstInSubtree(_ start: NodeRef, maxDepth: UInt32) -> ListCursor {
        var node = start
        while !node.isLeaf {
            let children = inners[node.index].children
            node = children.first { minDepth($0) <= maxDepth } ?? children[children.count - 1]
        }
        let runs = leaves[node.index].runs
        let i = runs.firstIndex { $0.depth <= maxDepth } ?? runs.count
        return normalize(ListCursor(leaf: node.index, run: i, offset: 0))
    }

    /// The last element before `c` whose depth is at most `maxDepth`, or nil; depths must be
    /// known. In a list in depth-first order, from a child of an element of depth d (or the
    /// first element after its descendants), `maxDepth` d + 1 finds the child before it, or
    /// that element when there is none.
    /// - Complexity: O(log n) nodes visited (each scanning its children or runs).
    func lastBefore(_ c: ListCursor, maxDepth: UInt32) -> ListCursor? {
        let runs = leaves[c.leaf].runs
        var j = Swift.min(c.run, runs.count)
        // Elements of run j before the cursor (all of each earlier run); depths grow along a
        // run, so the shallow enough ones are a prefix of it.
        var limit = j < runs.count ? c.offset : 0
        while j >= 0 {
            if limit > 0, runs[j].depth <= maxDepth {
                return ListCursor(leaf: c.leaf, run: j, offset: Swift.min(limit - 1, Int(maxDepth) - Int(runs[j].depth)))
            }
            j -= 1
            if j >= 0 { limit = runs[j].length }
        }
        var node = NodeRef.leaf(c.leaf)
        var p = leaves[c.leaf].parent
        while p >= 0 {
            let children = inners[Int(p)].children
            var k = (children.firstIndex(of: node) ?? 0) - 1
            while k >= 0 {
                if minDepth(children[k]) <= maxDepth, let found = lastInSubtree(children[k], maxDepth: maxDepth) { return found }
                k -= 1
            }
            node = .inner(Int(p))
            p = inners[Int(p)].parent
        }
        return nil
    }

    /// The last element of the subtree at `node` whose depth is at most `maxDepth`.
    private func lastInSubtree(_ start: NodeRef, maxDepth: UInt32) -> ListCursor? {
        var node = start
        while !node.isLeaf {
            let children = inners[node.index].children
            guard let next = children.last(where: { minDepth($0) <= maxDepth }) else { return nil }
            node = next
        }
        let runs = leaves[node.index].runs
        guard let j = runs.lastIndex(where: { $0.depth <= maxDepth }) else { return nil }
        return ListCursor(leaf: node.index, run: j, offset: Swift.min(runs[j].length - 1, Int(maxDepth) - Int(runs[j].depth)))
    }

    // MARK: Index

    /// Records that `id` is (now) in `leaf`, keeping entries sorted.
    private mutating func insertIndex(_ id: LocalID, _ leaf: Int) {
        guard indexed else { return }
        let a = Int(id.agent)
        while index.count <= a { index.append([]) }
        if let last = index[a].last, last.counter < id.counter {
            index[a].append(ListIndexEntry(counter: id.counter, leaf: Int32(leaf)))
            return
        }
        var lo = 0, hi = index[a].count
        while lo < hi {
            let mid = (lo + hi) / 2
            if index[a][mid].counter < id.counter { lo = mid + 1 } else { hi = mid }
        }
        if lo < index[a].count && index[a][lo].counter == id.counter {
            index[a][lo].leaf = Int32(leaf)
        } else {
            index[a].insert(ListIndexEntry(counter: id.counter, leaf: Int32(leaf)), at: lo)
        }
    }

    // MARK: Changing

    private mutating func addCounts(from leaf: Int, visible dv: Int, total dt: Int) {
        if leaf != finger.leaf { finger = Finger() }
        leaves[leaf].visible += dv
        leaves[leaf].total += dt
        var p = leaves[leaf].parent
        while p >= 0 {
            inners[Int(p)].visible += dv
            inners[Int(p)].total += dt
            p = inners[Int(p)].parent
        }
    }

    /// Inserts `run` before the element at `c` (or at the end).
    mutating func insert(_ run: ListRun, before c: ListCursor) {
        let leaf = c.leaf
        // Runs change from `c.run` on (from `c.run + 1` when it splits there).
        if leaf == finger.leaf && (c.offset > 0 ? c.run < finger.run : c.run <= finger.run) { finger.run = -1 }
        var i = c.run
        if c.offset > 0 {
            let right = leaves[leaf].runs[i].split(at: c.offset)
            leaves[leaf].runs.insert(right, at: i + 1)
            i += 1
        }
        let atListEnd = i == leaves[leaf].runs.count && leaves[leaf].next < 0
        if i > 0 && leaves[leaf].runs[i - 1].canAppend(run) {
            leaves[leaf].runs[i - 1].length += run.length
            hint = RunPlace(leaf: leaf, run: i - 1)
        } else {
            // At a leaf's end (every run a load appends): `append`, not the general insert.
            if i == leaves[leaf].runs.count { leaves[leaf].runs.append(run) } else { leaves[leaf].runs.insert(run, at: i) }
            insertIndex(run.id, leaf)
            hint = RunPlace(leaf: leaf, run: i)
            if depthsKnown { lowerMinDepth(from: leaf, to: run.depth) }
        }
        addCounts(from: leaf, visible: run.deleted ? 0 : run.length, total: run.length)
        if leaves[leaf].runs.count > Self.leafCapacity { splitLeaf(leaf, appendedAtEnd: atListEnd) }
    }

    /// Marks up to `length` elements from `c` deleted, within one run; returns how many it
    /// covered and how many were newly deleted.
    mutating func markDeleted(at c: ListCursor, length: Int) -> (covered: Int, newly: Int) {
        let leaf = c.leaf
        // Runs change from `c.run` on (from `c.run + 1` when it splits there; a run that joins
        // the one before it keeps that one's start).
        if leaf == finger.leaf && (c.offset > 0 ? c.run < finger.run : c.run <= finger.run) { finger.run = -1 }
        var i = c.run
        if c.offset > 0 {
            var right = leaves[leaf].runs[i].split(at: c.offset)
            // Backspacing: the elements deleted end a visible run and the deleted run after it
            // continues them. They join that run (its start moves back), which is what
            // splitting, marking and re-joining below gives, without inserting and removing a run.
            if !right.deleted && right.length <= length && i + 1 < leaves[leaf].runs.count {
                let take = right.length
                right.deleted = true
                if right.canAppend(leaves[leaf].runs[i + 1]) {
                    right.length += leaves[leaf].runs[i + 1].length
                    leaves[leaf].runs[i + 1] = right
                    addCounts(from: leaf, visible: -take, total: 0)
                    return (take, take)
                }
                right.deleted = false
            }
            leaves[leaf].runs.insert(right, at: i + 1)
            i += 1
        }
        let take = min(leaves[leaf].runs[i].length, length)
        if take < leaves[leaf].runs[i].length {
            let right = leaves[leaf].runs[i].split(at: take)
            leaves[leaf].runs.insert(right, at: i + 1)
        }
        var newly = 0
        if !leaves[leaf].runs[i].deleted {
            leaves[leaf].runs[i].deleted = true
            newly = take
            addCounts(from: leaf, visible: -take, total: 0)
        }
        // Re-join with neighbours when they continue each other.
        if i + 1 < leaves[leaf].runs.count && leaves[leaf].runs[i].canAppend(leaves[leaf].runs[i + 1]) {
            leaves[leaf].runs[i].length += leaves[leaf].runs[i + 1].length
            leaves[leaf].runs.remove(at: i + 1)
        }
        if i > 0 && leaves[leaf].runs[i - 1].canAppend(leaves[leaf].runs[i]) {
            leaves[leaf].runs[i - 1].length += leaves[leaf].runs[i].length
            leaves[leaf].runs.remove(at: i)
        }
        if leaves[leaf].runs.count > Self.leafCapacity { splitLeaf(leaf) }
        return (take, newly)
    }

    /// Each leaf's runs and the room its array holds, in list order (for tests).
    var leafFill: [(runs: Int, capacity: Int)] {
        var fill: [(runs: Int, capacity: Int)] = []
        var leaf = firstLeaf
        while leaf >= 0 {
            fill.append((leaves[leaf].runs.count, leaves[leaf].runs.capacity))
            leaf = Int(leaves[leaf].next)
        }
        return fill
    }

    /// Splits a leaf of more than `leafCapacity` runs in two: in halves, or, when the run that
    /// overfilled it was appended at the end of the list (`appendedAtEnd`: notes added one after
    /// another, a body written on at its end), with that run alone in the new leaf, so that a
    /// list built by appending fills its leaves instead of leaving each half empty. The leaf
    /// keeps its runs in an array of their size: the one it grew to (about twice as many runs
    /// when it overfilled) would otherwise stay, mostly empty, for as long as the list lives.
    private mutating func splitLeaf(_ leaf: Int, appendedAtEnd: Bool = false) {
        if !indexed { buildIndex() }
        finger = Finger()
        let count = leaves[leaf].runs.count
        let mid = appendedAtEnd ? count - 1 : count / 2
        var sibling = ListLeaf()
        sibling.runs = Array(leaves[leaf].runs[mid...])
        leaves[leaf].runs = Array(leaves[leaf].runs[..<mid])
        sibling.next = leaves[leaf].next
        sibling.parent = leaves[leaf].parent
        for r in sibling.runs { sibling.total += r.length; if !r.deleted { sibling.visible += r.length } }
        leaves[leaf].total -= sibling.total
        leaves[leaf].visible -= sibling.visible
        if depthsKnown {
            sibling.minDepth = sibling.runs.reduce(UInt32.max) { min($0, $1.depth) }
            leaves[leaf].minDepth = leaves[leaf].runs.reduce(UInt32.max) { min($0, $1.depth) }
        }
        let s = leaves.count
        leaves.append(sibling)
        leaves[leaf].next = Int32(s)
        // The places that named a run now in the new leaf follow it: an append at the list's
        // end goes on from the run it just put there, without an index lookup.
        if hint.leaf == leaf && hint.run >= mid { hint = RunPlace(leaf: s, run: hint.run - mid) }
        if recent.leaf == leaf && recent.run >= mid { recent = RunPlace(leaf: s, run: recent.run - mid) }
        moveIndexEntries(of: s)
        attach(.leaf(s), after: .leaf(leaf))
    }

    /// Starts keeping the index (a tree of one leaf about to split): an entry for the first id
    /// of every run, naming leaf 0. Each agent's entries sorted by counter (its runs need not
    /// lie in counter order).
    private mutating func buildIndex() {
        precondition(leaves.count == 1, "a tree of more than one leaf keeps its index")
        var built: [[ListIndexEntry]] = []
        for r in leaves[0].runs {
            let a = Int(r.id.agent)
            while built.count <= a { built.append([]) }
            built[a].append(ListIndexEntry(counter: r.id.counter, leaf: 0))
        }
        for a in built.indices where zip(built[a], built[a].dropFirst()).contains(where: { $0.counter > $1.counter }) {
            built[a].sort { $0.counter < $1.counter }
        }
        index = built
        indexed = true
    }

    /// Points the index entries whose ids are in the runs of `leaf` at `leaf` (its runs were
    /// just moved there by a split).
    /// - Complexity: O(runs × log entries), plus the entries updated; O(1) a run when the
    ///   runs of one agent lie in the order of their entries or its reverse (typing forwards,
    ///   typing backwards), whose entries are found next to the previous run's.
    private mutating func moveIndexEntries(of leaf: Int) {
        let to = Int32(leaf)
        let runs = leaves[leaf].runs
        var i = 0
        while i < runs.count {
            // Runs i ..< j have one agent: its entries are updated in one access.
            let agent = runs[i].id.agent
            var j = i + 1
            while j < runs.count && runs[j].id.agent == agent { j += 1 }
            let a = Int(agent)
            if a < index.count {
                index[a].withUnsafeMutableBufferPointer { entries in
                    var near = -1
                    for k in i ..< j {
                        let first = runs[k].id.counter
                        let end = UInt64(first) + UInt64(runs[k].length)
                        // The first entry at or after the run's first id: next to where the
                        // previous run found its own when it is there, else a binary search.
                        func isFirst(_ e: Int) -> Bool {
                            (e == 0 || entries[e - 1].counter < first) && (e == entries.count || entries[e].counter >= first)
                        }
                        var lo: Int
                        if near >= 0 && isFirst(near) {
                            lo = near
                        } else if near > 0 && isFirst(near - 1) {
                            lo = near - 1
                        } else if near >= 0 && near < entries.count && isFirst(near + 1) {
                            lo = near + 1
                        } else {
                            lo = 0
                            var hi = entries.count
                            while lo < hi {
                                let mid = (lo + hi) / 2
                                if entries[mid].counter < first { lo = mid + 1 } else { hi = mid }
                            }
                        }
                        near = lo
                        while lo < entries.count, UInt64(entries[lo].counter) < end {
                            entries[lo].leaf = to
                            lo += 1
                        }
                    }
                }
            }
            i = j
        }
    }

    private mutating func splitInner(_ node: Int) {
        let mid = inners[node].children.count / 2
        var sibling = ListInner()
        sibling.children = Array(inners[node].children[mid...])
        inners[node].children.removeSubrange(mid...)
        sibling.parent = inners[node].parent
        let s = inners.count
        for ch in sibling.children {
            sibling.total += total(ch)
            sibling.visible += visible(ch)
        }
        inners[node].total -= sibling.total
        inners[node].visible -= sibling.visible
        if depthsKnown {
            sibling.minDepth = sibling.children.reduce(UInt32.max) { min($0, minDepth($1)) }
            inners[node].minDepth = inners[node].children.reduce(UInt32.max) { min($0, minDepth($1)) }
        }
        inners.append(sibling)
        for ch in inners[s].children {
            if ch.isLeaf { leaves[ch.index].parent = Int32(s) } else { inners[ch.index].parent = Int32(s) }
        }
        attach(.inner(s), after: .inner(node))
    }

    /// Puts a new sibling (whose counts were taken from `node`) into the parent after `node`.
    private mutating func attach(_ sibling: NodeRef, after node: NodeRef) {
        let p = parent(node)
        if p >= 0 {
            let pi = Int(p)
            let at = (inners[pi].children.firstIndex(of: node) ?? inners[pi].children.count - 1) + 1
            inners[pi].children.insert(sibling, at: at)
            if inners[pi].children.count > Self.fanout { splitInner(pi) }
        } else {
            let r = inners.count
            var newRoot = ListInner()
            newRoot.children = [node, sibling]
            newRoot.total = total(node) + total(sibling)
            newRoot.visible = visible(node) + visible(sibling)
            newRoot.minDepth = min(minDepth(node), minDepth(sibling))
            inners.append(newRoot)
            for ch in [node, sibling] {
                if ch.isLeaf { leaves[ch.index].parent = Int32(r) } else { inners[ch.index].parent = Int32(r) }
            }
            root = .inner(r)
        }
    }

    /// Calls `write(run, &content)` for every run, in list order, for a caller that writes the
    /// run's elements in place (`run.length` of them from `run.contentStart` on, and nothing
    /// else); stops at the first call that returns false, and returns false then.
    mutating func rewriteRuns(_ write: (ListRun, inout Element.Store) -> Bool) -> Bool {
        var leaf = firstLeaf
        while leaf >= 0 {
            // By index: a loop over the leaf's array of runs would retain and release it.
            for k in 0 ..< leaves[leaf].runs.count where !write(leaves[leaf].runs[k], &content) { return false }
            leaf = Int(leaves[leaf].next)
        }
        return true
    }

    /// Visits elements from the last to the first (id, element, whether deleted) until `body`
    /// returns false: from the rightmost leaf leftwards, so finding an element near the end
    /// costs a walk down the tree, not a walk over the whole list.
    func forEachElementBackwards(_ body: (LocalID, Element, Bool) -> Bool) {
        _ = backwards(from: root, body)
    }

    /// `forEachElementBackwards` over the subtree at `node`; false when `body` stopped it.
    private func backwards(from node: NodeRef, _ body: (LocalID, Element, Bool) -> Bool) -> Bool {
        guard node.isLeaf else {
            for child in inners[node.index].children.reversed() where !backwards(from: child, body) { return false }
            return true
        }
        for r in leaves[node.index].runs.reversed() {
            for k in stride(from: r.length - 1, through: 0, by: -1) where !body(r.id.advanced(by: k), content[r.contentStart + k], r.deleted) {
                return false
            }
        }
        return true
    }

    /// Whether the runs, in list order, hold the arena's elements in its order (each run's
    /// right after the run before, from the first), none of them deleted.
    /// - Complexity: O(runs).
    var holdsContentInOrder: Bool {
        var next = 0
        var leaf = firstLeaf
        while leaf >= 0 {
            // By index: a loop over the leaf's array of runs would retain and release it.
            for k in 0 ..< leaves[leaf].runs.count {
                guard !leaves[leaf].runs[k].deleted, leaves[leaf].runs[k].contentStart == next else { return false }
                next += leaves[leaf].runs[k].length
            }
            leaf = Int(leaves[leaf].next)
        }
        return next == content.count
    }

    /// Visits every run in order.
    func forEachRun(_ body: (ListRun) -> Void) {
        var leaf = firstLeaf
        while leaf >= 0 {
            // By index: a loop over the leaf's array of runs would retain and release it.
            for k in 0 ..< leaves[leaf].runs.count { body(leaves[leaf].runs[k]) }
            leaf = Int(leaves[leaf].next)
        }
    }
}

extension ListTree {
    /// A tree holding `runs` in list order, each run's elements at its `contentStart` in
    /// `content`: built bottom-up in one pass, instead of inserting the runs one by one (each
    /// an id lookup and a leaf insert). Leaves take up to three quarters of `leafCapacity` runs
    /// and inner nodes three quarters of `fanout` children, leaving room for the edits that
    /// follow before the first split; the id index gets an entry per run (an agent's ids from the
    /// entry's counter up to its next entry are in that run's leaf, or are not in this list).
    /// The caller gives runs that do not continue each other (`ListRun.canAppend`), with ids that
    /// occur once; the tree is then the one inserting them in order builds, but for how runs are
    /// grouped into nodes, which no reader sees.
    init(runs: [ListRun], content: [Element]) {
        self.init(runs: runs, store: Element.Store(content))
    }

    /// `init(runs:content:)` with the elements already in a store.
    init(runs: [ListRun], store: Element.Store) {
        self.content = store
        guard !runs.isEmpty else { return }
        let perLeaf = Self.leafCapacity * 3 / 4, perInner = Self.fanout * 3 / 4
        var leaves: [ListLeaf] = []
        leaves.reserveCapacity((runs.count + perLeaf - 1) / perLeaf)
        var index: [[ListIndexEntry]] = []
        // Kept only for a tree of several leaves (below): one leaf (most note bodies) is
        // scanned, and its entries would be made to be thrown away.
        let indexing = runs.count > perLeaf
        var start = 0
        while start < runs.count {
            let end = min(start + perLeaf, runs.count)
            var leaf = ListLeaf()
            leaf.runs = Array(runs[start ..< end])
            for r in leaf.runs {
                leaf.total += r.length
                if !r.deleted { leaf.visible += r.length }
                guard indexing else { continue }
                let a = Int(r.id.agent)
                while index.count <= a { index.append([]) }
                index[a].append(ListIndexEntry(counter: r.id.counter, leaf: Int32(leaves.count)))
            }
            leaf.next = end < runs.count ? Int32(leaves.count + 1) : -1
            leaves.append(leaf)
            start = end
        }
        for a in index.indices where !index[a].isEmpty {
            // An agent's runs come in list order; the index is by counter (each counter once).
            // (A radix sort of the counters: comparison sorts took most of the build.)
            if zip(index[a], index[a].dropFirst()).contains(where: { $0.counter > $1.counter }) {
                let entries = index[a]
                index[a] = RadixSort.order(of: entries.map(\.counter)).map { entries[$0] }
            }
        }
        // The levels above, each node taking the next `perInner` nodes of the level below.
        var inners: [ListInner] = []
        var level = leaves.indices.map { NodeRef.leaf($0) }
        while level.count > 1 {
            var above: [NodeRef] = []
            above.reserveCapacity((level.count + perInner - 1) / perInner)
            var k = 0
            while k < level.count {
                let children = Array(level[k ..< min(k + perInner, level.count)])
                var node = ListInner()
                node.children = children
                let me = Int32(inners.count)
                for ch in children {
                    if ch.isLeaf {
                        leaves[ch.index].parent = me
                        node.total += leaves[ch.index].total
                        node.visible += leaves[ch.index].visible
                    } else {
                        inners[ch.index].parent = me
                        node.total += inners[ch.index].total
                        node.visible += inners[ch.index].visible
                    }
                }
                inners.append(node)
                above.append(.inner(Int(me)))
                k += perInner
            }
            level = above
        }
        self.leaves = leaves
        self.inners = inners
        // One leaf: found by scanning it, as a tree built by inserting the runs would be.
        if indexing {
            self.index = index
            indexed = true
        }
        root = level[0]
    }
}
