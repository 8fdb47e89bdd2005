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
/// Concurrent inserts at one place are integrated through a sibling index (`children`, and
/// the depths of `ListTree`): the place the scan of peernote(5) gives is found from the
/// children of the left origin that share the insert's right origin (a binary search by
/// replica) instead of by walking every child and its descendants.
/// - Complexity: an insert with nothing between its origins, O(log n); one among concurrent
///   inserts at its place, O(log n) amortised (plus moving a chunk of `SiblingList`) when its
///   right origin is a child of its left origin or a sibling with its origins exists (every
///   insert at one place, typing backwards there by one replica or many, and inserts in front
///   of a chain typed backwards), else O(s log n) for s right origins of the children just
///   before the end of its left origin's descendants whose spans end before its right origin;
///   after the first such insert after an element has listed that element's children
///   (O(k log n) for k children).
///   A list holding a crafted insert that breaks the index's order (its right origin among
///   its left origin's descendants, not a child) scans element by element, as the spec writes.
struct ListCRDT<Element: ListElement>: Sendable {
    /// The children of elements that a concurrent insert went after (`LocalID.none`: the
    /// start), by right origin: for each, the children that have it, in list order (their
    /// replicas never decrease along it), and the forest their spans make (`SpanForest`); only
    /// while the tree's depths are known. Entries are built from the tree when first needed
    /// (`childrenByRight`) and kept up to date by every insert after their element; an entry
    /// that cannot be kept is dropped, and built again when needed.
    private var children: [LocalID: Siblings] = [:]
    // After `children`: the tree ends in bytes the flag below can share.
    private var tree = ListTree<Element>()
    /// Whether this list holds an element that breaks the depth-first order the sibling
    /// index relies on (see `ListTree.buildDepths`): integration then scans as peernote(5)
    /// writes it, element by element, for good (elements never move).
    private var scansOnly = false

    init() {}

    /// A list over a tree built from runs (`init(structure:elements:ranks:)`).
    init(tree: ListTree<Element>) { self.tree = tree }

    var visibleCount: Int { tree.visibleCount }
    /// See `ListTree.sharedIndexCopies`.
    var sharedIndexCopies: Int { Int(tree.sharedIndexCopies) }
    /// See `ListTree.indexWalkLeaves`.
    var indexWalkLeaves: Int { Int(tree.indexWalkLeaves) }
    /// Each leaf's runs and the room its array holds, in list order (for tests).
    var leafFill: [(runs: Int, capacity: Int)] { tree.leafFill }
    var totalCount: Int { tree.totalCount }

    // MARK: Reading

    var visibleElements: [Element] {
        var out: [Element] = []
        out.reserveCapacity(tree.visibleCount)
        let content = tree.content
        tree.forEachRun { r in
            if !r.deleted { content.append(r.contentStart ..< r.contentStart + r.length, to: &out) }
        }
        return out
    }

    /// Every element ever inserted, in the order this list integrated them (not list order).
    var insertionOrder: [Element] { tree.content.elements }

    /// Every element ever inserted, in the order this list integrated them, as stored.
    var arena: Element.Store { tree.content }

    /// The deleted elements (tombstones), in list order.
    var deletedElements: [Element] {
        var out: [Element] = []
        let content = tree.content
        tree.forEachRun { r in
            if r.deleted { content.append(r.contentStart ..< r.contentStart + r.length, to: &out) }
        }
        return out
    }

    func forEachVisible(_ body: (LocalID, Element) -> Void) {
        let content = tree.content
        tree.forEachRun { r in
            guard !r.deleted else { return }
            for k in 0 ..< r.length { body(r.id.advanced(by: k), content[r.contentStart + k]) }
        }
    }

