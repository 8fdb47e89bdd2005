#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Verifies blocks and applies them to an op log and a state: the work of `Document.load`,
/// done on plain values (not through the document's properties) so that it stays fast for
/// logs of millions of changes.
struct BlockReplayer {
    var log = OpLog()
    var state = DocState()
    let genesis: ChangeID
    /// Whether `replay(_:)` keeps `beforeDisorder`, for a reader that replays canonically after.
    var keepsStateBeforeDisorder = false
    /// The state before the first appended block whose changes leave the canonical order, that
    /// block's first change, and the heads of the changes before it (kept by `replay(_:)`, used
    /// by `replayCanonically`).
    private var beforeDisorder: (state: DocState, firstChange: Int, heads: [Int])?

    init(genesis: ChangeID) {
        self.genesis = genesis
    }

    /// Verifies and applies one block's changes, in order.
    mutating func replay(_ block: WireBlock) throws(PeerNoteError) {
        // Replayed into locals moved out of `self` (unique, so nothing is copied): reading a
        // stored property's members through `self` in a loop copied the whole log per op.
        var log = self.log, state = self.state
        self.log = OpLog()
        self.state = DocState()
        defer { self.log = log; self.state = state }
        guard keepsStateBeforeDisorder, beforeDisorder == nil, log.changes.count > 0 else {
            try Self.replay(block, genesis: genesis, log: &log, state: &state)
            return
        }
        var kept: (state: DocState, firstChange: Int, heads: [Int])?
        let heads = log.heads
        try Self.replay(block, genesis: genesis, log: &log, state: &state) { log, state, firstChange in
            // Kept only before a block out of the canonical order: the copy shares the state's
            // storage, which the block's ops then copy where they change it.
            if log.firstOutOfCanonicalOrder(from: firstChange) != nil { kept = (state, firstChange, heads) }
        }
        beforeDisorder = kept
    }

    /// `replay(block)` for the file's base block, on two threads: another appends the changes
    /// to the log and verifies them, while this one applies the block's ops to the state
    /// (`DocState.applyBase`), which it can do from the block alone, since a base block's replica
    /// indices are the log's agents and its ids follow from the changes' lengths. The result is
    /// what `replay(block)` gives: the same ops applied in the same order, joined as the log
    /// joins them (stored ops that continue each other), so with the same work and errors.
    /// The log's errors come first, as they would; then the state's, named as `replay` names them.
    mutating func replayBase(_ block: WireBlock) throws(PeerNoteError) {
        precondition(log.changes.count == 0 && block.offset == 0, "a base block is replayed into an empty log")
        let budget = state.workBudget, bodiesFromStructures = state.bodiesFromStructures
        let genesis = genesis
        // A file the log refuses is refused at once: the state's half, which may take up to the
        // whole work budget on a hostile file, stops when told so.
        // (A flag read without a system call: a semaphore's `wait(timeout: .now())` is a timed
        // futex wait of about 50 µs, and the state's half asks once a run of changes.)
        let refused = StopFlag()
        // The state here, the log on the other thread: the log is a few large arrays, the
        // list many small blocks, which then stay in this thread's malloc arena.
        let (applied, logged) = Concurrently.run({ () -> DocState.BaseApplication in
            DocState.applyBase(block, workBudget: budget, bodiesFromStructures: bodiesFromStructures, stop: { refused.isRaised })
        }, alongside: { () -> LogResult in
            var log = OpLog(), state = DocState()
            do throws(PeerNoteError) {
                try Self.replay(block, genesis: genesis, log: &log, state: &state, applying: false)
                return LogResult(log: log, error: nil)
            } catch {
                refused.raise()
                return LogResult(log: log, error: error)
            }
        })
        try finishBase(block, applied: applied, logged: logged, workBudget: budget, bodiesFromStructures: bodiesFromStructures)
    }

    /// Compressed bytes from which each of a base block's state section and columns makes
    /// reading and replaying the block in one step on two threads pay (`replayBase(_:totals:)`,
    /// `Document.load`). Each half then decodes and replays what it inflates, many times the work
    /// of inflating it (`WireCodec.concurrentInflateThreshold`, for inflating alone, is 16 KiB):
    /// 4 KiB, about 1,000 notes of a few hundred characters, is a millisecond or more a half.
    /// At 2,000 notes a `pnmerge merge -o` took 18.4 ms against 21.0 with the threshold at 16 KiB.
    static let oneStepFrom = 1 << 12

    /// `WireCodec.decodePayload` and `replayBase` of a large base block with a state section
    /// (`WireCodec.PayloadHalves`), arranged so that neither thread waits for what it does not
    /// need: this one decodes the columns, then applies the ops to the state; the other reads
    /// the state section, then appends the changes to the log as soon as this thread has
    /// decoded them (the log needs the columns only). Returns the block as `decodePayload` gives
    /// it, with `totals` counting it, and leaves the log and state as `replayBase` does, or
    /// returns the error that replay stopped at (the log's first, then the state's), for the
    /// caller to throw after any error of the blocks it reads after this one. Nil when a half
    /// does not read or the two disagree (the log and state are then as they were): the caller
    /// reads the block again one step after the other, which reports why. Throws the block's
    /// own error, which comes before all of those.
    mutating func replayBase(_ halves: WireCodec.PayloadHalves,
                             totals: inout WireCodec.Totals) throws(PeerNoteError) -> (block: WireBlock, error: PeerNoteError?)? {
        precondition(log.changes.count == 0 && halves.header.offset == 0, "a base block is replayed into an empty log")
        let budget = state.workBudget, bodiesFromStructures = state.bodiesFromStructures
        let genesis = genesis, structures = halves.storesStructures
        // Raised when the log or the state section refuses the file: the state's half stops.
        let refused = StopFlag()
        typealias Columns = (block: WireBlock, predecessors: Int)
        let ((columns, applied), (section, logged)) = Concurrently.run(relaying: WireBlock.self, { (relay: Relay<WireBlock>) -> (Columns?, DocState.BaseApplication?) in
            guard let columns = halves.decodeColumns() else { return (nil, nil) }
            relay.send(columns.block)
            let applied = DocState.applyBase(columns.block, workBudget: budget, bodiesFromStructures: bodiesFromStructures, stop: { refused.isRaised })
            return (columns, applied)
        }, alongside: { (relay: Relay<WireBlock>) -> (Result<WireState?, FormatError>, LogResult?) in
            let section = halves.readState()
            // A section that does not read, or that `join` refuses, ends both halves.
            guard case .success(let read?) = section, read.storesStructures == structures, let block = relay.receive() else {
                refused.raise()
                return (section, nil)
            }
            var log = OpLog(), state = DocState()
            do throws(PeerNoteError) {
                try Self.replay(block, genesis: genesis, log: &log, state: &state, applying: false)
                return (section, LogResult(log: log, error: nil))
            } catch {
                refused.raise()
                return (section, LogResult(log: log, error: error))
            }
        })
        let block: WireBlock?
        do throws(FormatError) { block = try halves.join(columns, section, totals: &totals) } catch { throw error.documentError }
        guard let block, let applied, let logged else { return nil }
        do throws(PeerNoteError) {
            try finishBase(block, applied: applied, logged: logged, workBudget: budget, bodiesFromStructures: bodiesFromStructures)
        } catch {
            return (block, error)
        }
        return (block, nil)
    }

