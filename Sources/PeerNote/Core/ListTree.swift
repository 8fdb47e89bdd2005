/// A node of the B+ tree behind `ListCRDT`. Leaves hold runs in list order and
/// are chained left to right; internal nodes hold children. `visible` and
/// `total` count the elements (visible ones, and all including tombstones) in
/// the node's subtree.
///
/// Invariant: nodes only ever split, never merge, so an element only ever moves
/// to a leaf further right; `ListIndex` relies on this.
final class ListNode {
    let isLeaf: Bool
    var runs: [ListRun] = []
    var children: [ListNode] = []
    var visible = 0
    var total = 0
    weak var parent: ListNode?
    /// The next leaf to the right (leaves only).
    weak var next: ListNode?

    init(isLeaf: Bool) { self.isLeaf = isLeaf }

    static let leafCapacity = 64
    static let fanout = 32

    func recount() {
        if isLeaf {
            var v = 0, t = 0
            for r in runs { t += r.length; if !r.deleted { v += r.length } }
            visible = v; total = t
        } else {
            var v = 0, t = 0
            for c in children { v += c.visible; t += c.total }
            visible = v; total = t
        }
    }
}

/// A position in a `ListTree`: run `run` of `leaf`, element `offset` of that run.
/// `run == leaf.runs.count` (offset 0) is the end of the leaf.
struct ListCursor {
    unowned(unsafe) var leaf: ListNode
    var run: Int
    var offset: Int
}

/// One entry of the id index: the ids of `agent` from `counter` up to the next
/// entry were placed in `leaf` or, after splits, in a leaf to its right.
struct ListIndexEntry {
    var counter: UInt32
    unowned(unsafe) var leaf: ListNode
}

/// The storage of a `ListCRDT`: a B+ tree of runs, the element arena and an id
/// index. A reference type; `ListCRDT` copies it on write.
final class ListTree<Element: Sendable>: @unchecked Sendable {
    private(set) var root = ListNode(isLeaf: true)
    var content: [Element] = []
    /// Per agent, entries sorted by counter.
    private var index: [[ListIndexEntry]] = []

    init() {}

    /// A deep copy with its own nodes and a rebuilt index.
    func copy() -> ListTree<Element> {
        let t = ListTree<Element>()
        t.content = content
        var leaves: [ListNode] = []
        func clone(_ n: ListNode, parent: ListNode?) -> ListNode {
            let c = ListNode(isLeaf: n.isLeaf)
            c.visible = n.visible
            c.total = n.total
            c.parent = parent
            if n.isLeaf {
                c.runs = n.runs
                leaves.append(c)
            } else {
                c.children = n.children.map { clone($0, parent: c) }
            }
            return c
        }
        t.root = clone(root, parent: nil)
        for i in 0 ..< leaves.count - 1 { leaves[i].next = leaves[i + 1] }
        for leaf in leaves {
            for r in leaf.runs { t.addIndex(r.id, leaf) }
        }
        for a in 0 ..< t.index.count { t.index[a].sort { $0.counter < $1.counter } }
        return t
    }

    var visibleCount: Int { root.visible }
    var totalCount: Int { root.total }

    var firstLeaf: ListNode {
        var n = root
        while !n.isLeaf, let f = n.children.first { n = f }
        return n
    }

    var lastLeaf: ListNode {
        var n = root
        while !n.isLeaf, let l = n.children.last { n = l }
        return n
    }

    var startCursor: ListCursor { normalize(ListCursor(leaf: firstLeaf, run: 0, offset: 0)) }
    var endCursor: ListCursor { let l = lastLeaf; return ListCursor(leaf: l, run: l.runs.count, offset: 0) }

    func isEnd(_ c: ListCursor) -> Bool { c.run >= c.leaf.runs.count }

