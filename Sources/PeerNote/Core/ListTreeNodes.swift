/// A reference to a node of a `ListTree`: a leaf (index into `leaves`) or an
/// inner node (index into `inners`), packed in one integer.
struct NodeRef: Equatable, Sendable {
    var raw: Int32
    static func leaf(_ i: Int) -> NodeRef { NodeRef(raw: Int32(i)) }
    static func inner(_ i: Int) -> NodeRef { NodeRef(raw: ~Int32(i)) }
    static let none = NodeRef(raw: Int32.min)
    var isLeaf: Bool { raw >= 0 }
    var index: Int { raw >= 0 ? Int(raw) : Int(~raw) }
}

/// A leaf of the tree: runs in list order, chained to the next leaf.
struct ListLeaf: Sendable {
    var runs: [ListRun] = []
    var parent: Int32 = -1           // index into `inners`, -1 for the root
    var next: Int32 = -1             // next leaf to the right, -1 at the end
    var visible = 0
    var total = 0
    /// The smallest `depth` of its runs (`UInt32.max` when it has none), while depths are known.
    var minDepth = UInt32.max
}

/// An inner node: children (all leaves or all inner nodes) and their counts.
struct ListInner: Sendable {
    var children: [NodeRef] = []
    var parent: Int32 = -1
    var visible = 0
    var total = 0
    /// The smallest `minDepth` of its children, while depths are known.
    var minDepth = UInt32.max
}

/// A position: run `run` of leaf `leaf`, element `offset` of that run.
/// `run == leaves[leaf].runs.count` (offset 0) is the end of that leaf.
struct ListCursor: Sendable {
    var leaf: Int
    var run: Int
    var offset: Int
}

/// One entry of the id index: the ids of an agent from `counter` up to the next
/// entry were placed in leaf `leaf` or, after splits, in a leaf to its right.
struct ListIndexEntry: Sendable {
    var counter: UInt32
    var leaf: Int32
}