    /// Takes the log and the state that `replayBase` made on its two threads, or throws the
    /// error that stopped them: the log's first.
    private mutating func finishBase(_ block: WireBlock, applied: DocState.BaseApplication, logged: LogResult, workBudget budget: Int,
                                     bodiesFromStructures: Bool) throws(PeerNoteError) {
        let log = logged.log
        self.log = log
        if let error = logged.error { throw error }
        switch applied {
        case .applied(let state):
            self.state = state
        case .failed(let failure):
            throw Self.applyError(failure, block: block, firstChange: 0, log: log)
        case .inconsistent:
            // The log accepted what the walk over the block could not follow (timestamps past 32
            // bits; nothing else is expected, both read the same changes and ops): applied from
            // the log instead, as `replay` does (with placeholders for the text, as it has).
            self.log.writeUnwrittenText()
            var state = DocState()
            state.workBudget = budget
            state.bodiesFromStructures = bodiesFromStructures
            do throws(ApplyFailure) { try state.applyOps(of: self.log, from: 0, firstChange: 0) } catch {
                throw Self.applyError(error, block: block, firstChange: 0, log: log)
            }
            self.state = state
        }
    }

    /// The log `replayBase` built on the other thread, and the error that stopped it, if any.
    private struct LogResult: Sendable {
        var log: OpLog
        var error: PeerNoteError?
    }

    /// Replaces the state with the one the log's changes give in the canonical order (the rows
    /// of a loaded log are its changes' indices).
    /// An error names the offset `blockOffset(row)` gives: that of the block holding the row.
    ///
    /// When the changes before the first appended block out of that order are in it, the state
    /// before that block (`beforeDisorder`) is the canonical order's after them, and the later
    /// changes are applied to it as a merge applies the changes it takes in
    /// (`OpLog.canonicalMerge`: only the parts they share with the earlier changes they precede
    /// are rebuilt), within what is left of `workBudget` after those earlier changes. The result
    /// is the same state (`DocState.canonical`), without applying the whole history again: a
    /// file that a merge in place, a sync or the git merge driver appended concurrent changes to
    /// is read on every load until a compact save. Returns whether it started from that state.
    @discardableResult
    mutating func replayCanonically(workBudget: Int, blockOffset: (Int) -> Int) throws(PeerNoteError) -> Bool {
        let kept = beforeDisorder
        beforeDisorder = nil
        do throws(ApplyFailure) {
            if let (before, first, heads) = kept, let disorder = log.firstOutOfCanonicalOrder(), disorder >= first {
                // Its budget is what the replay in row order, which started with `workBudget`, left
                // after the changes before `first`: a canonical replay spends as much on them, in
                // the same order.
                var state = before
                let (order, clashing) = log.canonicalMerge(from: first, startLV: log.changes.lvStart(first), headsBefore: heads)
                try state.apply(newChanges: order, of: log, rebuilding: clashing)
                self.state = state
                return true
            } else {
                state = try DocState.canonical(of: log, workBudget: workBudget)
                return false
            }
        } catch {
            throw .invalidDocument(offset: blockOffset(error.change), message: "change at row \(error.change): change \(log.changeID(error.change)): \(error.error.description(in: log))")
        }
    }

    private static func applyError(_ error: ApplyFailure, block: WireBlock, firstChange: Int, log: OpLog) -> PeerNoteError {
        let row = block.firstRow + (error.change - firstChange)
        return .invalidDocument(offset: block.offset, message: "change at row \(row): change \(log.changeID(error.change)): \(error.error.description(in: log))")
    }