    /// Moves a cursor sitting at the end of a leaf to the start of the next non-empty leaf, if any.
    func normalize(_ c: ListCursor) -> ListCursor {
        var c = c
        while c.run >= c.leaf.runs.count, let n = c.leaf.next { c = ListCursor(leaf: n, run: 0, offset: 0) }
        return c
    }

    func run(at c: ListCursor) -> ListRun { c.leaf.runs[c.run] }
    func id(at c: ListCursor) -> LocalID { c.leaf.runs[c.run].id.advanced(by: c.offset) }

    /// The cursor one element further on.
    func advance(_ c: ListCursor) -> ListCursor {
        if c.offset + 1 < c.leaf.runs[c.run].length { return ListCursor(leaf: c.leaf, run: c.run, offset: c.offset + 1) }
        return normalize(ListCursor(leaf: c.leaf, run: c.run + 1, offset: 0))
    }

    /// The cursor at the start of the next run.
    func nextRun(_ c: ListCursor) -> ListCursor {
        normalize(ListCursor(leaf: c.leaf, run: c.run + 1, offset: 0))
    }

    // MARK: Finding

    /// The element at visible index `v` (0 ≤ v < visibleCount).
    func cursor(visible v: Int) -> ListCursor? {
        guard v >= 0 && v < root.visible else { return nil }
        var node = root
        var rem = v
        while !node.isLeaf {
            var next: ListNode?
            for child in node.children {
                if rem < child.visible { next = child; break }
                rem -= child.visible
            }
            guard let n = next else { return nil }
            node = n
        }
        for (i, r) in node.runs.enumerated() where !r.deleted {
            if rem < r.length { return ListCursor(leaf: node, run: i, offset: rem) }
            rem -= r.length
        }
        return nil
    }

