/// The canonical order of a history, and the state it defines.
///
/// A document's state is the ops of its changes applied in the canonical order: changes sorted
/// by (Lamport timestamp, replica id), each change's ops in order (peernote(5), MERGE SEMANTICS).
/// The order is a function of the set of changes alone, and every op names only ops that are
/// earlier by Lamport timestamp (checked as a file is read), so applying it never fails on a
/// history that loaded, and two copies holding the same changes hold the same state, whatever
/// their ops say: an insert whose origins are not adjacent in its author's copy (no honest
/// writer makes one, but a crafted file can hold it) lands where the canonical order puts it in
/// every copy. For a history whose every op is consistent with its causal past, every causal
/// order gives that same state (the list CRDT's convergence), so a copy applies its changes in
/// the order it has them as long as that order is the canonical one: a load of a compact file,
/// local edits (a new change follows every change its copy holds), a merge that brings only
/// changes that follow every change the copy had. Otherwise a merge rebuilds, in the canonical
/// order, the parts of the state whose ops it would have to interleave
/// (`DocState.apply(newChanges:of:rebuilding:)`), and a load replays its changes in that order
/// (`DocState.canonical(of:workBudget:)`).
extension OpLog {
    /// Whether change `x` comes before change `y` in the canonical order.
    @inline(__always) func canonicallyBefore(_ x: Int, _ y: Int) -> Bool {
        let lx = changes.lamport(x), ly = changes.lamport(y)
        return lx != ly ? lx < ly : replicas[Int(changes.agent(x))] < replicas[Int(changes.agent(y))]
    }

    /// The first change, from `start` on and below `end` (all of them when nil), that does not
    /// come after the change before it in the canonical order; nil when changes
    /// `start - 1 ..< end` are in canonical order. A run of changes (one replica's, each on the
    /// one before) is in order already, so only the changes that start runs are compared: O(runs).
    func firstOutOfCanonicalOrder(from start: Int = 1, below end: Int? = nil) -> Int? {
        var i = Swift.max(start, 1)
        let end = Swift.min(end ?? changes.count, changes.count)
        while i < end {
            if !canonicallyBefore(i - 1, i) { return i }
            i = Swift.max(changes.runEnd(of: i), i + 1)
        }
        return nil
    }

    /// Every change in the canonical order.
    /// - Complexity: O(runs) when the log is in that order, O(n log n) otherwise.
    func canonicalOrder() -> ChangeIndices {
        ChangeIndices.sorted(count: changes.count, sortedEnd: { changes.runEnd(of: $0) }, by: canonicallyBefore)
    }

    /// The head that comes last in the canonical order (it is last among all changes: a change
    /// after it would have a larger Lamport timestamp, so nothing can depend on it), if any.
    var canonicallyLastHead: Int? {
        heads.max { canonicallyBefore($0, $1) }
    }
}

extension DocState {
    /// The state `log`'s changes give when applied in the canonical order, within `workBudget`
    /// scan steps of list integration. Consecutive pieces that continue each other (a typing run
    /// over many changes) are applied as one op, as loading applies them.
    static func canonical(of log: OpLog, workBudget: Int) throws(ApplyFailure) -> DocState {
        try canonical(of: log, order: log.canonicalOrder(), workBudget: workBudget)
    }

    /// `canonical(of:workBudget:)` for the changes `order` (in canonical order, causally closed).
    static func canonical(of log: OpLog, order: ChangeIndices, workBudget: Int) throws(ApplyFailure) -> DocState {
        var state = DocState()
        state.workBudget = workBudget
        try state.apply(changes: order, of: log)
        return state
    }