    /// `willApply(log, state, firstChange)` is called once the block's changes have joined the
    /// log (from `firstChange` on), before their ops are applied to the state.
    private static func replay(_ block: WireBlock, genesis: ChangeID, log: inout OpLog, state: inout DocState, applying: Bool = true,
                               willApply: (OpLog, DocState, Int) -> Void = { _, _, _ in }) throws(PeerNoteError) {
        let agents = block.replicas.map { log.agent(for: $0) }
        let mapAgent: (LocalID) -> LocalID = { id in id.isNone || id.isUnstated ? id : LocalID(agent: agents[Int(id.agent)], counter: id.counter) }
        let startLV = log.lvCount
        // A base block into an empty log whose agents are the block's replica indices: the log
        // takes the block's ops array itself when its appends give the same ops, as a writer's
        // log gives them (`OpLog.beginAdoptingOps`), instead of holding a copy beside it.
        let adopting = log.ops.isEmpty && startLV == 0 && agents.elementsEqual(0 ..< UInt32(agents.count))
        // A block whose text its state section holds, replayed into a log with no text: its
        // inserts append no placeholders (the log takes its text from the notes afterwards:
        // `fillText`), and applied here, they integrate placeholders counted, not stored
        // (`DocState.applyOps`), so that the bodies can read their text where the section holds it.
        if block.placeholderCount != nil && log.textCount == 0 { log.beginUnwrittenText() }
        log.reserve(changes: block.changes.count, ops: adopting ? 0 : block.ops.count, text: block.textCount)
        if adopting { log.beginAdoptingOps(block.ops) }
        // On every way out: a log is never left holding only its last op.
        defer { log.endAdoptingOps() }
        // The block's authors and messages, interned once (changes then refer to them by index).
        let stringMap = block.strings.map { log.internString($0) }
        let firstChange = log.changes.count
        var opIndex = 0
        var used = 0              // units of block.ops[opIndex] already taken
        var opFirstID = LocalID.none
        var next = 0              // the next change not yet appended (a stretch appends several)
        // Nothing here captures `block`: a capture would copy the whole block for every op.
        let blockOffset = block.offset
        let ops = block.ops, changes = block.changes
        // A block read without its text (`WireBlock.placeholderCount`: the state section holds it)
        // has its inserts' units integrated as placeholders from `blockText`, as long as the
        // longest insert, each insert read from position 0; the log leaves their text unwritten
        // or holds placeholders for it, and `fillText` (which lets the log read it in the notes'
        // arenas) or `buildBodies` (which writes it in) completes it afterwards.
        let placeholders = block.placeholderCount != nil
        let blockText = placeholders ? Self.placeholders(for: ops) : block.text
        func fail(_ row: Int, _ message: String) -> PeerNoteError {
            .invalidDocument(offset: blockOffset, message: "change at row \(row): \(message)")
        }
        while next < changes.count {
            let i = next
            next = i + 1
            let c = changes[i]
            let row = block.firstRow + i
            let agent = agents[c.replica]
            // Typing: changes that continue the one before them (same replica, next seq, that change
            // their only dependency, same time, author and message, no extra fields) and whose
            // units continue the insert op being read. Every check below holds by construction
            // then (the seq, the Lamport order, the op's ids; the op counters' room is checked by
            // the log), so the longest such stretch is appended at once.
            if used > 0, i > 0, case .insertText(_, _, _, let s) = ops[opIndex].body {
                // The list stores a change that continues the one before in its run (the rule above).
                let (j, units) = changes.continuingStretch(from: i, room: ops[opIndex].length - used)
                if j > i, log.appendTypingChanges(agent: agent, time: c.time, author: stringMap[c.author], message: stringMap[c.message],
                                                  lengths: changes.lengths(i ..< j),
                                                  scalars: blockText[(placeholders ? 0 : s) + used ..< (placeholders ? 0 : s) + used + units]) {
                    used += units
                    if used == ops[opIndex].length { opIndex += 1; used = 0 }
                    next = j
                    continue
                }
            }
            // Deleting: the same stretch of changes, whose units continue the delete op being
            // read. Its references are checked once for the stretch: its targets are one
            // replica's consecutive units, so the later end has the largest Lamport timestamp, and
            // the stretch's first change has the smallest of its changes'.
            if used > 0, i > 0, case .deleteText = ops[opIndex].body {
                let (j, units) = changes.continuingStretch(from: i, room: ops[opIndex].length - used)
                if j > i, let piece = try? WireBlock.piece(of: ops[opIndex], text: [], used: used, take: units, firstID: opFirstID, mapAgent: mapAgent),
                   stretchReferencesAreEarlier(piece.body, length: units, log),
                   log.appendDeletingChanges(agent: agent, time: c.time, author: stringMap[c.author], message: stringMap[c.message],
                                             lengths: changes.lengths(i ..< j), total: units, body: piece.body) {
                    used += units
                    if used == ops[opIndex].length { opIndex += 1; used = 0 }
                    next = j
                    continue
                }
            }
            let cid = ChangeID(replica: block.replicas[c.replica], seq: c.seq)
            let lastOfAgent = log.lastChangeEnd(of: agent)
            let expected = (lastOfAgent?.seq ?? 0) + 1
            guard Int(c.seq) == expected else {
                throw fail(row, "change \(cid.fullDescription) has sequence number \(c.seq), expected \(expected) (a change is missing or repeated)")
            }
            if row == 0 {
                guard cid == genesis, c.depCount == 0 else { throw fail(row, "the first change is not the genesis change \(genesis.fullDescription)") }
            } else {
                guard c.depCount > 0 else { throw fail(row, "change \(cid.fullDescription) has no dependencies (a second origin)") }
            }
            let unitsSoFar = lastOfAgent?.counterEnd ?? 0
            guard unitsSoFar + c.length < Int(UInt32.max) else {
                throw fail(row, "change \(cid) takes replica \(cid.replica.short) past 2^32 op units")
            }
            let previous = lastOfAgent?.lamportEnd
            let extra = c.extraCount == 0 ? [] : Array(block.extra(of: i))
            let ci = c.depCount == 1
                ? log.beginChange(agent: agent, deps: CollectionOfOne(Int(block.depRows[c.depStart])), time: c.time,
                                  author: stringMap[c.author], message: stringMap[c.message], extra: extra)
                : log.beginChange(agent: agent, deps: block.deps(of: i), time: c.time,
                                  author: stringMap[c.author], message: stringMap[c.message], extra: extra)
            if let previous, log.lamport(ofChange: ci) <= previous {
                throw fail(row, "change \(cid) does not follow its replica's previous change (it must have it in its history)")
            }
            var remaining = c.length
            while remaining > 0 {
                guard opIndex < ops.count else { throw fail(row, "the ops end before the change does") }
                let op = ops[opIndex]
                if used == 0 { opFirstID = log.nextID } else if log.nextID != opFirstID.advanced(by: used) {
                    throw fail(row, "an op runs on into a change by another replica")
                }
                let take = min(op.length - used, remaining)
                // A typing run stored as one op over many changes: this change's part continues the
                // log's last op (its origins were checked with the run's first part, which has a
                // smaller Lamport timestamp; its left origins are the run's own earlier units).
                if used > 0, case .insertText(_, _, _, let s) = op.body,
                   log.extendLastInsert(by: take, scalars: blockText[(placeholders ? 0 : s) + used ..< (placeholders ? 0 : s) + used + take]) {
                    used += take
                    remaining -= take
                    if used == op.length { opIndex += 1; used = 0 }
                    continue
                }
                let piece: WireBlock.Piece
                do {
                    piece = try WireBlock.piece(of: op, text: blockText, textFromStart: placeholders, used: used, take: take,
                                                firstID: opFirstID, mapAgent: mapAgent)
                } catch {
                    throw fail(row, error.message)
                }
                let body = piece.body, scalars = piece.scalars
                if let bad = unorderedReference(in: body, length: take, log) {
                    throw fail(row, "change \(cid) refers to op \(bad)")
                }
                log.append(body, length: take, scalars: scalars)
                used += take
                remaining -= take
                if used == op.length { opIndex += 1; used = 0 }
            }
        }
        guard opIndex == block.ops.count else { throw .invalidDocument(offset: block.offset, message: "ops are left over after the last change") }
        log.endAdoptingOps()
        guard applying else { return }
        willApply(log, state, firstChange)
        if block.offset == 0 { state.reserveNotes(forBase: ops) }
        // Apply the block's ops to the state, whole runs at a time (a run spans the changes
        // of one replica that continue each other), in causal order.
        do throws(ApplyFailure) { try state.applyOps(of: log, from: startLV, firstChange: firstChange) } catch {
            throw applyError(error, block: block, firstChange: firstChange, log: log)
        }
    }

