/// The sibling index's entry for one element L of a `ListCRDT`: L's children by right origin,
/// and the forest their spans make.
struct Siblings: Sendable {
    /// For each right origin, L's children that have it, in list order.
    var byRight: [LocalID: SiblingList] = [:]
    var spans = SpanForest()
}

/// The children of one element L of a `ListCRDT` as a forest by their spans. A child's span runs
/// from it to its right origin; the spans of L's children are nested or disjoint (the sibling
/// index relies on it), so each child has a parent: the innermost child whose span holds it
/// (`LocalID.none` when none does). An insert among L's children goes right after its parent
/// (the children between that parent and the insert's place end before its right origin), and
/// its span then holds a prefix of its parent's children: they become its children, and it
/// takes their place (`wrap`). So finding the place of an insert in front of a long chain of
/// characters typed backwards, each the next one's right origin, takes one lookup, not a step a
/// character.
///
/// Invariant: every child is in exactly one sequence, that of its parent, in list order.
/// Sequences are stored last child first, so that a prefix is the end of an array.
/// - Complexity: `parent(of:)` O(1); `wrap` moves the smaller of the prefix and the rest of
///   the sequence, O(log n) amortised over n children.
struct SpanForest: Sendable {
    /// Which of a parent's children (in list order) a new child's span holds.
    enum Prefix: Sendable {
        case nothing
        case all
        /// Up to this child, included.
        case through(LocalID)
        /// Up to this child, excluded.
        case before(LocalID)
    }

    /// One parent's children, last first: child k (counting from `offset`) is `members[k - offset]`;
    /// those before `start` belong to another sequence now.
    private struct Sequence: Sendable {
        var parent: LocalID
        var offset: Int
        var start: Int
        var members: [LocalID]
        var end: Int { offset + members.count }
    }

    private struct Place: Sendable {
        var sequence: Int32
        var index: Int32
    }

    private var sequences: [Sequence] = []
    /// Each parent's sequence (`LocalID.none`: the children no span holds).
    private var sequenceOf: [LocalID: Int] = [:]
    private var place: [LocalID: Place] = [:]

    init() {}

    /// The forest of `listed`: every child with its parent, in list order.
    init(listing listed: [(child: LocalID, parent: LocalID)]) {
        var byParent: [LocalID: [LocalID]] = [:]
        var parents: [LocalID] = []
        for (child, parent) in listed {
            if byParent[parent] == nil { parents.append(parent) }
            byParent[parent, default: []].append(child)
        }
        for parent in parents {
            let members = Array((byParent[parent] ?? []).reversed())
            let s = sequences.count
            sequences.append(Sequence(parent: parent, offset: 0, start: 0, members: members))
            sequenceOf[parent] = s
            for (k, m) in members.enumerated() { place[m] = Place(sequence: Int32(s), index: Int32(k)) }
        }
    }

    /// The parent of `child`, or nil when it is not in the forest.
    func parent(of child: LocalID) -> LocalID? {
        place[child].map { sequences[Int($0.sequence)].parent }
    }

