/// A sequence CRDT (the FugueMax / YjsMod algorithm) over runs of elements:
/// note bodies (elements are Unicode scalars) and the order of notes
/// (elements are note ids).
///
/// Invariants: every element ever inserted stays in the list (deleted ones as
/// tombstones), in list order; each element's position is fully determined by
/// its origins and the replica ids of concurrent siblings, so replicas that
/// integrated the same inserts (in any causal order) hold the same sequence.
/// Concurrent runs inserted at one place never interleave, whether typed
/// forwards or backwards. Runs live in a B+ tree (`ListTree`), so finding a
/// position or an id costs O(log n). A value type: copies share storage until
/// one of them changes.
///
/// Concurrent inserts at one place are integrated through a sibling index (`ChildStretch`,
/// and the depths of `ListTree`): the scan of peernote(5) jumps from one child of the left
/// origin to the next instead of walking each child's descendants, and binary-searches a
/// stretch of children with the same origins by replica, giving the place the scan gives.
/// - Complexity: an insert with nothing between its origins, O(log n); one among concurrent
///   inserts at its place, O(s log n + log m), for s stretches of children of its left origin
///   before its place (1 when they all share its origins) and m children in its stretch, after
///   the first such insert after an element has listed that element's children (O(m log n)).
///   A list holding a crafted insert that breaks the index's order (its right origin among
///   its left origin's descendants, not a child) scans element by element, as the spec writes.
struct ListCRDT<Element: Sendable>: Sendable {
    private var tree = ListTree<Element>()
    /// The children of elements that a concurrent insert went after (`LocalID.none`: the
    /// start), in list order, as stretches sharing a right origin; only while the tree's
    /// depths are known. Entries are built from the tree when first needed (`childStretches`)
    /// and kept up to date by every insert after their element; an entry that cannot be kept
    /// is dropped, and built again when needed.
    private var children: [LocalID: [ChildStretch]] = [:]
    /// Whether this list holds an element that breaks the depth-first order the sibling
    /// index relies on (see `ListTree.buildDepths`): integration then scans as peernote(5)
    /// writes it, element by element, for good (elements never move).
    private var scansOnly = false

    init() {}

    /// A list over a tree built from runs (`init(structure:elements:ranks:)`).
    init(tree: ListTree<Element>) { self.tree = tree }

    var visibleCount: Int { tree.visibleCount }
    var totalCount: Int { tree.totalCount }

    // MARK: Reading

    var visibleElements: [Element] {
        var out: [Element] = []
        out.reserveCapacity(tree.visibleCount)
        let content = tree.content
        tree.forEachRun { r in
            if !r.deleted { out.append(contentsOf: content[r.contentStart ..< r.contentStart + r.length]) }
        }
        return out
    }

    /// Every element ever inserted, in the order this list integrated them (not list order).
    var insertionOrder: [Element] { tree.content }

    /// The deleted elements (tombstones), in list order.
    var deletedElements: [Element] {
        var out: [Element] = []
        let content = tree.content
        tree.forEachRun { r in
            if r.deleted { out.append(contentsOf: content[r.contentStart ..< r.contentStart + r.length]) }
        }
        return out
    }

    /// Rewrites every element in list order: `next(id, length, deleted)` gives a run's elements
    /// (exactly `length` of them). Loading uses it for text a file stores in document order.
    mutating func rewriteContent<E: Error>(_ next: (LocalID, Int, Bool) throws(E) -> ArraySlice<Element>) throws(E) {
        try tree.rewriteContent(next)
    }

    func forEachVisible(_ body: (LocalID, Element) -> Void) {
        let content = tree.content
        tree.forEachRun { r in
            guard !r.deleted else { return }
            for k in 0 ..< r.length { body(r.id.advanced(by: k), content[r.contentStart + k]) }
        }
    }

    /// Every run of the list in list order: its first id, length, whether deleted, and elements.
    func forEachRun(_ body: (LocalID, Int, Bool, ArraySlice<Element>) -> Void) {
        let content = tree.content
        tree.forEachRun { r in body(r.id, r.length, r.deleted, content[r.contentStart ..< r.contentStart + r.length]) }
    }

    /// Every run of the list in list order: its first id, length, left origin (of its first
    /// element; each later element's is the one before it), right origin, and whether deleted.
    func forEachRunWithOrigins(_ body: (LocalID, Int, LocalID, LocalID, Bool) -> Void) {
        tree.forEachRun { r in body(r.id, r.length, r.originLeft, r.originRight, r.deleted) }
    }