    /// Placeholder characters for the inserts of `ops` (a block read without its text in op
    /// order): as many as the longest insert has units.
    static func placeholders(for ops: [Op]) -> [Unicode.Scalar] {
        // By index, and by matching the case alone: no op is copied.
        var longest = 0
        for i in ops.indices where ops[i].length > longest {
            if case .insertText = ops[i].body { longest = ops[i].length }
        }
        return [Unicode.Scalar](repeating: .placeholder, count: longest)
    }

    /// Puts the text of a block stored in document order (its state section and deleted text)
    /// in place of the placeholders replay inserted in the notes, checks that the state section
    /// shows what the replayed history gives, and lets the log read its inserts' text in the
    /// notes' arenas (`OpLog.deferText(to:)`), checked to be exactly their characters in op
    /// order. Called right after `replay(block)`.
    /// In two steps, so that a load lets go of the section's entries in between: `checkText`,
    /// which needs them, and `deferText`, which builds what the log keeps.
    mutating func fillText(_ snapshot: WireState, dead: [Unicode.Scalar], block: WireBlock) throws(PeerNoteError) {
        try Self.fillText(snapshot, dead: dead, block: block, log: &log, state: &state)
    }

    /// `fillText`'s first step: the bodies' text written in (or read in place), and every
    /// check; what the second step (`deferText`) needs.
    mutating func checkText(_ snapshot: WireState, dead: [Unicode.Scalar], block: WireBlock) throws(PeerNoteError) -> TextPlacement {
        try Self.checkText(snapshot, dead: dead, block: block, log: &log, state: &state)
    }

    /// `fillText`'s second step: lets the log read its text in the notes' arenas.
    mutating func deferText(_ placement: TextPlacement, block: WireBlock) throws(PeerNoteError) {
        try Self.deferText(placement, block: block, log: &log, state: state)
    }

    /// `fillText` on a given log and state (salvage replays into a document's own).
    static func fillText(_ snapshot: WireState, dead: [Unicode.Scalar], block: WireBlock, log: inout OpLog, state: inout DocState) throws(PeerNoteError) {
        let placement = try checkText(snapshot, dead: dead, block: block, log: &log, state: &state)
        try deferText(placement, block: block, log: &log, state: state)
    }

    /// Where a loaded log's text lies in the notes (`checkText`): the listed notes' slots, and
    /// the runs of the log's text in them, checked to take every note's characters exactly.
    struct TextPlacement: Sendable {
        let slots: [Int]
        let runs: [TextRun]
        /// The state section's bytes when bodies read their text there in place (nil when they
        /// copied it: the bytes are then let go of before `deferText`): the log then reads those
        /// bodies' text as stretches of one store over them.
        var sectionBytes: [UInt8]? = nil
    }

    private static func textMismatch(_ block: WireBlock, _ message: String) -> PeerNoteError {
        .invalidDocument(offset: block.offset, message: "the state section does not match the history: \(message)")
    }