    /// Where the element `id` is.
    func locate(_ id: LocalID) -> ListCursor? {
        let a = Int(id.agent)
        guard a < index.count, !index[a].isEmpty else { return nil }
        let entries = index[a]
        var lo = 0, hi = entries.count - 1
        guard entries[0].counter <= id.counter else { return nil }
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if entries[mid].counter <= id.counter { lo = mid } else { hi = mid - 1 }
        }
        var leaf: ListNode? = entries[lo].leaf
        var hops = 0
        while let l = leaf {
            for (i, r) in l.runs.enumerated() where r.contains(id) {
                if hops > 2 { insertIndex(id, l) }
                return ListCursor(leaf: l, run: i, offset: Int(id.counter) - Int(r.id.counter))
            }
            leaf = l.next
            hops += 1
        }
        return nil
    }

    /// Absolute position (counting tombstones) of the element at `c`.
    func position(_ c: ListCursor) -> Int {
        var pos = c.offset
        for i in 0 ..< c.run { pos += c.leaf.runs[i].length }
        var node = c.leaf
        while let p = node.parent {
            for ch in p.children {
                if ch === node { break }
                pos += ch.total
            }
            node = p
        }
        return pos
    }

    /// Visible index of the (visible) element at `c`.
    func visiblePosition(_ c: ListCursor) -> Int {
        var pos = c.leaf.runs[c.run].deleted ? 0 : c.offset
        for i in 0 ..< c.run where !c.leaf.runs[i].deleted { pos += c.leaf.runs[i].length }
        var node = c.leaf
        while let p = node.parent {
            for ch in p.children {
                if ch === node { break }
                pos += ch.visible
            }
            node = p
        }
        return pos
    }

    // MARK: Index

    private func addIndex(_ id: LocalID, _ leaf: ListNode) {
        let a = Int(id.agent)
        while index.count <= a { index.append([]) }
        index[a].append(ListIndexEntry(counter: id.counter, leaf: leaf))
    }

    /// Records that `id` is (now) in `leaf`, keeping entries sorted.
    private func insertIndex(_ id: LocalID, _ leaf: ListNode) {
        let a = Int(id.agent)
        while index.count <= a { index.append([]) }
        var lo = 0, hi = index[a].count
        while lo < hi {
            let mid = (lo + hi) / 2
            if index[a][mid].counter < id.counter { lo = mid + 1 } else { hi = mid }
        }
        if lo < index[a].count && index[a][lo].counter == id.counter {
            index[a][lo].leaf = leaf
        } else {
            index[a].insert(ListIndexEntry(counter: id.counter, leaf: leaf), at: lo)
        }
    }

    // MARK: Changing

    /// Inserts `run` before the element at `c` (or at the end).
    func insert(_ run: ListRun, before c: ListCursor) {
        let leaf = c.leaf
        var i = c.run
        if c.offset > 0 {
            let right = leaf.runs[i].split(at: c.offset)
            leaf.runs.insert(right, at: i + 1)
            i += 1
        }
        if i > 0 && leaf.runs[i - 1].canAppend(run) {
            leaf.runs[i - 1].length += run.length
        } else {
            leaf.runs.insert(run, at: i)
            insertIndex(run.id, leaf)
        }
        var node: ListNode? = leaf
        while let n = node {
            n.total += run.length
            if !run.deleted { n.visible += run.length }
            node = n.parent
        }
        if leaf.runs.count > ListNode.leafCapacity { split(leaf) }
    }

    /// Marks up to `length` elements from `c` deleted, within one run; returns how many it covered
    /// and how many were newly deleted.
    func markDeleted(at c: ListCursor, length: Int) -> (covered: Int, newly: Int) {
        let leaf = c.leaf
        var i = c.run
        if c.offset > 0 {
            let right = leaf.runs[i].split(at: c.offset)
            leaf.runs.insert(right, at: i + 1)
            i += 1
        }
        let take = min(leaf.runs[i].length, length)
        if take < leaf.runs[i].length {
            let right = leaf.runs[i].split(at: take)
            leaf.runs.insert(right, at: i + 1)
        }
        var newly = 0
        if !leaf.runs[i].deleted {
            leaf.runs[i].deleted = true
            newly = take
            var node: ListNode? = leaf
            while let n = node { n.visible -= take; node = n.parent }
        }
        // Re-join with neighbours when they continue each other.
        if i + 1 < leaf.runs.count && leaf.runs[i].canAppend(leaf.runs[i + 1]) {
            leaf.runs[i].length += leaf.runs[i + 1].length
            leaf.runs.remove(at: i + 1)
        }
        if i > 0 && leaf.runs[i - 1].canAppend(leaf.runs[i]) {
            leaf.runs[i - 1].length += leaf.runs[i].length
            leaf.runs.remove(at: i)
        }
        if leaf.runs.count > ListNode.leafCapacity { split(leaf) }
        return (take, newly)
    }

    private func split(_ node: ListNode) {
        let sibling = ListNode(isLeaf: node.isLeaf)
        if node.isLeaf {
            let mid = node.runs.count / 2
            sibling.runs = Array(node.runs[mid...])
            node.runs.removeSubrange(mid...)
            sibling.next = node.next
            node.next = sibling
        } else {
            let mid = node.children.count / 2
            sibling.children = Array(node.children[mid...])
            node.children.removeSubrange(mid...)
            for c in sibling.children { c.parent = sibling }
        }
        node.recount()
        sibling.recount()
        if let p = node.parent {
            let at = (p.children.firstIndex { $0 === node } ?? p.children.count - 1) + 1
            p.children.insert(sibling, at: at)
            sibling.parent = p
            if p.children.count > ListNode.fanout { split(p) }
        } else {
            let newRoot = ListNode(isLeaf: false)
            newRoot.children = [node, sibling]
            node.parent = newRoot
            sibling.parent = newRoot
            newRoot.recount()
            root = newRoot
        }
    }

    /// Visits every run in order.
    func forEachRun(_ body: (ListRun) -> Void) {
        var leaf: ListNode? = firstLeaf
        while let l = leaf {
            for r in l.runs { body(r) }
            leaf = l.next
        }
    }
}