    func forEachElement(_ body: (LocalID, Element, Bool) -> Void) {
        let content = tree.content
        tree.forEachRun { r in
            for k in 0 ..< r.length { body(r.id.advanced(by: k), content[r.contentStart + k], r.deleted) }
        }
    }

    /// The last element (its id and value), tombstones included, for which
    /// `matches(id, element, deleted)` holds; the search starts at the end of the list.
    func lastElement(where matches: (LocalID, Element, Bool) -> Bool) -> (id: LocalID, element: Element)? {
        var found: (id: LocalID, element: Element)?
        tree.forEachElementBackwards { id, element, deleted in
            guard matches(id, element, deleted) else { return true }
            found = (id, element)
            return false
        }
        return found
    }

    func contains(_ id: LocalID) -> Bool { tree.find(id) != nil }

    func isDeleted(_ id: LocalID) -> Bool? {
        guard let (c, _, _) = tree.find(id) else { return nil }
        return tree.run(at: c).deleted
    }

    func idOfVisible(_ index: Int) -> LocalID? {
        tree.cursor(visible: index).map { tree.id(at: $0) }
    }

    func visibleIndex(of id: LocalID) -> Int? {
        guard let (c, _, _) = tree.find(id), !tree.run(at: c).deleted else { return nil }
        return tree.visiblePosition(c)
    }

    // MARK: Local edits

    /// Where a local insert at visible position `index` goes: its left and right origins
    /// (the elements, tombstones included, directly around the insertion point).
    func originsForInsert(atVisible index: Int) -> (left: LocalID, right: LocalID) {
        if index <= 0 { return originsAtStart }
        return origins(after: tree.cursor(visible: min(index, tree.visibleCount) - 1))
    }

    /// `originsForInsert(atVisible:)` for a local edit about to be integrated: the search
    /// starts from the leaf the last local edit found, and leaves the integration a hint.
    mutating func originsForLocalInsert(atVisible index: Int) -> (left: LocalID, right: LocalID) {
        if index <= 0 { return originsAtStart }
        return origins(after: tree.editCursor(visible: min(index, tree.visibleCount) - 1))
    }

    /// A local insert at visible `index` (> 0) whose first id is `id`, when it continues the
    /// run the last local edit typed or found (see `ListTree.extendTypingRun`): appends
    /// `elements` there and returns the insert's right origin (its left one is `id - 1`).
    /// Nil, changing nothing, when it does not continue that run; the caller then finds the
    /// origins and integrates. Either way the list holds the same elements, ids and origins in
    /// the same order (only how the tree cuts them into runs may differ, when the run ends its
    /// leaf and something only searched, without editing, since the last edit).
    mutating func continueTyping(atVisible index: Int, id: LocalID, elements: some Collection<Element>) -> LocalID? {
        guard index > 0, !elements.isEmpty else { return nil }
        let right = tree.extendTypingRun(atVisible: index, id: id, elements: elements)
        // The run's last element gains a child; it had none (the element after it is the run's
        // right origin, which is older than the run), so it has no entry; dropped if it had.
        if right != nil, !children.isEmpty { children.removeValue(forKey: id.advanced(by: -1)) }
        return right
    }

    /// What `continueTyping(atVisible: index, id: id, ...)` would return, changing nothing.
    func typingContinuation(atVisible index: Int, id: LocalID) -> LocalID? {
        guard index > 0 else { return nil }
        return tree.typingRunRightOrigin(atVisible: index, id: id)
    }

    private var originsAtStart: (left: LocalID, right: LocalID) {
        let s = tree.startCursor
        return (.none, tree.isEnd(s) ? .none : tree.id(at: s))
    }

    /// The origins of an insert right after the element at `c`.
    private func origins(after c: ListCursor?) -> (left: LocalID, right: LocalID) {
        guard let c else { return (.none, .none) }
        let after = tree.advance(c)
        return (tree.id(at: c), tree.isEnd(after) ? .none : tree.id(at: after))
    }

    /// Origins for inserting directly after the element `after` (or at the start).
    func originsForInsert(after: LocalID) -> (left: LocalID, right: LocalID) {
        if after.isNone {
            let s = tree.startCursor
            return (.none, tree.isEnd(s) ? .none : tree.id(at: s))
        }
        guard let (c, _, _) = tree.find(after) else { return (after, .none) }
        let next = tree.advance(c)
        return (after, tree.isEnd(next) ? .none : tree.id(at: next))
    }