    /// `checkText` on a given log and state.
    static func checkText(_ snapshot: WireState, dead: [Unicode.Scalar], block: WireBlock, log: inout OpLog, state: inout DocState) throws(PeerNoteError) -> TextPlacement {
        func fail(_ message: String) -> PeerNoteError { textMismatch(block, message) }
        let (ids, slots) = try listedNotes(snapshot, block: block, log: &log, state: state)
        // Where each note's deleted characters start in `dead`: after those of the notes before it.
        var deadStarts: [Int] = []
        deadStarts.reserveCapacity(slots.count + 1)
        var deadTotal = 0
        state.noteStates.withNotePlaces { notes in
            for slot in slots {
                deadStarts.append(deadTotal)
                deadTotal += notes.read(slot) { $0.body.totalCount - $0.body.visibleCount }
            }
        }
        let starts = deadStarts
        // Each body's text written in, on two threads for a large notebook (the notes are apart),
        // through one pointer to the bodies' bytes (valid while `fillBodies` runs: both its
        // threads are done when it returns).
        // A body whose text is the section's ASCII in list order is left unwritten by `fill`, and
        // then reads it where the section holds it, on this thread: each of those bodies keeps
        // the section's bytes alive (one count a body, which two threads would both take on one
        // buffer), and no copy of them is made. Only when they read most of the section's bytes:
        // else they are copied, so that a few bodies do not keep a section of others' text alive.
        let misfit: Int?
        // The section's bytes, when bodies read there in place (`deferText` reads them there too).
        var readInPlace: [UInt8]?
        let ranges = snapshot.bodies.ranges, all = snapshot.bodies.bytes
        let filled = all.withUnsafeBufferPointer { bytes in
            let section = ReadOnlyBytes(bytes)
            return state.fillBodies(slots: slots, concurrentFrom: Self.concurrentFillFrom) { k, body in
                Self.fill(&body, live: UnsafeBufferPointer(rebasing: section.bytes[ranges[k]]), dead: dead, deadStart: starts[k])
            }
        }
        if let filled {
            misfit = filled
        } else {
            let inPlace = Self.readsMostOf(all.count, state.unwrittenBodyBytes(slots: slots) { ranges[$0].count })
            if inPlace { readInPlace = all }
            misfit = state.readBodiesInPlace(slots: slots, inPlace: inPlace) { all[ranges[$0]] }
        }
        if let k = misfit { throw fail("note \(k)'s text does not fit its body") }
        // The registers are checked while the inserts are checked to take the notes' text
        // exactly, on two threads for a large notebook; a register that differs is reported
        // first, as when one came after the other.
        let shown = state
        let checkRegisters: @Sendable () -> PeerNoteError? = {
            do throws(PeerNoteError) { try Self.checkRegisters(snapshot, slots: slots, block: block, state: shown) } catch { return error }
            return nil
        }
        // The log's text is every insert's characters, from its note: a note's elements in the
        // order it integrated them are its inserts' characters in op order (the block was just
        // replayed, in op order, into an empty state, and each insert's text follows the one
        // before it in the log). The log does not hold a copy of them: it reads them in the
        // notes' arenas (`OpLog.deferText(to:)`). Checked here: the inserts' text in order,
        // every note's characters taken, each once.
        let textCount = log.textCount
        let ops = log.ops
        /// The inserts' runs in the notes, when they take every note's characters exactly.
        func checkLog() -> [TextRun]? {
            guard let found = ops.withContiguousOps({ Self.textRuns($0, textCount: textCount, ids: ids, slots: slots, state: shown) }) else { return nil }
            let complete = shown.noteStates.withNotePlaces { notes in
                zip(slots, found.used).allSatisfy { slot, n in notes.read(slot) { $0.body.arenaCount == n } }
            }
            return complete ? found.runs : nil
        }
        let checked: [TextRun]?, differs: PeerNoteError?
        if slots.count >= Self.concurrentFillFrom {
            (checked, differs) = Concurrently.run({ checkLog() }, alongside: checkRegisters)
        } else {
            differs = checkRegisters()
            checked = differs == nil ? checkLog() : nil
        }
        if let differs { throw differs }
        guard let runs = checked else { throw fail("the inserted text does not add up") }
        guard deadTotal == dead.count else { throw fail("deleted text is left over") }
        return TextPlacement(slots: slots, runs: runs, sectionBytes: readInPlace)
    }

    /// `deferText` on a given log and state.
    static func deferText(_ placement: TextPlacement, block: WireBlock, log: inout OpLog, state: DocState) throws(PeerNoteError) {
        // The listed notes' arenas alone are kept for it (not the note table, which the
        // state's next change would then copy whole); a later edit of a note copies its arena.
        // A body that reads the section's bytes in place is a stretch of one store over them
        // (arena 0): no copy of its arena for each note, each counting the bytes again. (Arena 0
        // is left empty when no body does, so that the section's bytes are not kept; a piece's
        // place in its arena is 32 bits.)
        let section = placement.sectionBytes.flatMap { $0.count > Int(UInt32.max) ? nil : $0 }
        let inSection = section.map { section in
            state.noteStates.withNotePlaces { notes in placement.slots.reduce(0) { n, slot in n + (notes.read(slot) { $0.body.arenaRange(inPlaceWithin: section) } == nil ? 0 : 1) } }
        } ?? 0
        var arenas = [ScalarStore()]
        arenas.reserveCapacity(1 + placement.slots.count - inSection)
        var sources: [(arena: Int, range: Range<Int>)] = []
        sources.reserveCapacity(placement.slots.count)
        state.noteStates.withNotePlaces { notes in
            for slot in placement.slots {
                notes.read(slot) { note in
                    if inSection > 0, let section, let range = note.body.arenaRange(inPlaceWithin: section) {
                        sources.append((0, range))
                    } else {
                        sources.append((arenas.count, 0 ..< note.body.arenaCount))
                        arenas.append(note.body.arena)
                    }
                }
            }
        }
        if inSection > 0, let section { arenas[0] = ScalarStore(borrowing: section[...]) }
        guard let deferred = DeferredText(arenas: arenas, sources: sources, runs: placement.runs.lazy.map { (source: Int($0.listed), length: Int($0.length)) }),
              deferred.count == log.textCount else { throw textMismatch(block, "the inserted text does not add up") }
        log.deferText(to: deferred)
    }

    /// A stretch of a loaded log's text that one note's arena holds: `length` characters, after
    /// those the note's earlier runs took; the runs follow each other in the log's text.
    struct TextRun: Sendable {
        /// The note's place in the state section's list.
        var listed: Int32
        var length: Int32
    }