    /// Every run of the list in list order: its first id, length, whether deleted, and elements.
    func forEachRun(_ body: (LocalID, Int, Bool, Element.Store.Run) -> Void) {
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
                    // It is the left origin's first child now, the first (and only: the right
                    // origin was its first child) with its right origin.
                    if !children.isEmpty, children[originLeft] != nil {
                        children[originLeft]?.byRight[originRight, default: SiblingList()].insert(id, at: .start)
                        // Its span holds no other child: it is outermost, first.
                        if children[originLeft]?.spans.wrap(under: .none, .nothing, adding: id) != true { forgetSiblings() }
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

    /// `integrate` through the sibling index, for a run that does not go right after its left
    /// origin L: the place the scan of peernote(5) gives, found without walking L's children.
    ///
    /// The scan looks only at L's children (with depths known, the list is in depth-first order
    /// of its left-origin tree, so the elements between two children are the first one's
    /// descendants, and the scan stops no later than the first element after L's descendants,
    /// or at the right origin R). Over L's children c_1 ... c_k in list order, each with right
    /// origin r_j, it puts the run before c_p, where J is the first child before R with r_J = R
    /// whose replica sorts after the run's (R itself, or k + 1, when there is none) and p is one
    /// past the last child before J with r_j at or after R. The index keeps, per right origin,
    /// L's children that have it, in list order and so in replica order (a binary search finds
    /// J), and relies on the children's spans [c_j, r_j) being nested or disjoint (checked when
    /// the children are first listed, and kept by every insert the scan places). Then nothing
    /// between J's previous sibling with the same right origin and J reaches R, so p follows that
    /// sibling. When J has none, the children before J whose spans reach R are those that hold
    /// J's span (or R, a child), so p follows the innermost of them, J's (or R's) parent in the
    /// forest of spans (`SpanForest`). When neither J nor R is a child, the children just
    /// before the end of L's descendants whose spans end before R are skipped a right origin at a
    /// time (each jump to the first child with that right origin), one step each, until one
    /// reaches R.
    ///
    /// False, having changed nothing but forgotten the index, when the run's right origin lies
    /// among L's descendants without being a child of L, or before L (its integration would
    /// break the order), or the index does not hold; the caller scans.
    private mutating func integrateAmongSiblings(id: LocalID, originLeft: LocalID, originRight: LocalID, elements: some Collection<Element>,
                                                 leftCursor: ListCursor?, afterLeft: ListCursor, budget: inout Int,
                                                 replicaLess: (UInt32, UInt32) -> Bool) throws(ListError) -> Bool {
        guard let depth = childDepth(of: leftCursor, length: elements.count) else { forgetSiblings(); return false }
        let leftDepth = depth - 1
        let left = leftCursor.map { tree.position($0) } ?? -1
        let right = try position(of: originRight)
        let subtreeEnd = tree.firstAtOrAfter(afterLeft, maxDepth: leftDepth)
        let subtreeEndPosition = tree.isEnd(subtreeEnd) ? tree.totalCount : tree.position(subtreeEnd)
        // The right origin is a child of L, or comes after L's descendants (an honest writer's
        // always does: it was next to L in the writer's copy).
        let rightInside = right < subtreeEndPosition
        if rightInside {
            guard left < right, let c = tree.locate(originRight), tree.depth(at: c) == depth else { forgetSiblings(); return false }
        }
        guard var known = try childrenByRight(of: originLeft, after: afterLeft, leftDepth: leftDepth, subtreeEnd: subtreeEndPosition,
                                              budget: &budget, replicaLess: replicaLess) else {
            forgetSiblings()
            return false
        }
        budget -= 1
        if budget < 0 { throw .tooMuchWork }
        var siblings = known.byRight.removeValue(forKey: originRight) ?? SiblingList()
        let at = siblings.firstPosition { replicaLess(id.agent, $0.agent) }
        var destination: ListCursor
        // The child whose span is the innermost to hold the run's (`LocalID.none`: none), and
        // which of that child's children the run's span holds.
        let parent: LocalID
        let held: SpanForest.Prefix
        if let previous = siblings.member(before: at) {
            // Right after the previous sibling with the same origins (before L's next child).
            let previousCursor = try cursor(of: previous)
            destination = tree.firstAtOrAfter(tree.advance(previousCursor), maxDepth: depth)
            (parent, held) = (previous, .all)
        } else if let inner = siblings.first ?? (rightInside ? originRight : nil) {
            // Before J (or R, a child of L), after the innermost child whose span holds it, that
            // is, right after its parent in the forest of spans (or first).
            guard let p = known.spans.parent(of: inner) else { forgetSiblings(); return false }
            if p.isNone {
                destination = afterLeft
            } else {
                let parentCursor = try cursor(of: p)
                destination = tree.firstAtOrAfter(tree.advance(parentCursor), maxDepth: depth)
            }
            (parent, held) = (p, siblings.first != nil ? .through(inner) : .before(inner))
        } else {
            // Before the end of L's descendants, less the children just before it whose spans
            // end before R.
            destination = subtreeEnd
            var p = LocalID.none
            while let before = tree.lastBefore(destination, maxDepth: depth), tree.depth(at: before) == depth {
                budget -= 1
                if budget < 0 { throw .tooMuchWork }
                let beforeRight = tree.run(at: before).originRight
                if try position(of: beforeRight) >= right { p = tree.id(at: before); break }
                guard let first = known.byRight[beforeRight]?.first else { forgetSiblings(); return false }
                destination = try cursor(of: first)
            }
            (parent, held) = (p, .all)
        }
        guard known.spans.wrap(under: parent, held, adding: id) else { forgetSiblings(); return false }
        tree.insert(ListRun(id: id, length: elements.count, originLeft: originLeft, originRight: originRight,
                            deleted: false, depth: depth, contentStart: tree.content.count), before: destination)
        tree.content.append(contentsOf: elements)
        siblings.insert(id, at: at)
        known.byRight[originRight] = siblings
        children[originLeft] = known
        return true
    }

    /// The children of `left` (whose depth is `leftDepth`; `afterLeft` is the element after
    /// it; `subtreeEnd` the position of the first element after its descendants) by right
    /// origin, each list in list order, taken out of the index, or listed from the tree when
    /// the index has no entry: each next child is the next element of depth `leftDepth + 1`
    /// before the first of depth at most `leftDepth`. Nil when the index would not hold: a
    /// right origin that is neither a later child nor after the descendants, spans that cross,
    /// or children with one right origin out of replica order.
    private mutating func childrenByRight(of left: LocalID, after afterLeft: ListCursor, leftDepth: UInt32, subtreeEnd: Int, budget: inout Int,
                                          replicaLess: (UInt32, UInt32) -> Bool) throws(ListError) -> Siblings? {
        if let known = children.removeValue(forKey: left) { return known }
        var byRight: [LocalID: SiblingList] = [:]
        // Each child and the innermost child whose span holds it, in list order.
        var listed: [(child: LocalID, parent: LocalID)] = []
        // The ends of the spans that contain the current child and their children, innermost last.
        var open: [(end: Int, child: LocalID)] = []
        var c = afterLeft
        while true {
            let child = tree.firstAtOrAfter(c, maxDepth: leftDepth + 1)
            if tree.isEnd(child) || tree.depth(at: child) <= leftDepth { break }
            budget -= 1
            if budget < 0 { throw .tooMuchWork }
            let id = tree.id(at: child), rightID = tree.run(at: child).originRight
            let at = tree.position(child)
            let end = try position(of: rightID)
            guard end > at else { return nil }
            if end < subtreeEnd {
                guard let rc = tree.locate(rightID), tree.depth(at: rc) == leftDepth + 1 else { return nil }
            }
            while let top = open.last, top.end <= at { open.removeLast() }
            if let top = open.last, top.end < end { return nil }
            listed.append((id, open.last?.child ?? .none))
            open.append((end, id))
            if let last = byRight[rightID]?.last, replicaLess(id.agent, last.agent) { return nil }
            byRight[rightID, default: SiblingList()].append(id)
            c = tree.advance(child)
        }
        return Siblings(byRight: byRight, spans: SpanForest(listing: listed))
    }

    /// The position of element `id` (tombstones included), or the list's length for none.
    private mutating func position(of id: LocalID) throws(ListError) -> Int {
        if id.isNone { return tree.totalCount }
        let c = try cursor(of: id)
        return tree.position(c)
    }

    /// Where `id` is. It changes the tree (`ListTree.locate` keeps lookup hints and may record a
    /// newer leaf in the id index), so callers bind its result before they call the tree with
    /// it: in `tree.f(try cursor(of: x))` the tree is read first, the call keeps that copy while
    /// the lookup writes, and the write copies the id index, O(replicas) an insert.
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

    /// This list as it stood before the elements at or past `limits` were inserted: the
    /// elements of each agent `a` numbered below `limits[a]` (every element of an agent past
    /// the array's end), in this list's order, each deleted as here unless it is in `revived`
    /// (which must be normalized: `IDSpans.normalize()`). Elements never move once integrated,
    /// and integration reads only which elements exist and their origins, so when exactly the
    /// elements kept were integrated before the others and `revived` holds the kept elements
    /// only later deletes deleted, this is the list those earlier ops made, ready for the later
    /// ones to be integrated again. Its arena holds the kept elements, in list order (a stretch
    /// of a narrow store copied as one block).
    /// - Complexity: O(r + k) for this list's r runs and k elements kept, plus O(log s) per
    ///   deleted run for the s spans of `revived`.
    func earlier(below limits: [UInt32], reviving revived: IDSpans) -> ListCRDT {
        var runs: [ListRun] = []
        let content = tree.content
        var arenaRanges: [Range<Int>] = []
        var keptCount = 0
        tree.forEachRun { r in
            let agent = Int(r.id.agent)
            let limit = agent < limits.count ? limits[agent] : .max
            guard r.id.counter < limit else { return }
            let kept = Swift.min(r.length, Int(limit - r.id.counter))
            var offset = 0
            while offset < kept {
                let counter = r.id.counter &+ UInt32(offset), end = r.id.counter &+ UInt32(kept)
                var length = kept - offset, deleted = r.deleted
                if deleted, let s = revived.firstSpan(agent: r.id.agent, endingAfter: counter), s.lowerBound < end {
                    if s.lowerBound <= counter {
                        deleted = false
                        length = Int(Swift.min(s.upperBound, end) - counter)
                    } else {
                        length = Int(s.lowerBound - counter)
                    }
                }
                let piece = ListRun(id: r.id.advanced(by: offset), length: length, originLeft: r.originLeft(at: offset),
                                    originRight: r.originRight, deleted: deleted, contentStart: keptCount)
                let from = r.contentStart + offset
                if let last = arenaRanges.last, last.upperBound == from {
                    arenaRanges[arenaRanges.count - 1] = last.lowerBound ..< from + length
                } else {
                    arenaRanges.append(from ..< from + length)
                }
                keptCount += length
                // Runs that continue each other are one run (`ListTree.init(runs:store:)` requires it).
                if let last = runs.last, last.canAppend(piece) {
                    runs[runs.count - 1].length += length
                } else {
                    runs.append(piece)
                }
                offset += length
            }
        }
        return ListCRDT(tree: ListTree(runs: runs, store: Element.Store.gathering(arenaRanges, of: content)))
    }
}

extension ListCRDT where Element == Unicode.Scalar {
    /// Where the characters of a run come from when a load writes a body's text in: memory the
    /// caller holds for the call, read in place (no array slice made a run, which would retain
    /// and release the buffer it comes from: one that both of a load's threads read).
    enum TextSource {
        /// Scalars below U+0100, one a byte.
        case latin1(UnsafeBufferPointer<UInt8>)
        case scalars(UnsafeBufferPointer<Unicode.Scalar>)
    }

    /// How many elements the arena holds: every one integrated, deleted ones too.
    var arenaCount: Int { tree.content.count }

    /// The arena: every element the list integrated, in that order (deleted ones too).
    var arena: ScalarStore { tree.content }

    /// Where the arena's characters lie in `bytes` when it reads them there in place
    /// (`ScalarStore.inPlaceRange(within:)`), read without copying the arena.
    func arenaRange(inPlaceWithin bytes: borrowing [UInt8]) -> Range<Int>? { tree.content.inPlaceRange(within: bytes) }

    /// Whether every character is a placeholder counted but not stored (a load's replay into
    /// an empty body, before its text is read in), and there is at least one.
    var textIsUnwritten: Bool { tree.content.isUnwritten }

    /// Whether the body's text can be `count` characters read in place (`readText(in:)`):
    /// its arena holds exactly that many placeholders, none of them stored (a load's replay
    /// into an empty body), none deleted, in list order (each run's right after the run before).
    /// - Complexity: O(runs).
    func canReadText(count: Int) -> Bool {
        tree.content.isUnwritten && tree.content.count == count && visibleCount == count && tree.holdsContentInOrder
    }

    /// Lets the arena read its characters in `bytes`, one scalar a byte, where they lie (a
    /// state section's ASCII), instead of a copy; the first write to it copies them. False,
    /// changing nothing, unless `canReadText(count: bytes.count)`.
    /// Requires each byte to be its character: UTF-8 bytes are so only when all are ASCII,
    /// which the caller checks (`BlockReplayer.fill` leaves only such a body unwritten).
    /// `bytes` is taken, not copied: a load gives every body a slice of one buffer, and each
    /// copy would count a reference to it again.
    mutating func readText(in bytes: consuming ArraySlice<UInt8>) -> Bool {
        guard canReadText(count: bytes.count) else { return false }
        tree.content.read(inPlace: bytes)
        return true
    }

    /// Writes an unwritten body's characters from `bytes`, one scalar a byte, in list order
    /// (`canReadText(count: bytes.count)` must hold): a copy of what `readText(in:)` reads in
    /// place. False, changing nothing, otherwise. The same requirement on `bytes` as there.
    mutating func writeText(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard canReadText(count: bytes.count) else { return false }
        var written = 0
        return rewriteText { length, _ in
            defer { written += length }
            return .latin1(UnsafeBufferPointer(rebasing: bytes[written ..< written + length]))
        }
    }

    /// Rewrites every element in list order: `next(length, deleted)` gives a run's characters,
    /// or nil to stop. False when one gave nil or a number of characters other than `length`
    /// (the body is then partly rewritten).
    mutating func rewriteText(_ next: (Int, Bool) -> TextSource?) -> Bool {
        tree.rewriteRuns { r, store in
            switch next(r.length, r.deleted) {
            case .latin1(let bytes)?:
                guard bytes.count == r.length else { return false }
                store.overwrite(from: r.contentStart, latin1: bytes)
            case .scalars(let scalars)?:
                guard scalars.count == r.length else { return false }
                store.overwrite(from: r.contentStart, with: scalars)
            case nil:
                return false
            }
            return true
        }
    }

    /// Appends the UTF-8 of the visible text, in list order, to `out` (a save's state section:
    /// no array of scalars and no `String` a note on the way).
    /// - Complexity: O(r + v) for r runs and v visible scalars.
    func appendVisibleUTF8(to out: inout [UInt8]) {
        let content = tree.content
        tree.forEachRun { r in
            if !r.deleted { content.appendUTF8(r.contentStart ..< r.contentStart + r.length, to: &out) }
        }
    }

    /// How many bytes `appendVisibleUTF8(to:)` appends.
    var visibleUTF8Count: Int {
        let content = tree.content
        var total = 0
        tree.forEachRun { r in
            if !r.deleted { total += content.utf8Count(r.contentStart ..< r.contentStart + r.length) }
        }
        return total
    }

    /// The visible text as a string, made from its UTF-8 (`appendVisibleUTF8(to:)`).
    var visibleText: String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(visibleCount)
        appendVisibleUTF8(to: &utf8)
        return String(decoding: utf8, as: UTF8.self)
    }
}