    /// Marks the visible elements in `range` deleted, as local deletes do (from the leaf the
    /// last local edit found), and returns their ids as maximal runs of contiguous ids, in list
    /// order (what `visibleIDSpans(range)` gave before). `range` must be visible.
    mutating func deleteVisible(_ range: Range<Int>) -> [(LocalID, Int)] {
        var spans: [(LocalID, Int)] = []
        var remaining = range.count
        // Each piece deleted, the next visible element is at `range.lowerBound` again.
        while remaining > 0, let c = tree.editCursor(visible: range.lowerBound) {
            let r = tree.run(at: c)
            let start = r.id.advanced(by: c.offset)
            let covered = tree.markDeleted(at: c, length: min(r.length - c.offset, remaining)).covered
            if let last = spans.last, last.0.agent == start.agent, Int(last.0.counter) + last.1 == Int(start.counter) {
                spans[spans.count - 1].1 += covered
            } else {
                spans.append((start, covered))
            }
            remaining -= covered
        }
        return spans
    }

    /// The ids of the visible elements in `range`, as maximal runs of contiguous ids.
    func visibleIDSpans(_ range: Range<Int>) -> [(LocalID, Int)] {
        guard !range.isEmpty, var c = tree.cursor(visible: range.lowerBound) else { return [] }
        var spans: [(LocalID, Int)] = []
        var remaining = range.count
        while remaining > 0 && !tree.isEnd(c) {
            let r = tree.run(at: c)
            if !r.deleted {
                let take = min(r.length - c.offset, remaining)
                let start = r.id.advanced(by: c.offset)
                if let last = spans.last, last.0.agent == start.agent, Int(last.0.counter) + last.1 == Int(start.counter) {
                    spans[spans.count - 1].1 += take
                } else {
                    spans.append((start, take))
                }
                remaining -= take
            }
            c = tree.nextRun(c)
        }
        return spans
    }

    /// The first maximal run of contiguous ids among the visible elements from visible index
    /// `index` on, at most `maxLength` long: the first of `visibleIDSpans(index ..< index + maxLength)`.
    func firstVisibleIDSpan(at index: Int, maxLength: Int) -> (LocalID, Int)? {
        guard maxLength > 0 else { return nil }
        return firstVisibleIDSpan(from: tree.cursor(visible: index), maxLength: maxLength)
    }

    /// `firstVisibleIDSpan(at:maxLength:)` for a local delete about to be applied: the search
    /// starts from the leaf the last local edit found, and leaves the delete a hint.
    mutating func firstVisibleIDSpanForEdit(at index: Int, maxLength: Int) -> (LocalID, Int)? {
        guard maxLength > 0 else { return nil }
        return firstVisibleIDSpan(from: tree.editCursor(visible: index), maxLength: maxLength)
    }

    private func firstVisibleIDSpan(from cursor: ListCursor?, maxLength: Int) -> (LocalID, Int)? {
        guard var c = cursor else { return nil }
        var start = LocalID.none
        var length = 0
        while length < maxLength && !tree.isEnd(c) {
            let r = tree.run(at: c)
            if !r.deleted {
                let s = r.id.advanced(by: c.offset)
                if length == 0 {
                    start = s
                } else if s.agent != start.agent || Int(start.counter) + length != Int(s.counter) {
                    break
                }
                length += min(r.length - c.offset, maxLength - length)
            }
            c = tree.nextRun(c)
        }
        return length > 0 ? (start, length) : nil
    }

    // MARK: Integration

