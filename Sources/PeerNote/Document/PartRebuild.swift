/// What an op reads and writes of a document's state (`DocState.apply`): the notebook's title,
/// the order of notes (the places `createNote` and `moveNote` insert), or one note (its
/// registers, tags and body; `createNote` makes it, `moveNote` writes its position). The state
/// of each part is a function of the ops that touch it, in the order they are applied, and of
/// nothing else.
enum StatePart: Hashable {
    case title, order, note(LocalID)

    /// Calls `body` with each part `op` touches; `firstID` is the id of the op's first unit (the
    /// note a `createNote` makes).
    static func forEach(of op: Op, firstID: LocalID, _ body: (StatePart) -> Void) {
        switch op.body {
        case .setNotebookTitle: body(.title)
        case .createNote: body(.order); body(.note(firstID))
        case .moveNote(let n, _, _, _): body(.order); body(.note(n))
        case .setNoteTitle(let n, _, _), .insertText(let n, _, _, _), .deleteText(let n, _, _), .addTag(let n, _),
             .removeTag(let n, _, _), .setPriority(let n, _, _), .deleteNote(let n, _), .restoreNote(let n, _):
            body(.note(n))
        case .unknown: break
        }
    }
}

/// A set of state parts (`StatePart`): the parts a merge rebuilds. One note, the usual case, is
/// tested without hashing.
struct StateParts: Sendable {
    private(set) var title = false
    private(set) var order = false
    private(set) var notes: Set<LocalID> = []
    /// The one note of `notes`, while it has exactly one.
    private var only: LocalID?

    init() {}

    init(_ parts: some Sequence<StatePart>) {
        for p in parts { insert(p) }
    }

    var isEmpty: Bool { !title && !order && notes.isEmpty }

    /// Adds `part`; returns whether it was not here yet.
    @discardableResult
    mutating func insert(_ part: StatePart) -> Bool {
        switch part {
        case .title:
            defer { title = true }
            return !title
        case .order:
            defer { order = true }
            return !order
        case .note(let n):
            let added = notes.insert(n).inserted
            only = notes.count == 1 ? n : nil
            return added
        }
    }

    @inline(__always) func contains(note n: LocalID) -> Bool {
        if let one = only { return one == n }
        return !notes.isEmpty && notes.contains(n)
    }

    func contains(_ part: StatePart) -> Bool {
        switch part {
        case .title: title
        case .order: order
        case .note(let n): contains(note: n)
        }
    }

    /// How `op` (first unit `firstID`) meets these parts: it touches none of them, only them,
    /// or both (a `createNote` or `moveNote` whose note is here and the order is not, or the
    /// other way round).
    func meets(_ op: Op, firstID: LocalID) -> Meeting {
        switch op.body {
        case .setNotebookTitle: return title ? .inside : .outside
        case .createNote: return Self.meeting(order, contains(note: firstID))
        case .moveNote(let n, _, _, _): return Self.meeting(order, contains(note: n))
        case .setNoteTitle(let n, _, _), .insertText(let n, _, _, _), .deleteText(let n, _, _), .addTag(let n, _),
             .removeTag(let n, _, _), .setPriority(let n, _, _), .deleteNote(let n, _), .restoreNote(let n, _):
            return contains(note: n) ? .inside : .outside
        case .unknown: return .outside
        }
    }

    enum Meeting { case outside, inside, across }

    private static func meeting(_ a: Bool, _ b: Bool) -> Meeting {
        a && b ? .inside : a || b ? .across : .outside
    }
}

/// Parts of a state (`StatePart`) built afresh from the ops that touch them, applied in the
/// canonical order: what `DocState.apply` makes of those parts from those ops, op by op. The
/// effects an op has on parts not rebuilt are left out (a `moveNote` of a note rebuilt here
/// writes its position, and its place in the order is integrated only when the order is
/// rebuilt too).
struct PartRebuild {
    let parts: StateParts
    var title = MVRegister<String>()
    var order = ListCRDT<LocalID>()
    /// The notes rebuilt, in the order their `createNote` ops were applied.
    private(set) var notes: [NoteState] = []
    private var slots: [LocalID: Int] = [:]
    /// Scan steps list integration may still take (`DocState.workBudget`).
    var workBudget: Int