    /// Applies the ops of the changes `order` of `log`, in that order, to this state.
    /// Consecutive pieces that continue each other are applied as one op.
    mutating func apply(changes order: ChangeIndices, of log: OpLog) throws(ApplyFailure) {
        var pieces = Document.OpPieces(order, in: log)
        var joiner = JoinedPieces()
        let text = log.textView
        while let piece = pieces.next() {
            let id = log.localID(ofLV: piece.op.lv, change: piece.change)
            if let j = joiner.add(piece.op, id: id, change: piece.change) { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
        }
        if let j = joiner.flush() { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
    }

    /// `apply(changes:of:)` for the ops outside the parts `rebuilt` (which a merge rebuilt
    /// apart: `apply(newChanges:of:rebuilding:)`): an op wholly inside them is skipped; a
    /// `createNote` or `moveNote` whose note is inside them and the order is not has its place
    /// integrated into the order only (the note itself, or its position, was rebuilt).
    mutating func apply(changes order: ChangeIndices, of log: OpLog, outside rebuilt: StateParts) throws(ApplyFailure) {
        var pieces = Document.OpPieces(order, in: log)
        var joiner = JoinedPieces()
        let text = log.textView
        while let piece = pieces.next() {
            let id = log.localID(ofLV: piece.op.lv, change: piece.change)
            switch rebuilt.meets(piece.op, firstID: id) {
            case .inside:
                continue
            case .across:
                if let j = joiner.flush() { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
                try integratePlace(piece.op, change: piece.change, id: id, log: log)
                continue
            case .outside:
                break
            }
            if let j = joiner.add(piece.op, id: id, change: piece.change) { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
        }
        if let j = joiner.flush() { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
    }

    /// The place a `createNote` or `moveNote` (first unit `id`, in change `ci`) inserts into the
    /// order of notes, integrated as `apply` integrates it; nothing else of the op.
    private mutating func integratePlace(_ op: Op, change ci: Int, id: LocalID, log: OpLog) throws(ApplyFailure) {
        let element: LocalID, left: LocalID, right: LocalID
        switch op.body {
        case .createNote(let l, let r, _): (element, left, right) = (id, l, r)
        case .moveNote(let n, let l, let r, _): (element, left, right) = (n, l, r)
        default: return
        }
        let replicas = log.replicas
        do throws(ListError) {
            try order.integrate(id: id, originLeft: left, originRight: right, elements: CollectionOfOne(element), budget: &workBudget,
                                replicaLess: { replicas[Int($0)] < replicas[Int($1)] })
        } catch {
            switch error {
            case .missingElement(let o): throw ApplyFailure(error: .unknownElement(o), change: ci)
            case .tooMuchWork: throw ApplyFailure(error: .tooMuchWork, change: ci)
            }
        }
    }

    /// Applies `op`, whose first unit is `id` in change `ci` of `log`.
    /// (`text` is `log.textView`, made once for all the ops applied together.)
    private mutating func apply(_ op: Op, change ci: Int, id: LocalID, log: OpLog, text: LogTextView) throws(ApplyFailure) {
        let lamport = log.changes.lamport(ci) + UInt64(op.lv - log.changes.lvStart(ci))
        do throws(ApplyError) {
            try apply(op, id: id, lamport: lamport, replicas: log.replicas, text: text)
        } catch {
            throw ApplyFailure(error: error, change: ci)
        }
    }
}

/// Op pieces applied in order, consecutive ones that continue each other (a typing run over
/// many changes) joined into one op first, as loading joins them: `add` each piece, apply what
/// it returns, then apply what `flush` returns.
struct JoinedPieces {
    private var pending: Op?
    private var pendingID = LocalID.none, pendingChange = 0

    /// Takes the piece `op` (first unit `id`, in change `change`); returns the joined op before
    /// it, to apply now, when `op` does not continue that one.
    mutating func add(_ op: Op, id: LocalID, change: Int) -> (op: Op, id: LocalID, change: Int)? {
        if let p = pending, let joined = OpLog.merge(p, firstID: pendingID, op, firstID: id) {
            pending = joined
            return nil
        }
        let done = pending.map { (op: $0, id: pendingID, change: pendingChange) }
        (pending, pendingID, pendingChange) = (op, id, change)
        return done
    }

    /// The joined op not applied yet, if any; nothing is pending after.
    mutating func flush() -> (op: Op, id: LocalID, change: Int)? {
        defer { pending = nil }
        return pending.map { (op: $0, id: pendingID, change: pendingChange) }
    }
}