    /// Integrates a run of `elements` with the given id and origins (local or remote).
    /// `replicaLess(a, b)` says whether agent `a`'s replica id sorts before `b`'s.
    mutating func integrate(id: LocalID, originLeft: LocalID, originRight: LocalID, elements: some Collection<Element>,
                            budget: inout Int, replicaLess: (UInt32, UInt32) -> Bool) throws(ListError) {
        let length = elements.count
        guard length > 0 else { return }
        let leftCursor: ListCursor?
        var cur: ListCursor
        if originLeft.isNone {
            leftCursor = nil
            cur = tree.startCursor
        } else {
            guard let c = tree.locate(originLeft) else { throw .missingElement(originLeft) }
            leftCursor = c
            cur = tree.advance(c)
        }
        // Fast path: nothing lies between the origins (no concurrent insert here), so the
        // run goes right after the left origin. This is every local edit and most remote ones.
        if tree.isEnd(cur) ? originRight.isNone : tree.id(at: cur) == originRight {
            var run = ListRun(id: id, length: length, originLeft: originLeft, originRight: originRight,
                              deleted: false, contentStart: tree.content.count)
            if tree.depthsKnown {
                if let depth = childDepth(of: leftCursor, length: length) {
                    run.depth = depth
                    // It is the left origin's first child now.
                    if !children.isEmpty, var stretches = children.removeValue(forKey: originLeft), stretches.first?.right != originRight {
                        stretches.insert(ChildStretch(right: originRight, members: [id]), at: 0)
                        children[originLeft] = stretches
                    }
                } else {
                    forgetSiblings()
                }
            }
            tree.insert(run, before: cur)
            tree.content.append(contentsOf: elements)
            return
        }
        if !scansOnly && !tree.depthsKnown && !tree.buildDepths() { forgetSiblings() }
        if tree.depthsKnown, try integrateAmongSiblings(id: id, originLeft: originLeft, originRight: originRight, elements: elements,
                                                        leftCursor: leftCursor, afterLeft: cur, budget: &budget, replicaLess: replicaLess) {
            return
        }
        let left = leftCursor.map { tree.position($0) } ?? -1
        let right: Int
        if originRight.isNone { right = tree.totalCount } else {
            guard let c = tree.locate(originRight) else { throw .missingElement(originRight) }
            right = tree.position(c)
        }
        // Scan the runs between the origins (YjsMod) to find where the new run goes.
        var destination = cur
        var scanning = false
        var i = left + 1
        while true {
            if !scanning { destination = cur }
            if i >= tree.totalCount || i == right || tree.isEnd(cur) { break }
            budget -= 1
            if budget < 0 { throw .tooMuchWork }
            let other = tree.run(at: cur)
            let offset = cur.offset
            let otherLeftID = other.originLeft(at: offset)
            let oleft: Int
            if offset > 0 { oleft = i - 1 } else if otherLeftID.isNone { oleft = -1 } else {
                guard let c = tree.locate(otherLeftID) else { throw .missingElement(otherLeftID) }
                oleft = tree.position(c)
            }
            let oright: Int
            if other.originRight.isNone { oright = tree.totalCount } else {
                guard let c = tree.locate(other.originRight) else { throw .missingElement(other.originRight) }
                oright = tree.position(c)
            }
            if oleft < left {
                break
            } else if oleft == left {
                if oright < right {
                    scanning = true
                } else if oright == right {
                    if replicaLess(id.agent, other.id.agent) { break }
                    scanning = false
                } else {
                    scanning = false
                }
            }
            // The rest of this run has its left origin inside the run, past `left`: skip it,
            // but stop at `right` if it lies inside.
            let runEnd = i + other.length - offset
            if right > i && right < runEnd {
                if !scanning { destination = ListCursor(leaf: cur.leaf, run: cur.run, offset: offset + (right - i)) }
                break
            }
            i = runEnd
            cur = tree.nextRun(cur)
        }
        tree.insert(ListRun(id: id, length: length, originLeft: originLeft, originRight: originRight,
                         deleted: false, contentStart: tree.content.count), before: destination)
        tree.content.append(contentsOf: elements)
    }

    /// The depth of a new run's first element after the element at `left` (the start when
    /// nil), or nil when its elements' depths would not fit.
    private func childDepth(of left: ListCursor?, length: Int) -> UInt32? {
        let d = UInt64(left.map { tree.depth(at: $0) } ?? 0) + 1
        return d + UInt64(length) < UInt64(UInt32.max) ? UInt32(d) : nil
    }

    /// Stops using the sibling index for good (see `scansOnly`).
    private mutating func forgetSiblings() {
        scansOnly = true
        children = [:]
        tree.forgetDepths()
    }

    /// Where `integrate` puts a run among the children of its left origin, as stretches.
    private enum Place {
        /// Before the first child of stretch `s` (after the stretch before it).
        case before(Int)
        /// Inside stretch `s`, which has the run's right origin, before its child `t`.
        case inside(Int, Int)
        /// Before child `t` > 0 of stretch `s` (the run's right origin), splitting the stretch.
        case splitting(Int, Int)
        /// After every child: before the first element after the left origin's descendants.
        case afterAll
    }