    init(_ parts: StateParts, workBudget: Int) {
        self.parts = parts
        self.workBudget = workBudget
    }

    /// Applies `pieces` (ops or parts of ops that touch the parts, each with the change holding
    /// it, in canonical order: `OpLog.pieces(touching:limit:)`), joined as `DocState.apply(changes:of:)`
    /// joins them.
    mutating func apply(_ pieces: [OpLog.Piece], of log: OpLog) throws(ApplyFailure) {
        var joiner = JoinedPieces()
        let text = log.textView
        for piece in pieces {
            let id = log.localID(ofLV: piece.op.lv, change: piece.change)
            if let j = joiner.add(piece.op, id: id, change: piece.change) { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
        }
        if let j = joiner.flush() { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
    }

    /// Applies the ops of the changes `order` (in canonical order) that touch the parts, joined
    /// as `DocState.apply(changes:of:)` joins them: for parts that most changes touch, where
    /// cutting every op at its changes' boundaries (`OpLog.pieces(touching:limit:)`) costs more.
    mutating func apply(changes order: ChangeIndices, of log: OpLog) throws(ApplyFailure) {
        var pieces = Document.OpPieces(order, in: log)
        var joiner = JoinedPieces()
        let text = log.textView
        while let piece = pieces.next() {
            let id = log.localID(ofLV: piece.op.lv, change: piece.change)
            guard parts.meets(piece.op, firstID: id) != .outside else { continue }
            if let j = joiner.add(piece.op, id: id, change: piece.change) { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
        }
        if let j = joiner.flush() { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
    }

    /// Some of a log's ops, in canonical order: those of the changes of an order (cut where the
    /// order leaves the log's), or, when those changes are a stretch of the log in canonical
    /// order already, the ops at its local versions (no change looked up but for the ops applied).
    enum OpSource {
        case changes(ChangeIndices)
        case units(Range<Int>)
    }

    /// Applies the ops of `source` that touch the parts, as `apply(changes:of:)` does, but for
    /// the body ops of the notes `spared`: their inserts are left out, and their deletes too,
    /// each passed to `deleted` (its note, then the agent and counters of the elements it names)
    /// instead.
    mutating func apply(_ source: OpSource, of log: OpLog, sparingBodiesOf spared: StateParts,
                        deleted: (LocalID, UInt32, Range<UInt32>) -> Void) throws(ApplyFailure) {
        var joiner = JoinedPieces()
        let text = log.textView
        /// Whether `op` (the part of one that begins `skipped` units into it) was left out.
        func spares(_ op: Op, skipped: Int, length: Int) -> Bool {
            switch op.body {
            case .insertText(let n, _, _, _):
                return spared.contains(note: n)
            case .deleteText(let n, let target, let reversed):
                guard spared.contains(note: n) else { return false }
                let first = target.advanced(by: reversed ? -skipped : skipped)
                deleted(n, target.agent, Self.counters(deletedBy: first, length: length, reversed: reversed))
                return true
            default:
                return false
            }
        }
        switch source {
        case .changes(let order):
            var pieces = Document.OpPieces(order, in: log)
            while let piece = pieces.next() {
                if spares(piece.op, skipped: 0, length: piece.op.length) { continue }
                let id = log.localID(ofLV: piece.op.lv, change: piece.change)
                guard parts.meets(piece.op, firstID: id) != .outside else { continue }
                if let j = joiner.add(piece.op, id: id, change: piece.change) { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
            }
        case .units(let lvs):
            guard !lvs.isEmpty, !log.ops.isEmpty else { break }
            var i = log.opIndex(containingLV: lvs.lowerBound), ci = 0
            while i < log.ops.count {
                let op = log.ops[i]
                i += 1
                guard op.lv < lvs.upperBound else { break }
                let from = Swift.max(op.lv, lvs.lowerBound), to = Swift.min(op.lv + op.length, lvs.upperBound)
                if spares(op, skipped: from - op.lv, length: to - from) { continue }
                // The op's parts in each change it spans (as `OpLog.pieces(touching:limit:)` cuts them).
                ci = log.changeIndex(containingLV: from, from: ci)
                var lv = from
                while lv < to {
                    let pieceEnd = Swift.min(to, log.changes.lvEnd(ci))
                    if pieceEnd > lv {
                        let piece = log.slice(op, from: lv, to: pieceEnd, change: ci), id = log.localID(ofLV: lv, change: ci)
                        if parts.meets(piece, firstID: id) != .outside, let j = joiner.add(piece, id: id, change: ci) {
                            try apply(j.op, change: j.change, id: j.id, log: log, text: text)
                        }
                    }
                    lv = pieceEnd
                    if lv < to { ci += 1 }
                }
            }
        }
        if let j = joiner.flush() { try apply(j.op, change: j.change, id: j.id, log: log, text: text) }
    }

    /// The counters of the elements a `deleteText` of `length` units at `target` names (as
    /// `ListCRDT.delete` reads them), clamped to the counters that exist.
    static func counters(deletedBy target: LocalID, length: Int, reversed: Bool) -> Range<UInt32> {
        let first = reversed ? Int(target.counter) - (length - 1) : Int(target.counter)
        let lower = Swift.max(0, first), upper = Swift.min(Int(UInt32.max), first + length)
        return lower < upper ? UInt32(lower) ..< UInt32(upper) : 0 ..< 0
    }

    /// Puts `body` in place of the body of the rebuilt note `n`; false when no `createNote` of
    /// `n` was applied here.
    mutating func replaceBody(of n: LocalID, with body: ListCRDT<Unicode.Scalar>) -> Bool {
        guard let i = slots[n] else { return false }
        notes[i].body = body
        return true
    }

    /// (`text` is `log.textView`, made once for all the ops applied together.)
    private mutating func apply(_ op: Op, change ci: Int, id: LocalID, log: OpLog, text: LogTextView) throws(ApplyFailure) {
        let lamport = log.changes.lamport(ci) + UInt64(op.lv - log.changes.lvStart(ci))
        do throws(ApplyError) {
            try apply(op, id: id, lamport: lamport, replicas: log.replicas, text: text)
        } catch {
            throw ApplyFailure(error: error, change: ci)
        }
    }

    /// `DocState.apply(_:id:lamport:replicas:text:)` restricted to the parts rebuilt.
    private mutating func apply<Text: RandomAccessCollection<Unicode.Scalar>>(_ op: Op, id: LocalID, lamport: UInt64, replicas: [ReplicaID], text: Text) throws(ApplyError) where Text.Index == Int {
        let less = { (a: UInt32, b: UInt32) in replicas[Int(a)] < replicas[Int(b)] }
        switch op.body {
        case .setNotebookTitle(let value, let preds):
            if parts.title { title.write(id: id, lamport: lamport, replicas: replicas, value: value, preds: preds) }
        case .createNote(let left, let right, let created):
            let note = parts.contains(note: id)
            if note, slots[id] != nil { throw .noteExists(id) }
            if parts.order {
                try Self.lift { () throws(ListError) in
                    try order.integrate(id: id, originLeft: left, originRight: right, elements: CollectionOfOne(id), budget: &workBudget, replicaLess: less)
                }
            }
            if note {
                slots[id] = notes.count
                notes.append(NoteState(id: id, created: created, lamport: lamport))
            }
        case .moveNote(let n, let left, let right, let preds):
            let note = parts.contains(note: n)
            let i = note ? try index(of: n) : -1
            if parts.order {
                try Self.lift { () throws(ListError) in
                    try order.integrate(id: id, originLeft: left, originRight: right, elements: CollectionOfOne(n), budget: &workBudget, replicaLess: less)
                }
            }
            if note { notes[i].writePosition(id: id, lamport: lamport, replicas: replicas, preds: preds) }
        case .setNoteTitle(let n, let value, let preds):
            guard parts.contains(note: n) else { return }
            notes[try index(of: n)].title.write(id: id, lamport: lamport, replicas: replicas, value: value, preds: preds)
        case .setPriority(let n, let value, let preds):
            guard parts.contains(note: n) else { return }
            notes[try index(of: n)].writePriority(value, id: id, lamport: lamport, replicas: replicas, preds: preds)
        case .deleteNote(let n, let preds):
            guard parts.contains(note: n) else { return }
            notes[try index(of: n)].writeDeleted(true, id: id, lamport: lamport, replicas: replicas, preds: preds)
        case .restoreNote(let n, let preds):
            guard parts.contains(note: n) else { return }
            notes[try index(of: n)].writeDeleted(false, id: id, lamport: lamport, replicas: replicas, preds: preds)
        case .addTag(let n, let tag):
            guard parts.contains(note: n) else { return }
            notes[try index(of: n)].tags.insert(tag, id: id)
        case .removeTag(let n, let tag, let removes):
            guard parts.contains(note: n) else { return }
            notes[try index(of: n)].tags.remove(tag, removes: removes)
        case .insertText(let n, let left, let right, let start):
            guard parts.contains(note: n) else { return }
            let i = try index(of: n)
            try Self.lift { () throws(ListError) in
                try notes[i].body.integrate(id: id, originLeft: left, originRight: right, elements: text[start ..< start + op.length],
                                            budget: &workBudget, replicaLess: less)
            }
        case .deleteText(let n, let target, let reversed):
            guard parts.contains(note: n) else { return }
            let i = try index(of: n)
            try Self.lift { () throws(ListError) in
                try notes[i].body.delete(target: target, length: op.length, reversed: reversed)
            }
        case .unknown:
            break
        }
    }

    /// The note the last op edited and its place in `notes` (ops come in runs on one note).
    private var lastNote = (id: LocalID.none, index: -1)

    private mutating func index(of n: LocalID) throws(ApplyError) -> Int {
        if n == lastNote.id { return lastNote.index }
        guard let i = slots[n] else { throw .unknownNote(n) }
        lastNote = (n, i)
        return i
    }

    private static func lift(_ f: () throws(ListError) -> Void) throws(ApplyError) {
        do { try f() } catch {
            switch error {
            case .missingElement(let o): throw .unknownElement(o)
            case .tooMuchWork: throw .tooMuchWork
            }
        }
    }
}

extension OpLog {
    /// An op, or the part of one that lies in one change, and that change.
    struct Piece {
        var change: Int
        var op: Op
    }

    /// The ops that touch one of `parts`, cut at change boundaries, in canonical order (their
    /// changes' order, and the log's within a change). Classifies every stored op, applying
    /// none. (Not only those after a note's creation: a file's ops need only name ops earlier
    /// by Lamport timestamp, so a crafted op may precede, in the log, the creation of the note
    /// it edits.)
    /// Nil once more than `limit` pieces are found.
    /// - Complexity: O(m) for the m stored ops, plus O(p log p) for the p pieces found.
    func pieces(touching parts: StateParts, limit: Int) -> [Piece]? {
        guard !ops.isEmpty, !changes.isEmpty else { return [] }
        var found: [Piece] = []
        var ci = 0, sorted = true
        for i in ops.indices {
            let op = ops[i]
            var firstID = LocalID.none
            if case .createNote = op.body {
                ci = changeIndex(containingLV: op.lv, from: ci)
                firstID = localID(ofLV: op.lv, change: ci)
            }
            guard parts.meets(op, firstID: firstID) != .outside else { continue }
            ci = changeIndex(containingLV: op.lv, from: ci)
            let end = op.lv + op.length
            // An op lies in one change or across a run of consecutive ones.
            while true {
                let from = Swift.max(op.lv, changes.lvStart(ci)), to = Swift.min(end, changes.lvEnd(ci))
                if from < to {
                    if let last = found.last, last.change != ci, !canonicallyBefore(last.change, ci) { sorted = false }
                    found.append(Piece(change: ci, op: slice(op, from: from, to: to, change: ci)))
                    if found.count > limit { return nil }
                }
                guard to < end, ci + 1 < changes.count else { break }
                ci += 1
            }
        }
        if !sorted {
            // Stable: pieces of one change keep the log's order.
            found = found.enumerated().sorted {
                $0.element.change == $1.element.change ? $0.offset < $1.offset : canonicallyBefore($0.element.change, $1.element.change)
            }.map(\.element)
        }
        return found
    }
}

extension DocState {
    /// Applies the new changes `newChanges` of `log` (in canonical order; every change before
    /// them was applied in canonical order) when the earlier changes that come after the first
    /// of them in that order touch the parts `clashing` that new changes touch too: those parts
    /// are rebuilt alone, from the ops that touch them, in canonical order
    /// (`PartRebuild`), and the new changes' ops are applied to the other parts as they come in
    /// that order (see `OpLog.canonicalMerge`, which finds `clashing`). The result is the state
    /// of all of `log`'s changes in canonical order (`DocState.canonical`).
    ///
    /// The order of notes is one part (a list of places). When it is rebuilt, every note a new
    /// change creates or moves is rebuilt too, so that each new op is applied either whole to
    /// the rebuilt parts or whole to the state. When it is not, a new `createNote` or `moveNote`
    /// of a rebuilt note has its place integrated into the state's order here and its note
    /// effects (the note itself, its position) rebuilt.
    ///
    /// - Complexity: the ops touching the rebuilt parts, plus the new changes' ops, plus a
    ///   classification of the stored ops (`OpLog.pieces(touching:limit:)`).
    ///
    /// A long note (past the pieces' limit) that existed before the first new change is not
    /// rebuilt from its creation: its body starts from the one it had then
    /// (`PartRebuild.fromEarlierState`), so that a merge integrates into the note's body again
    /// only the ops since the copies parted, not its whole history (the ops before are still
    /// read, once). `piecesLimit` and `fromEarlierState` are for tests, which
    /// compare the ways.
    mutating func apply(newChanges: ChangeIndices, of log: OpLog, rebuilding clashing: StateParts,
                        piecesLimit: Int? = nil, fromEarlierState: Bool = true) throws(ApplyFailure) {
        // Nothing clashes: the new changes' ops go onto the state as they come in that order.
        guard !clashing.isEmpty else { return try apply(changes: newChanges, of: log) }
        var parts = clashing
        if parts.order {
            for ci in newChanges {
                let start = log.localID(ofLV: log.changes.lvStart(ci), change: ci), lvStart = log.changes.lvStart(ci)
                log.forEachOp(ofChange: ci) { op in
                    switch op.body {
                    case .createNote: parts.insert(.note(start.advanced(by: op.lv - lvStart)))
                    case .moveNote(let n, _, _, _): parts.insert(.note(n))
                    default: break
                    }
                }
            }
        }
        var rebuild = PartRebuild(parts, workBudget: workBudget)
        // Parts that many changes touch (one long note, typed in many changes) are rebuilt by one
        // pass over the log in canonical order instead: from the state before the first new
        // change where that state can be had, else from the start. The limit is low because the
        // search for pieces that ends at it is work that pass does again.
        if let pieces = log.pieces(touching: parts, limit: piecesLimit ?? Swift.max(64, log.changes.count / 16)) {
            try rebuild.apply(pieces, of: log)
        } else if fromEarlierState, let earlier = try PartRebuild.fromEarlierState(of: self, parts: parts, newChanges: newChanges, log: log) {
            rebuild = earlier
        } else {
            try rebuild.apply(changes: log.canonicalOrder(), of: log)
        }
        workBudget = rebuild.workBudget
        if parts.title { title = rebuild.title }
        if parts.order { order = rebuild.order }
        for note in rebuild.notes { putNote(note) }
        try apply(changes: newChanges, of: log, outside: parts)
    }
}

extension PartRebuild {
    /// The rebuild of `parts` that `DocState.apply(newChanges:of:rebuilding:)` needs, made from
    /// `state` (the state of the changes before the new ones, in canonical order) instead of from
    /// every op: nil when nothing would be gained or the earlier state cannot be had this way.
    ///
    /// Let F be the first new change in canonical order, P the changes before F in that order
    /// (all of them earlier changes), and T the earlier changes after F. A note created in P had,
    /// once P was applied, the elements of its body that P's ops inserted, in the order they
    /// have in `state` (elements never move), each deleted when an op of P deleted it: that is
    /// `ListCRDT.earlier(below:reviving:)` of its body in `state`, where P's elements are those
    /// below each agent's first change in T or later (when each agent's changes in P precede its
    /// others by seq; else nil), and the elements revived are those T's ops deleted and P's did
    /// not. The rebuild then applies P's other ops on the parts (registers, tags, the order and
    /// the title), puts those bodies in, and applies every op from F on in canonical order.
    /// - Complexity: O(p + t) for the ops of P and of the changes from F on, plus O(r) for the
    ///   runs of the bodies taken from `state`; the lists' integration only for the ops from F on.
    static func fromEarlierState(of state: DocState, parts: StateParts, newChanges: ChangeIndices, log: OpLog) throws(ApplyFailure) -> PartRebuild? {
        guard let first = newChanges.first else { return nil }
        let order = log.canonicalOrder()
        // F's place in the canonical order (which is sorted by it).
        var lo = 0, hi = order.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if log.canonicallyBefore(order[mid], first) { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0, lo < order.count, order[lo] == first else { return nil }
        let after = order.at(lo ..< order.count)
        // Each agent's changes from F on must be its last ones by seq; P's elements of agent a
        // are then those below the counter where the first of them starts.
        let agents = log.replicas.count
        var counts = [Int](repeating: 0, count: agents), firstSeq = [UInt32](repeating: .max, count: agents)
        for c in after {
            let a = Int(log.changes.agent(c))
            counts[a] += 1
            firstSeq[a] = Swift.min(firstSeq[a], log.changes.seq(c))
        }
        var limits = [UInt32](repeating: .max, count: agents)
        for a in 0 ..< agents where counts[a] > 0 {
            guard log.changes.changeCount(agent: UInt32(a)) - Int(firstSeq[a]) + 1 == counts[a],
                  let c = log.changes.index(agent: UInt32(a), seq: firstSeq[a]) else { return nil }
            limits[a] = log.changes.counterStart(c)
        }
        // The notes whose bodies start from `state`'s: those P created.
        var spared = StateParts()
        for n in parts.notes where Int(n.agent) < agents && n.counter < limits[Int(n.agent)] && state.slot(of: n) != nil {
            spared.insert(.note(n))
        }
        guard !spared.isEmpty else { return nil }
        // P's and T's ops. When the earlier changes are in canonical order in the log (a loaded
        // compact file, local edits since), P's are those before T's in it, and the new
        // changes' come after both: each is a stretch of local versions.
        var firstNew = first
        for c in newChanges where c < firstNew { firstNew = c }
        let earlierP: OpSource, earlierT: OpSource
        if log.firstOutOfCanonicalOrder(below: firstNew) == nil {
            let tStart = log.changes.lvStart(lo)
            earlierP = .units(0 ..< tStart)
            earlierT = .units(tStart ..< log.changes.lvStart(firstNew))
        } else {
            earlierP = .changes(order.at(0 ..< lo))
            earlierT = .changes(ChangeIndices(after.filter { $0 < firstNew }))
        }
        // The elements of those notes that T's ops deleted.
        var deletedLater: [LocalID: IDSpans] = [:]
        var scan = PartRebuild(StateParts(), workBudget: 0)
        try scan.apply(earlierT, of: log, sparingBodiesOf: spared) { n, agent, r in
            guard Int(agent) < agents, r.lowerBound < limits[Int(agent)] else { return }
            deletedLater[n, default: IDSpans()].insert(agent: agent, r.lowerBound ..< Swift.min(r.upperBound, limits[Int(agent)]))
        }
        for n in deletedLater.keys { deletedLater[n]?.normalize() }
        // P's ops: all but the spared bodies' applied; the spared bodies' deletes of elements T
        // deleted too kept, so that those stay deleted.
        var rebuild = PartRebuild(parts, workBudget: state.workBudget)
        var deletedEarlier: [LocalID: IDSpans] = [:]
        try rebuild.apply(earlierP, of: log, sparingBodiesOf: spared) { n, agent, r in
            guard let later = deletedLater[n], later.overlaps(agent: agent, r) else { return }
            deletedEarlier[n, default: IDSpans()].insert(agent: agent, r)
        }
        for n in spared.notes {
            guard let old = state.note(n) else { return nil }
            var revived = deletedLater[n] ?? IDSpans()
            if var earlier = deletedEarlier[n] {
                earlier.normalize()
                revived = revived.subtracting(earlier)
            }
            guard rebuild.replaceBody(of: n, with: old.body.earlier(below: limits, reviving: revived)) else { return nil }
        }
        try rebuild.apply(changes: after, of: log)
        return rebuild
    }
}