    /// The runs of the log's text by note (`TextRun`), from the insert ops of `ops` in op order,
    /// with how many characters they take from each note the state section lists (`ids`, and
    /// their `slots`). Nil when an insert's text does not follow the one before it, when the
    /// text ends elsewhere than at `textCount`, or when an insert is in a note the section does
    /// not list.
    /// - Complexity: O(ops); a note's slot is looked up only when the note changes from one
    ///   insert to the next, and not when it is the next note listed (hashing on every op cost a
    ///   tenth of the load's fill of the text).
    private static func textRuns(_ ops: UnsafeBufferPointer<Op>, textCount: Int, ids: [LocalID], slots: [Int],
                                 state: DocState) -> (runs: [TextRun], used: [Int])? {
        var listedAt = [Int](repeating: -1, count: state.noteStates.count)
        for (k, slot) in slots.enumerated() where slot < listedAt.count { listedAt[slot] = k }
        var used = [Int](repeating: 0, count: ids.count)
        var runs: [TextRun] = []
        // A run a note at least (most notebooks: about one): grown by doubling, the array would
        // hold up to twice that while the section is checked, the load's peak.
        runs.reserveCapacity(ids.count)
        var current = -1
        var end = 0
        for i in ops.indices {
            guard case .insertText(let note, _, _, let start) = ops[i].body else { continue }
            let length = ops[i].length
            guard start == end, length <= Int(Int32.max) else { return nil }
            end += length
            if current < 0 || ids[current] != note {
                // The note listed next first: a notebook whose notes were written one after the
                // other in document order lists them in the order their inserts come.
                if current + 1 < ids.count && ids[current + 1] == note {
                    current += 1
                } else {
                    guard let slot = state.slot(of: note), slot < listedAt.count, listedAt[slot] >= 0 else { return nil }
                    current = listedAt[slot]
                }
                runs.append(TextRun(listed: Int32(current), length: Int32(length)))
            } else if let last = runs.last, Int(last.length) + length <= Int(Int32.max) {
                runs[runs.count - 1].length += Int32(length)
            } else {
                runs.append(TextRun(listed: Int32(current), length: Int32(length)))
            }
            used[current] += length
        }
        guard end == textCount else { return nil }
        return (runs, used)
    }

    /// Whether bodies reading `read` bytes in place read most of `total` (at least half), which
    /// they keep alive.
    static func readsMostOf(_ total: Int, _ read: Int) -> Bool { read > 0 && read >= total - read }

    /// The notes from which `fillText` writes the bodies' text in on two threads. A load that
    /// read its base block in one step (`oneStepFrom`) has just used the helper thread, which
    /// is awake: from about 1,000 notes of a few hundred characters a half takes longer than
    /// handing it over (at 2,000 notes `pnmerge validate` took 8.6 ms against 9.7 with the
    /// bodies written on one thread). Below it, one thread does it all.
    static let concurrentFillFrom = 1_000

    /// Writes the text of one body: its visible characters from `live` (a state section's
    /// UTF-8, checked valid) and its deleted ones from `dead`, from `deadStart` on; or leaves a
    /// body that can read `live` in place (`ListCRDT.canReadText`) unwritten, for `fillText` to
    /// let it read it there. False when
    /// they do not fit it exactly (the deleted ones are only checked to be in `dead`; `fillText`
    /// checks that the notes use it all).
    private static func fill(_ body: inout ListCRDT<Unicode.Scalar>, live bytes: UnsafeBufferPointer<UInt8>, dead: [Unicode.Scalar], deadStart: Int) -> Bool {
        // Read through pointers: a slice or run of them made for each note would retain and
        // release the buffers they come from, which both threads' notes share, and the two
        // threads' counts on one buffer were a tenth of a large load's time.
        dead.withUnsafeBufferPointer { dead in
            // A body of ASCII alone (most of them) is its scalars as they are stored: its UTF-8;
            // one that holds it in list order reads it where it lies (`fillText`), unwritten here.
            if Self.isASCII(bytes) {
                if body.canReadText(count: bytes.count) { return true }
                return write(&body, live: .latin1(bytes), count: bytes.count, dead: dead, deadStart: deadStart)
            }
            var wide: [Unicode.Scalar] = []
            String.appendScalars(utf8: bytes, to: &wide)
            return wide.withUnsafeBufferPointer { write(&body, live: .scalars($0), count: $0.count, dead: dead, deadStart: deadStart) }
        }
    }