    /// `integrate` through the sibling index, for a run that does not go right after its left
    /// origin: the scan of peernote(5) over the left origin's children only (with depths known,
    /// the list is in depth-first order of its left-origin tree, so the elements between two
    /// children are the first one's descendants, and the scan stops no later than the first
    /// element after the left origin's descendants), a stretch at a time, and the run inserted
    /// where that scan puts it. False, having changed nothing but forgotten the index, when the
    /// run's right origin lies among its left origin's descendants without being a child of it
    /// (its integration would break that order) or the index does not hold; the caller scans.
    private mutating func integrateAmongSiblings(id: LocalID, originLeft: LocalID, originRight: LocalID, elements: some Collection<Element>,
                                                 leftCursor: ListCursor?, afterLeft: ListCursor, budget: inout Int,
                                                 replicaLess: (UInt32, UInt32) -> Bool) throws(ListError) -> Bool {
        guard let depth = childDepth(of: leftCursor, length: elements.count) else { forgetSiblings(); return false }
        let leftDepth = depth - 1
        let total = tree.totalCount
        let left = leftCursor.map { tree.position($0) } ?? -1
        let right = try position(of: originRight)
        let subtreeEnd = tree.firstAtOrAfter(afterLeft, maxDepth: leftDepth)
        let subtreeEndPosition = tree.isEnd(subtreeEnd) ? total : tree.position(subtreeEnd)
        // The scan stops at the right origin: inside the left origin's descendants, only a
        // child of it keeps the order (an honest writer's right origin always does).
        let rightInside = left < right && right < subtreeEndPosition
        if rightInside {
            guard let c = tree.locate(originRight), tree.depth(at: c) == depth else { forgetSiblings(); return false }
        }
        guard var stretches = try childStretches(of: originLeft, after: afterLeft, leftDepth: leftDepth, budget: &budget, replicaLess: replicaLess) else {
            forgetSiblings()
            return false
        }
        // Where the right origin is among the children (the scan stops there).
        var stop = (stretch: stretches.count, member: 0)
        if rightInside {
            guard let found = try place(of: right, in: stretches) else { forgetSiblings(); return false }
            stop = found
        }
        // The scan, a stretch at a time: every child of a stretch has the same right origin,
        // so it does the same to `scanning` but for one with the run's own origins, which stops
        // the scan when the run's replica sorts before its replica (the stretch is in replica order).
        var scanning = false
        var mark = 0
        var place: Place?
        var s = 0
        while place == nil && s < stretches.count && !(s == stop.stretch && stop.member == 0) {
            budget -= 1
            if budget < 0 { throw .tooMuchWork }
            let stretch = stretches[s]
            if stretch.right == originRight {
                let end = s == stop.stretch ? stop.member : stretch.members.count
                var lo = 0, hi = end
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if replicaLess(id.agent, stretch.members[mid].agent) { hi = mid } else { lo = mid + 1 }
                }
                if lo < end {
                    // The children before it (sorting before the run) ended any scanning.
                    place = scanning && lo == 0 ? .before(mark) : .inside(s, lo)
                    break
                }
                scanning = false
            } else if try position(of: stretch.right) < right {
                if !scanning { scanning = true; mark = s }
            } else {
                scanning = false
            }
            if s == stop.stretch { break }
            s += 1
        }
        if place == nil {
            if scanning {
                place = .before(mark)
            } else if stop.stretch < stretches.count {
                place = stop.member == 0 ? .before(stop.stretch) : .splitting(stop.stretch, stop.member)
            } else {
                place = .afterAll
            }
        }
        let destination: ListCursor
        switch place ?? .afterAll {
        case .before(let s): destination = try cursor(of: stretches[s].members[0])
        case .inside(let s, let t): destination = try cursor(of: stretches[s].members[t])
        case .splitting(let s, let t): destination = try cursor(of: stretches[s].members[t])
        case .afterAll: destination = subtreeEnd
        }
        tree.insert(ListRun(id: id, length: elements.count, originLeft: originLeft, originRight: originRight,
                            deleted: false, depth: depth, contentStart: tree.content.count), before: destination)
        tree.content.append(contentsOf: elements)
        switch place ?? .afterAll {
        case .before(let s):
            if s > 0 && stretches[s - 1].right == originRight {
                stretches[s - 1].members.append(id)
            } else {
                stretches.insert(ChildStretch(right: originRight, members: [id]), at: s)
            }
        case .inside(let s, let t):
            stretches[s].members.insert(id, at: t)
        case .splitting(let s, let t):
            let rest = ChildStretch(right: stretches[s].right, members: Array(stretches[s].members[t...]))
            stretches[s].members.removeSubrange(t...)
            stretches.insert(contentsOf: [ChildStretch(right: originRight, members: [id]), rest], at: s + 1)
        case .afterAll:
            if let last = stretches.last, last.right == originRight {
                stretches[stretches.count - 1].members.append(id)
            } else {
                stretches.append(ChildStretch(right: originRight, members: [id]))
            }
        }
        children[originLeft] = stretches
        return true
    }

    /// The children of `left` (whose depth is `leftDepth`; `afterLeft` is the element after
    /// it), taken out of the index, or listed from the tree when the index has no entry: each
    /// next child is the next element of depth `leftDepth + 1` before the first of depth at
    /// most `leftDepth`. Nil when a stretch is not in replica order (the index does not hold).
    private mutating func childStretches(of left: LocalID, after afterLeft: ListCursor, leftDepth: UInt32, budget: inout Int,
                                         replicaLess: (UInt32, UInt32) -> Bool) throws(ListError) -> [ChildStretch]? {
        if let known = children.removeValue(forKey: left) { return known }
        var stretches: [ChildStretch] = []
        var c = afterLeft
        while true {
            let child = tree.firstAtOrAfter(c, maxDepth: leftDepth + 1)
            if tree.isEnd(child) || tree.depth(at: child) <= leftDepth { break }
            budget -= 1
            if budget < 0 { throw .tooMuchWork }
            let id = tree.id(at: child), right = tree.run(at: child).originRight
            if let last = stretches.last, last.right == right {
                guard let previous = last.members.last, !replicaLess(id.agent, previous.agent) else { return nil }
                stretches[stretches.count - 1].members.append(id)
            } else {
                stretches.append(ChildStretch(right: right, members: [id]))
            }
            c = tree.advance(child)
        }
        return stretches
    }

    /// The stretch and member index of the child at position `target`, by binary search on
    /// the children's positions (they are in list order); nil when no child is there.
    private mutating func place(of target: Int, in stretches: [ChildStretch]) throws(ListError) -> (stretch: Int, member: Int)? {
        var lo = 0, hi = stretches.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if try position(of: stretches[mid].members[0]) <= target { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        let s = lo - 1
        let members = stretches[s].members
        var a = 0, b = members.count
        while a < b {
            let mid = (a + b) / 2
            let p = try position(of: members[mid])
            if p == target { return (s, mid) }
            if p < target { a = mid + 1 } else { b = mid }
        }
        return nil
    }

    /// The position of element `id` (tombstones included), or the list's length for none.
    private mutating func position(of id: LocalID) throws(ListError) -> Int {
        if id.isNone { return tree.totalCount }
        return tree.position(try cursor(of: id))
    }

    private mutating func cursor(of id: LocalID) throws(ListError) -> ListCursor {
        guard let c = tree.locate(id) else { throw .missingElement(id) }
        return c
    }

    /// Marks `length` elements starting at `target` deleted (counting down when `reversed`).
    /// Returns the elements newly deleted, or throws when an id is unknown.
    @discardableResult
    mutating func delete(target: LocalID, length: Int, reversed: Bool) throws(ListError) -> Int {
        let start = reversed ? target.advanced(by: -(length - 1)) : target
        var done = 0
        var newly = 0
        while done < length {
            let cur = start.advanced(by: done)
            guard let c = tree.locate(cur) else { throw .missingElement(cur) }
            let (covered, n) = tree.markDeleted(at: c, length: length - done)
            done += covered
            newly += n
        }
        return newly
    }
}

/// Children of one element of a `ListCRDT` (the elements whose left origin it is) that follow
/// each other in list order and share a right origin: `members`, in list order, whose
/// replicas never decrease along the stretch (peernote(5) puts a sibling with the same origins
/// after those of smaller replicas). Consecutive stretches of one element differ in `right`.
struct ChildStretch: Sendable {
    var right: LocalID
    var members: [LocalID]
}