    /// Adds `child`, whose parent is `parent` and whose span holds `prefix` of `parent`'s
    /// children: they become its children, and it takes their place. False, changing nothing,
    /// when a child named is not among `parent`'s children.
    mutating func wrap(under parent: LocalID, _ prefix: Prefix, adding child: LocalID) -> Bool {
        guard place[child] == nil else { return false }
        guard let s = sequenceOf[parent] else {
            switch prefix {
            case .nothing, .all: break
            case .through, .before: return false
            }
            sequenceOf[parent] = sequences.count
            place[child] = Place(sequence: Int32(sequences.count), index: 0)
            sequences.append(Sequence(parent: parent, offset: 0, start: 0, members: [child]))
            return true
        }
        let cut: Int
        switch prefix {
        case .nothing: cut = sequences[s].end
        case .all: cut = sequences[s].start
        case .through(let m), .before(let m):
            guard let pm = place[m], Int(pm.sequence) == s else { return false }
            if case .through = prefix { cut = Int(pm.index) } else { cut = Int(pm.index) + 1 }
        }
        let held = sequences[s].end - cut, rest = cut - sequences[s].start
        if held == 0 {
            place[child] = Place(sequence: Int32(s), index: Int32(sequences[s].end))
            sequences[s].members.append(child)
        } else if held <= rest {
            // The prefix moves to a new sequence, the child's.
            let moved = Array(sequences[s].members[(cut - sequences[s].offset)...])
            let t = sequences.count
            for (k, m) in moved.enumerated() { place[m] = Place(sequence: Int32(t), index: Int32(k)) }
            sequences.append(Sequence(parent: child, offset: 0, start: 0, members: moved))
            sequenceOf[child] = t
            sequences[s].members.removeLast(held)
            place[child] = Place(sequence: Int32(s), index: Int32(sequences[s].end))
            sequences[s].members.append(child)
        } else {
            // The rest moves to a new sequence, the parent's, keeping its indices; this one,
            // holding the prefix, becomes the child's.
            let old = sequences[s]
            var kept = Array(old.members[(old.start - old.offset) ..< (cut - old.offset)])
            let t = sequences.count
            for m in kept { place[m]?.sequence = Int32(t) }
            kept.append(child)
            place[child] = Place(sequence: Int32(t), index: Int32(cut))
            sequences.append(Sequence(parent: parent, offset: old.start, start: old.start, members: kept))
            sequenceOf[parent] = t
            sequences[s].parent = child
            sequences[s].start = cut
            sequenceOf[child] = s
        }
        return true
    }
}

/// The children of one element of a `ListCRDT` that share a right origin, in list order (their
/// replicas never decrease along it), in chunks of at most 2 × `chunkSize`, so that inserting
/// one anywhere moves O(chunkSize + m / chunkSize) ids, not O(m) (thousands of replicas
/// inserting at one place arrive in descending replica order in a file, each going first).
struct SiblingList: Sendable {
    /// A place in the list: before member `offset` of chunk `chunk` (`chunk == chunks.count`: the end).
    struct Position: Sendable {
        var chunk: Int
        var offset: Int
        static let start = Position(chunk: 0, offset: 0)
    }

    private var chunks: [[LocalID]] = []
    private static var chunkSize: Int { 256 }

    var first: LocalID? { chunks.first?.first }
    var last: LocalID? { chunks.last?.last }

    /// The place of the first member for which `isAfter` holds (it holds for every member after
    /// one for which it holds), or the end; by binary search.
    func firstPosition(where isAfter: (LocalID) -> Bool) -> Position {
        var lo = 0, hi = chunks.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if let last = chunks[mid].last, isAfter(last) { hi = mid } else { lo = mid + 1 }
        }
        guard lo < chunks.count else { return Position(chunk: chunks.count, offset: 0) }
        let chunk = chunks[lo]
        var a = 0, b = chunk.count
        while a < b {
            let mid = (a + b) / 2
            if isAfter(chunk[mid]) { b = mid } else { a = mid + 1 }
        }
        return Position(chunk: lo, offset: a)
    }

    /// The member just before `p`, if any.
    func member(before p: Position) -> LocalID? {
        if p.offset > 0 { return chunks[p.chunk][p.offset - 1] }
        return p.chunk > 0 ? chunks[p.chunk - 1].last : nil
    }

    mutating func insert(_ id: LocalID, at p: Position) {
        guard !chunks.isEmpty else { chunks = [[id]]; return }
        var c = p.chunk, offset = p.offset
        if c >= chunks.count { c = chunks.count - 1; offset = chunks[c].count }
        chunks[c].insert(id, at: offset)
        if chunks[c].count > 2 * Self.chunkSize {
            let rest = Array(chunks[c][Self.chunkSize...])
            chunks[c].removeSubrange(Self.chunkSize...)
            chunks.insert(rest, at: c + 1)
        }
    }

    mutating func append(_ id: LocalID) { insert(id, at: Position(chunk: chunks.count, offset: 0)) }
}