    /// Bytes both of `fillBodies`'s threads read, behind a pointer that the call making it keeps
    /// valid until both are done. `@unchecked Sendable`: nothing writes them meanwhile.
    private struct ReadOnlyBytes: @unchecked Sendable {
        let bytes: UnsafeBufferPointer<UInt8>
        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }
    }

    /// `fill`'s writing: the visible characters from `live` (`count` of them), the deleted ones
    /// from `dead`, from `deadStart` on.
    private static func write(_ body: inout ListCRDT<Unicode.Scalar>, live: ListCRDT<Unicode.Scalar>.TextSource, count: Int,
                              dead: UnsafeBufferPointer<Unicode.Scalar>, deadStart: Int) -> Bool {
        var livePos = 0, deadPos = deadStart
        let complete = body.rewriteText { length, deleted in
            if deleted {
                guard deadPos >= 0, deadPos + length <= dead.count else { return nil }
                defer { deadPos += length }
                return .scalars(UnsafeBufferPointer(rebasing: dead[deadPos ..< deadPos + length]))
            }
            guard livePos + length <= count else { return nil }
            defer { livePos += length }
            switch live {
            case .latin1(let bytes): return .latin1(UnsafeBufferPointer(rebasing: bytes[livePos ..< livePos + length]))
            case .scalars(let scalars): return .scalars(UnsafeBufferPointer(rebasing: scalars[livePos ..< livePos + length]))
            }
        }
        return complete && livePos == count
    }

    /// Whether every byte is below 0x80. (One pass that the compiler turns into vector code:
    /// a check per byte that stops at the first high one does not.)
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var any: UInt8 = 0
        for x in bytes { any |= x }
        return any < 0x80
    }

    /// The ids of the notes a state section lists, and their slots in `state.noteStates`, once
    /// checked to be the history's notes, each once, in the order the section lists them in
    /// (live notes in the order of notes, then deleted ones).
    private static func listedNotes(_ snapshot: WireState, block: WireBlock, log: inout OpLog, state: DocState) throws(PeerNoteError) -> (ids: [LocalID], slots: [Int]) {
        let agents = block.replicas.map { log.agent(for: $0) }
        let ids = snapshot.notes.map { LocalID(agent: agents[$0.replica], counter: $0.counter) }
        func countMismatch() -> PeerNoteError {
            Self.snapshotMismatch(block, "it lists \(ids.count) notes, the history has \(state.noteStates.count)")
        }
        guard ids.count == state.noteStates.count else { throw countMismatch() }
        // Document order: each slot at most once (a note shows at the one place its position
        // register names), so ids equal to it are distinct.
        let all = state.allNoteSlotsInOrder
        var slots: [Int] = []
        slots.reserveCapacity(all.count)
        for slot in all where !state.noteStates[slot].isDeleted { slots.append(slot) }
        for slot in all where state.noteStates[slot].isDeleted { slots.append(slot) }
        guard slots.count == ids.count, zip(slots, ids).allSatisfy({ state.noteStates[$0].id == $1 }) else {
            // A section listing a note twice is refused as listing the wrong notes.
            guard Set(ids).count == ids.count else { throw countMismatch() }
            throw Self.snapshotMismatch(block, "notes are not listed in document order")
        }
        return (ids, slots)
    }

    /// Checks each listed note's title, tags, priority, creation time and deleted flag (note `k`
    /// against the note in `slots[k]`), and the notebook's title, against the history's.
    private static func checkRegisters(_ snapshot: WireState, slots: [Int], block: WireBlock, state: DocState) throws(PeerNoteError) {
        if let k = state.firstNoteNotShown(snapshot.notes, slots: slots) { throw Self.snapshotMismatch(block, "note \(k) differs") }
        guard (state.title.value ?? "").hasSameScalars(as: snapshot.title), !state.title.isConflicted else {
            throw Self.snapshotMismatch(block, "the notebook title differs")
        }
    }

    private static func snapshotMismatch(_ block: WireBlock, _ message: String) -> PeerNoteError {
        .invalidDocument(offset: block.offset, message: "the state section does not match the history: \(message)")
    }

    /// For a block whose state section stores each note body's structure (format version 3),
    /// right after `replay(block)` with `bodiesFromStructures`: builds every body from its
    /// structure, with the characters of the section's bodies and the deleted text, once the
    /// structures are checked against the history (`OpLog.buildBodies(from:fillingText:)`), which
    /// gives the inserts that do not store their origins the ones the structures give. Where
    /// some insert stores its origins (two copies inserted at one place concurrently), the bodies
    /// are instead replayed with all the origins, and must come out as the structures state. Then
    /// the section's other items are checked, as `fillText` checks them.
    mutating func buildBodies(_ snapshot: WireState, dead: [Unicode.Scalar], block: WireBlock) throws(PeerNoteError) {
        try Self.buildBodies(snapshot, dead: dead, block: block, log: &log, state: &state)
    }

    /// `buildBodies` on a given log and state.
    static func buildBodies(_ snapshot: WireState, dead: [Unicode.Scalar], block: WireBlock, log: inout OpLog, state: inout DocState) throws(PeerNoteError) {
        func fail(_ message: String) -> PeerNoteError { snapshotMismatch(block, message) }
        let listed = try listedNotes(snapshot, block: block, log: &log, state: state)
        let ids = listed.ids
        var slots = listed.slots
        let agents = block.replicas.map { log.agent(for: $0) }
        // Each body's elements in list order: visible ones from the section's body, deleted ones
        // from the deleted text.
        var stored: [StoredBody] = []
        stored.reserveCapacity(ids.count)
        var deadPos = 0
        for (k, note) in snapshot.notes.enumerated() {
            let runs = note.structure ?? []
            var live: [Unicode.Scalar] = []
            String.appendScalars(utf8: snapshot.bodyUTF8(k), to: &live)
            var livePos = 0
            var elements = ScalarStore()
            elements.reserveCapacity(live.count)
            var structure: [StructureRun] = []
            structure.reserveCapacity(runs.count)
            for run in runs {
                structure.append(StructureRun(id: LocalID(agent: agents[run.replica], counter: run.counter), length: run.length, deleted: run.deleted))
                if run.deleted {
                    guard run.length <= dead.count - deadPos else { throw fail("the deleted text is shorter than the structures' tombstones") }
                    elements.append(contentsOf: dead[deadPos ..< deadPos + run.length])
                    deadPos += run.length
                } else {
                    guard run.length <= live.count - livePos else { throw fail("note \(k)'s text does not fit its body") }
                    elements.append(contentsOf: live[livePos ..< livePos + run.length])
                    livePos += run.length
                }
            }
            guard livePos == live.count else { throw fail("note \(k)'s text does not fit its body") }
            stored.append(StoredBody(note: ids[k], runs: structure, elements: elements))
        }
        guard deadPos == dead.count else { throw fail("deleted text is left over") }
        // The inserts that store their origins (found before the build gives every insert the
        // structure's).
        var stated: [(op: Int, left: LocalID, right: LocalID)] = []
        for (i, op) in log.ops.enumerated() {
            if case .insertText(_, let left, let right, _) = op.body, !left.isUnstated { stated.append((i, left, right)) }
        }
        let bodies: [ListCRDT<Unicode.Scalar>]
        switch log.buildBodies(from: stored, fillingText: true) {
        case .success(let built): bodies = built
        case .failure(let problem): throw fail(problem.message)
        }
        if stated.isEmpty {
            for (k, body) in bodies.enumerated() { state.setBody(body, slot: slots[k]) }
        } else {
            // Replayed with the stored origins where there are some, the structures' elsewhere.
            log.setInsertOrigins(stated)
            var replayed = DocState()
            replayed.workBudget = state.workBudget
            do throws(ApplyFailure) { try replayed.applyOps(of: log, from: 0, firstChange: 0) } catch {
                throw applyError(error, block: block, firstChange: 0, log: log)
            }
            for (k, body) in bodies.enumerated() {
                guard let slot = replayed.slot(of: ids[k]) else { throw fail("note \(k) does not exist") }
                guard replayed.noteStates[slot].body.totalCount == body.totalCount, Self.sameElements(replayed.noteStates[slot].body, body) else {
                    throw fail("note \(k)'s structure is not the order its history gives")
                }
                slots[k] = slot
            }
            state = replayed
        }
        if let problem = derivedOriginProblem(log) { throw fail(problem) }
        try checkRegisters(snapshot, slots: slots, block: block, state: state)
    }

    /// Whether two lists hold the same elements (ids and tombstones) in the same order.
    private static func sameElements(_ a: ListCRDT<Unicode.Scalar>, _ b: ListCRDT<Unicode.Scalar>) -> Bool {
        var x: [(LocalID, Int, Bool)] = [], y: [(LocalID, Int, Bool)] = []
        func add(_ out: inout [(LocalID, Int, Bool)], _ id: LocalID, _ length: Int, _ deleted: Bool) {
            if let last = out.last, last.0.agent == id.agent, last.2 == deleted, Int(last.0.counter) + last.1 == Int(id.counter) {
                out[out.count - 1].1 += length
            } else {
                out.append((id, length, deleted))
            }
        }
        a.forEachRun { id, length, deleted, _ in add(&x, id, length, deleted) }
        b.forEachRun { id, length, deleted, _ in add(&y, id, length, deleted) }
        return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 && $0.2 == $1.2 }
    }

    /// The first insert whose origins are not earlier than it (by Lamport timestamp), as a
    /// stored reference must be (`problem`): an origin the structure gives is checked as one
    /// the block stores.
    private static func derivedOriginProblem(_ log: OpLog) -> String? {
        var ci = 0
        for op in log.ops {
            guard case .insertText(_, let left, let right, _) = op.body else { continue }
            ci = log.changeIndex(containingLV: op.lv, from: ci)
            let me = log.localID(ofLV: op.lv, change: ci)
            let c = log.changes[ci]
            let lamport = c.lamport + UInt64(op.lv - c.lvStart)
            if let bad = problem(left, me, lamport, log) ?? problem(right, me, lamport, log) {
                return "an insert (\(name(me, log))) has an origin the structure gives, \(bad)"
            }
        }
        return nil
    }

    /// The first op id `body` refers to that is not strictly earlier (by Lamport timestamp)
    /// than the op about to be appended, or that this document lacks. References to the
    /// causal past are always earlier; requiring it keeps every causal order, and the
    /// canonical (lamport, replica) order, one in which referenced ops come first.
    private static func unorderedReference(in body: OpBody, length: Int, _ log: OpLog) -> String? {
        let me = log.nextID
        let c = log.changes[log.changes.count - 1]
        let myLamport = c.lamport + UInt64(c.length)
        switch body {
        case .insertText(let n, let l, let r, _):
            return problem(n, me, myLamport, log) ?? problem(l, me, myLamport, log) ?? problem(r, me, myLamport, log)
        case .deleteText(let n, let t, let rev):
            return problem(n, me, myLamport, log) ?? problem(t, me, myLamport, log) ?? problem(t.advanced(by: rev ? -(length - 1) : length - 1), me, myLamport, log)
        case .createNote(let l, let r, _):
            return problem(l, me, myLamport, log) ?? problem(r, me, myLamport, log)
        case .setNotebookTitle(_, let p):
            return firstProblem(p, me, myLamport, log)
        case .setNoteTitle(let n, _, let p), .setPriority(let n, _, let p), .deleteNote(let n, let p), .restoreNote(let n, let p),
             .removeTag(let n, _, let p):
            return problem(n, me, myLamport, log) ?? firstProblem(p, me, myLamport, log)
        case .addTag(let n, _):
            return problem(n, me, myLamport, log)
        case .moveNote(let n, let l, let r, let p):
            return problem(n, me, myLamport, log) ?? problem(l, me, myLamport, log) ?? problem(r, me, myLamport, log)
                ?? firstProblem(p, me, myLamport, log)
        case .unknown:
            return nil
        }
    }

    /// The first of `ids` that `problem` finds one with, in order. (The ids are visited in place:
    /// a closure over the log, as `OpBody.mapIDs` takes, copied the log for every op.)
    private static func firstProblem(_ ids: [LocalID], _ me: LocalID, _ myLamport: UInt64, _ log: OpLog) -> String? {
        for id in ids { if let bad = problem(id, me, myLamport, log) { return bad } }
        return nil
    }

    /// Whether a delete `body` of `length` units, about to be appended as changes that continue
    /// the log's last change, refers only to what exists and is earlier than the first of them
    /// (which `unorderedReference` would find for each change): its note and the two ends of
    /// its targets (one replica's consecutive units: every unit between exists, and none is later
    /// than the later end).
    private static func stretchReferencesAreEarlier(_ body: OpBody, length: Int, _ log: OpLog) -> Bool {
        guard case .deleteText(let n, let t, let rev) = body, let c = log.changes.last else { return false }
        let me = log.nextID
        let firstLamport = c.lamport + UInt64(c.length)
        let end = t.advanced(by: rev ? -(length - 1) : length - 1)
        return problem(n, me, firstLamport, log) == nil && problem(t, me, firstLamport, log) == nil && problem(end, me, firstLamport, log) == nil
    }

    /// Why reference `r` may not appear in the op whose first unit is `me` (Lamport `myLamport`), if it may not.
    private static func problem(_ r: LocalID, _ me: LocalID, _ myLamport: UInt64, _ log: OpLog) -> String? {
        // Earlier ops of the same replica always come first (checked per change above). An origin
        // a block leaves out is checked once the structure gives it (`checkDerivedOrigins`).
        if r.isNone || r.isUnstated || (r.agent == me.agent && r.counter < me.counter) { return nil }
        guard let l = log.lamport(of: r) else { return "\(name(r, log)), which does not exist" }
        guard l < myLamport else { return "\(name(r, log)), which is not in its history" }
        return nil
    }

    private static func name(_ r: LocalID, _ log: OpLog) -> String { "\(r.counter)@\(Int(r.agent) < log.replicas.count ? log.replicas[Int(r.agent)].short : "?")" }
}
