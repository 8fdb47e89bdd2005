#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a document's file holds: its bytes and where each persisted change sits.
struct Persisted: Sendable {
    var bytes: [UInt8]
    /// Row (position in the file) of each change `0 ..< rowOfChange.count` of the op log; for
    /// those in `notInFile`, the row an incremental save gives them (after the file's, in order).
    var rowOfChange: ChangeIndices
    /// The changes below `rowOfChange.count` that the file does not hold, in the order an
    /// incremental save appends them (not necessarily ascending). Empty but in a document that
    /// `merged(with:)` built from the other copy: its log interleaves the other copy's changes
    /// with the file's.
    var notInFile: [Int] = []
    /// Op rows and predecessors of all the file's blocks (they share the reader's row budget).
    var opRows: Int
    var predecessors: Int
    /// The op units the file holds (the log's `lvCount` when it was written or read): a change
    /// the file holds that has grown since (an incremental save made inside a transaction, whose
    /// change then took more edits) is not in the file as it is now.
    var units: Int
    /// The document's unknown payload fields the file holds.
    var unknownFields: [[UInt8]] = []
    /// What a reader of a prefix of `bytes` holds after reading it (`Document.load`, or the last
    /// check of a save), so that a save appending blocks to them is checked by reading only those
    /// (`Document.checkSaveLoads`). Nil when no prefix is known to load, or when a load of these
    /// bytes replays them canonically (the state in file order is then not kept).
    var verified: VerifiedFile?
    /// Where each block after the first starts in `bytes`, and how many changes the blocks
    /// before it hold, as a load read them; empty when not known (a save's bytes). Bytes two
    /// files share up to such a place hold the same first changes in both
    /// (`MergeSource.keepingHistory(of:sharingFileWith:)`).
    var blockStarts: [(offset: Int, rowsBefore: Int)] = []

    /// How many changes the file holds.
    var fileChangeCount: Int { rowOfChange.count - notInFile.count }
}

/// How to write a document.
public enum SaveMode: Sendable {
    /// Canonical form: one block, changes in causal (lamport, replica) order. Two documents
    /// with the same changes give identical bytes.
    case compact
    /// The bytes the document was loaded from (or last saved as), with one block appended
    /// holding only the new changes, so that sync tools move little. Falls back to compact
    /// when there is no earlier file, or when the last change it holds has grown since (it was
    /// saved inside a transaction that went on editing).
    case incremental
}

extension Document {
    // MARK: Saving

    /// The document as bytes. Saving records the result, so a later incremental save appends to it.
    public func save(_ mode: SaveMode = .compact) -> [UInt8] {
        save(mode, writeStructures: Self.writesStructures)
    }

    /// Whether compact saves write format version 3 (each note body's structure in the state
    /// section, the origins it implies left out): not yet by default. This library reads version
    /// 3 so that copies of it in use can read such files once writers write them; writing it
    /// waits until it makes saving and loading faster, which it does not yet (docs/FORMAT-V3.md,
    /// "Measured as files"). The environment variable `PEERNOTE_WRITE_FORMAT=3` turns
    /// it on, for the spec check, the benchmarks and anyone trying it.
    static let writesStructures = Environment.value("PEERNOTE_WRITE_FORMAT") == "3"

    /// `save(mode)`; with `writeStructures`, a compact save's base block with a state section is
    /// written as format version 3, else as version 2 (its state section without the bodies'
    /// structures, every insert's origins stored).
    @_spi(Diagnostics) public func save(_ mode: SaveMode, writeStructures: Bool) -> [UInt8] {
        save(mode, writeStructures: writeStructures, concurrentFrom: Self.stateSectionAlongsideFrom)
    }

    /// Changes and ops from which a compact save makes its state section on another thread
    /// (`makesStateSectionAlongside`). Lower than the columns' two-thread encoding
    /// (`WireCodec.concurrentEncodingThreshold`): the section of a notebook of about 1,000 notes
    /// of a few hundred characters is already a millisecond or more of work, most of it its
    /// compression, and the other thread does it while this one makes the block and its columns.
    /// A 2,000-note notebook's save took 2.7 ms against 3.5 ms with the section made here
    /// (Benchmarks/HISTORY.md, 2026-11-28).
    static let stateSectionAlongsideFrom = 1 << 12

    /// `save(mode, writeStructures:)`; a compact save of `concurrentFrom` changes and ops or more
    /// makes its state section on another thread (tests set it to compare the two ways). Ops
    /// count as the load counts them: a notebook of 20,000 notes imported at once is a handful of
    /// changes, and its state section alone is a fifth of its save.
    func save(_ mode: SaveMode, writeStructures: Bool, concurrentFrom: Int) -> [UInt8] {
        // Appending is possible only when the file's last change is in it whole: a save made
        // inside a transaction holds its change as it stood then (else: a compact save).
        // An appended block carries no payload fields a newer version wrote: when a merge brought
        // some in, the save is compact.
        if mode == .incremental, let p = persisted, p.unknownFields == unknownFields, p.rowOfChange.count <= log.changes.count,
           p.rowOfChange.count == 0 || log.changes.lvEnd(p.rowOfChange.count - 1) == p.units {
            if p.notInFile.isEmpty && p.rowOfChange.count == log.changes.count { return p.bytes }
            // New changes take the rows after the file's, in the log's order.
            // (Those the file lacks among its own have theirs already, and the rest follow them:
            // change `rowOfChange.count + k` takes the row as many changes after the file's.)
            let tail = p.rowOfChange.count ..< log.changes.count
            let newChanges = p.notInFile.isEmpty ? ChangeIndices(tail) : ChangeIndices(p.notInFile + tail)
            let rowOf = p.rowOfChange.appending(tail)
            var block = makeBlock(changes: newChanges, rowOf: rowOf, firstRow: p.fileChangeCount)
            block.kind = .append
            block.previousCRC = CRC32.checksum(p.bytes)
            let opRows = p.opRows + block.opRowCount, predecessors = p.predecessors + block.predecessorCount
            let bytes = p.bytes + Self.encodeLoadable(&block, fileBefore: p.bytes.count, changes: rowOf.count, opRows: opRows, predecessors: predecessors)
            persisted = Persisted(bytes: bytes, rowOfChange: rowOf, opRows: opRows, predecessors: predecessors, units: log.lvCount, unknownFields: unknownFields,
                                  verified: p.verified)
            return bytes
        }
        let canonical: (Int, Int) -> Bool = { [log] x, y in
            let la = log.changes.lamport(x), lb = log.changes.lamport(y)
            return la != lb ? la < lb : log.replicas[Int(log.changes.agent(x))] < log.replicas[Int(log.changes.agent(y))]
        }
        // A log with one replica, or one loaded from a compact file, is already in canonical order
        // (and then neither the order nor its inverse takes memory).
        // A run of one replica's changes, each on the previous, is in canonical order already.
        let order = ChangeIndices.sorted(count: log.changes.count, sortedEnd: { [log] in log.changes.runEnd(of: $0) }, by: canonical)
        let rowOf = order.inverse()
        let table = replicaTable(of: order)
        let replicaTable = table.map { log.replicas[Int($0)] }
        // What the state section is made from, when the save writes one.
        let section = stateSectionInput().flatMap { input in Self.stateSectionSlots(input, replicaTable: replicaTable).map { (input: input, slots: $0) } }
        var block: WireBlock
        if Self.makesStateSectionAlongside(changes: order.count, ops: log.ops.count, concurrentFrom: concurrentFrom) && !writeStructures,
           let (input, slots) = section {
            // A large block: its state section's entries are made and encoded on both threads, half
            // the notes each; then the section is compressed on the other thread while this one
            // makes the rest of the block and encodes its columns but the text column; that
            // column (the notes' deleted text) is made by whichever thread is done first; the
            // column set is then compressed here. The
            // section's compression is the longer half (one DEFLATE stream, on one thread): the
            // entries are made before it, on both threads, rather than on its thread before it.
            // (A third hand-over, to encode the columns on both threads, gains nothing a fresh
            // process can measure: Benchmarks/HISTORY.md, 2026-11-25.)
            // The entries are made and encoded a batch of notes at a time (`encodeStateSectionNotes`),
            // each batch's (a copy of its notes' text among them) let go once encoded: the block
            // keeps the section as bytes only (`compressedState`).
            let tableIndex = Self.tableIndex(input, replicaTable: replicaTable)
            let half = slots.count / 2
            // One buffer of the section's exact size, each half encoded into its own part of it:
            // the halves' sizes are worked out on both threads, then both are encoded at once (a
            // half encoded apart and appended would be alive beside the whole, and a buffer grown
            // by appending up to twice the section, all of it alive while it is compressed).
            let sectionBytes = { () -> [UInt8] in
                let headBytes = StateCodec.head(title: input.title, noteCount: slots.count).bytes
                let (secondSize, firstSize) = Concurrently.run({ Self.stateSectionSize(input, slots: slots[half...], tableIndex: tableIndex) },
                                                               alongside: { Self.stateSectionSize(input, slots: slots[..<half], tableIndex: tableIndex) })
                let firstEnd = headBytes.count + firstSize, total = firstEnd + secondSize
                var exact = true
                let bytes = [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
                    let parts = BufferParts(buffer)
                    let (second, first) = Concurrently.run({ () -> Bool in
                        var e = CBOREncoder(writingInto: parts.part(firstEnd ..< total))
                        Self.encodeStateSectionNotes(input, slots: slots[half...], tableIndex: tableIndex, into: &e)
                        return !e.overflowed && e.written == total - firstEnd
                    }, alongside: { () -> Bool in
                        var e = CBOREncoder(writingInto: parts.part(0 ..< firstEnd))
                        e.raw(headBytes)
                        Self.encodeStateSectionNotes(input, slots: slots[..<half], tableIndex: tableIndex, into: &e)
                        return !e.overflowed && e.written == firstEnd
                    })
                    exact = first && second
                    // (UInt8 needs no deinitialization: a buffer not filled whole is let go empty.)
                    count = exact ? total : 0
                }
                if exact { return bytes }
                // Sizes worked out wrong (a bug, which the tests' assertion names): encoded again
                // on one thread into a buffer of its own, so that the save is right all the same.
                assertionFailure("the state section's size was not worked out exactly")
                var e = CBOREncoder()
                e.raw(headBytes)
                Self.encodeStateSectionNotes(input, slots: slots[...], tableIndex: tableIndex, into: &e)
                return e.bytes
            }()
            let deadTextWork = Claim()
            let makeDeadText: @Sendable () -> (text: [Unicode.Scalar], column: [UInt8]) = {
                let dead = Self.deadText(input, slots: slots)
                return (dead, WireCodec.deadTextColumn(dead))
            }
            let (made, (compressed, deadThere)) = Concurrently.run({ () -> (WireBlock, [UInt64: [UInt8]], [String], (text: [Unicode.Scalar], column: [UInt8])?, WireState) in
                let block = makeBlock(changes: order, rowOf: rowOf, firstRow: 0, table: table, withText: false, encodingOps: true)
                let (raw, strings) = WireCodec.encodeColumns(block, stateSection: true, concurrent: false)
                // The section is in `compressedState`: this one only says the block has one, of
                // version 2 (no structures on this path), so it holds no entries.
                let state = WireState(title: input.title, notes: [], bodies: [])
                return (block, raw, strings, deadTextWork.take() ? makeDeadText() : nil, state)
            }, alongside: { () -> (CompressedSection, (text: [Unicode.Scalar], column: [UInt8])?) in
                let compressed = CompressedSection(raw: sectionBytes.count, deflated: Deflate.compress(sectionBytes))
                return (compressed, deadTextWork.take() ? makeDeadText() : nil)
            })
            guard let dead = made.3 ?? deadThere else { preconditionFailure("neither thread made the deleted text") }
            var raw = made.1
            if !dead.column.isEmpty { raw[ColumnID.opText.rawValue] = dead.column }
            block = made.0
            block.deadText = dead.text
            block.encodedColumns = EncodedColumns(bytes: ColumnSet.encode(raw), strings: made.2)
            block.state = made.4
            block.compressedState = compressed
        } else {
            // The bodies' structures (format version 3) are made from the inserts' text.
            block = makeBlock(changes: order, rowOf: rowOf, firstRow: 0, table: table, withText: section == nil || writeStructures)
            if let (input, slots) = section {
                block.state = Self.stateSection(input, slots: slots, replicaTable: block.replicas)
                block.deadText = Self.deadText(input, slots: slots)
                if writeStructures {
                    var blockIndex = [UInt32](repeating: .max, count: log.replicas.count)
                    for (i, r) in block.replicas.enumerated() { if let a = log.existingAgent(for: r) { blockIndex[Int(a)] = UInt32(i) } }
                    storeStructures(in: &block, order: order, blockIndex: blockIndex)
                }
            }
        }
        block.kind = .base
        block.documentID = id
        block.genesis = genesis
        block.unknownFields = unknownFields.sorted { $0.lexicographicallyPrecedes($1) }
        let predecessors = block.predecessorCount
        let bytes = Self.encodeLoadable(&block, fileBefore: 0, changes: rowOf.count, opRows: block.opRowCount, predecessors: predecessors)
        persisted = Persisted(bytes: bytes, rowOfChange: rowOf, opRows: block.opRowCount, predecessors: predecessors, units: log.lvCount, unknownFields: unknownFields)
        return bytes
    }

    /// Whether a compact save of `changes` changes holding `ops` ops makes its state section on
    /// another thread: from `concurrentFrom` changes and ops together, as a load counts them.
    static func makesStateSectionAlongside(changes: Int, ops: Int, concurrentFrom: Int) -> Bool {
        changes + ops >= concurrentFrom
    }

    /// The block's bytes, padded when needed so that the file (`fileBefore` bytes before the
    /// block, holding `changes`, `opRows` and `predecessors` in all with it) meets the limits
    /// every reader enforces: runs of identical edits compress so well that, unpadded, a file of
    /// 70,000 keystrokes would be 330 bytes, more changes than a file that small may hold.
    static func encodeLoadable(_ block: inout WireBlock, fileBefore: Int, changes: Int, opRows: Int, predecessors: Int) -> [UInt8] {
        let required = WireCodec.Limits().requiredFileSize(
            changes: changes, ops: opRows, predecessors: predecessors, dependencies: block.depRows.count,
            units: block.opUnitCount, insertedScalars: block.textCount)
        let version = Format.version(of: block)
        let bytes = BlockCodec.encode(payload: WireCodec.encodePayload(block), version: version)
        guard fileBefore + bytes.count < required else { return bytes }
        // The padding field's own key and length header only add to the size.
        block.padding = required - fileBefore - bytes.count
        return BlockCodec.encode(payload: WireCodec.encodePayload(block), version: version)
    }

    /// What a compact save's state section is made from (`stateSection`); nil when the document
    /// has no text, or has conflicts (a state section shows exactly what `notebook` shows, and
    /// conflicts need the history to be shown).
    struct StateSectionInput: Sendable {
        var state: DocState
        var replicas: [ReplicaID]
        var title: String
    }

    private func stateSectionInput() -> StateSectionInput? {
        guard log.textCount > 0, concurrentValues.isEmpty else { return nil }
        return StateSectionInput(state: state, replicas: log.replicas, title: title)
    }

    /// The notes of a compact save's state section (`noteStates` indices), in its order: the
    /// notes in the order of notes, then the deleted ones; nil when the state cannot be written
    /// as a state section for a block whose replica table is `replicaTable`.
    private static func stateSectionSlots(_ input: StateSectionInput, replicaTable: [ReplicaID]) -> [Int]? {
        let state = input.state
        let all = state.allNoteSlotsInOrder
        guard all.count == state.noteStates.count else { return nil }
        // Whether each agent's replica is in the table, asked once an agent rather than once a note.
        let table = Set(replicaTable)
        let inTable = input.replicas.map { table.contains($0) }
        var live: [Int] = [], deleted: [Int] = []
        live.reserveCapacity(all.count)
        for slot in all {
            guard inTable[Int(state.noteStates[slot].id.agent)] else { return nil }
            if state.noteStates[slot].isDeleted { deleted.append(slot) } else { live.append(slot) }
        }
        return live + deleted
    }

    /// The state section of a compact save (see `WireState`), for a block whose replica table
    /// is `replicaTable` (`slots` from `stateSectionSlots`).
    private static func stateSection(_ input: StateSectionInput, slots: [Int], replicaTable: [ReplicaID]) -> WireState {
        stateSectionNotes(input, slots: slots[...], tableIndex: tableIndex(input, replicaTable: replicaTable))
    }

    /// Each agent's place in `replicaTable`, found once an agent rather than hashed once a note.
    private static func tableIndex(_ input: StateSectionInput, replicaTable: [ReplicaID]) -> [Int] {
        var index: [ReplicaID: Int] = [:]
        for (i, r) in replicaTable.enumerated() { index[r] = i }
        return input.replicas.map { index[$0] ?? 0 }
    }

    /// Notes whose entries `encodeStateSectionNotes` makes at a time: their text is copied into
    /// one buffer, which a notebook's whole would double in memory while it is saved.
    static var stateSectionBatch: Int { 256 }

    /// The bytes `encodeStateSectionNotes` writes for the notes at `slots`, exactly, without
    /// making their entries' text.
    private static func stateSectionSize(_ input: StateSectionInput, slots: ArraySlice<Int>, tableIndex: [Int]) -> Int {
        input.state.noteStates.withNotePlaces { notes in
            var total = 0
            for slot in slots {
                total += notes.read(slot) { note in
                    var tagCount = 0, tagsSize = 0
                    note.tags.forEachVisible { tag in
                        tagCount += 1
                        tagsSize += CBOREncoder.textSize(utf8Count: tag.utf8.count)
                    }
                    return StateCodec.entrySize(replica: tableIndex[Int(note.id.agent)], counter: note.id.counter,
                                                titleUTF8Count: note.title.value?.utf8.count ?? 0, tagCount: tagCount, tagsSize: tagsSize,
                                                priority: note.priority.value ?? .normal, created: note.created,
                                                bodyUTF8Count: note.body.visibleUTF8Count)
                }
            }
            return total
        }
    }

    /// Appends the state section's entries of the notes at `slots` to `e`, as
    /// `StateCodec.encodeNotes` writes them, made `stateSectionBatch` notes at a time.
    private static func encodeStateSectionNotes(_ input: StateSectionInput, slots: ArraySlice<Int>, tableIndex: [Int], into e: inout CBOREncoder) {
        var start = slots.startIndex
        while start < slots.endIndex {
            let end = Swift.min(start + stateSectionBatch, slots.endIndex)
            StateCodec.encodeNotes(stateSectionNotes(input, slots: slots[start ..< end], tableIndex: tableIndex), into: &e)
            start = end
        }
    }

    /// The state section of the notes at `slots` (a stretch of `stateSectionSlots`), in that
    /// order; `tableIndex` from `tableIndex(_:replicaTable:)`.
    private static func stateSectionNotes(_ input: StateSectionInput, slots: ArraySlice<Int>, tableIndex: [Int]) -> WireState {
        let noteStates = input.state.noteStates
        return noteStates.withNotePlaces { notes in
            // Each note read in place (a copy of one would retain and release a dozen references).
            // Every body's UTF-8 goes into one buffer, the state's bodies.
            var text: [UInt8] = []
            text.reserveCapacity(slots.reduce(0) { total, slot in total + notes.read(slot) { $0.body.visibleCount } })
            var ranges: [Range<Int>] = []
            ranges.reserveCapacity(slots.count)
            for slot in slots {
                let start = text.count
                notes.read(slot) { $0.body.appendVisibleUTF8(to: &text) }
                ranges.append(start ..< text.count)
            }
            let entries = slots.map { slot in
                notes.read(slot) { note in
                    WireNoteState(replica: tableIndex[Int(note.id.agent)], counter: note.id.counter, title: note.title.value ?? "",
                                  tags: note.visibleTags, priority: note.priority.value ?? .normal,
                                  created: note.created, deleted: note.isDeleted)
                }
            }
            return WireState(title: input.title, notes: entries, bodies: WireState.BodyText(bytes: text, ranges: ranges))
        }
    }

    /// The deleted text that goes with a state section (the text column's contents): each
    /// note's deleted characters in document order, the notes in `slots` order.
    private static func deadText(_ input: StateSectionInput, slots: [Int]) -> [Unicode.Scalar] {
        var dead: [Unicode.Scalar] = []
        input.state.noteStates.withNotePlaces { notes in
            for slot in slots {
                notes.read(slot) { note in
                    if note.body.totalCount > note.body.visibleCount { dead += note.body.deletedElements }
                }
            }
        }
        return dead
    }

    /// The replicas a block holding `changes` mentions, as the log's agents in the order of
    /// their ids (the block's replica table): authors of its changes and anything its ops refer to.
    private func replicaTable(of order: ChangeIndices) -> [UInt32] {
        let log = self.log
        var used = [Bool](repeating: false, count: log.replicas.count)
        func markReferences(_ body: OpBody) {
            switch body {
            case .insertText(let n, let l, let r, _):
                used[Int(n.agent)] = true
                if !l.isNone { used[Int(l.agent)] = true }
                if !r.isNone { used[Int(r.agent)] = true }
            case .deleteText(let n, let t, _):
                used[Int(n.agent)] = true
                used[Int(t.agent)] = true
            default:
                _ = body.mapIDs { id in if !id.isNone { used[Int(id.agent)] = true }; return id }
            }
        }
        if order.count == log.changes.count {
            // Every change is in the block: the replicas that made one. Every id an op names is a
            // unit of a change of the log (a loaded log's references are checked as it is read,
            // `unorderedReference`; an edit names what exists), so its replica is one of them.
            // (Not found by walking every change and op: that walk would be a large save's work
            // before its state section's thread can start.)
            for a in used.indices where log.changes.hasChanges(of: a) { used[a] = true }
            assert({
                var named = used
                for op in log.ops {
                    _ = op.body.mapIDs { id in if !id.isNone { named[Int(id.agent)] = true }; return id }
                }
                return named == used
            }(), "an op names a replica without changes")
        } else {
            for ci in order { used[Int(log.changes.agent(ci))] = true }
            var pieces = OpPieces(order, in: log)
            while let piece = pieces.next() { markReferences(piece.op.body) }
        }
        return used.indices.filter { used[$0] }.map { UInt32($0) }.sorted { log.replicas[Int($0)] < log.replicas[Int($1)] }
    }

    /// A block holding `changes` (in that order), with replica ids in sorted order (`table`, from
    /// `replicaTable(of:)`). With `withText`, the inserts' text is written as the block's text
    /// column holds it (`WireBlock.insertedUTF8`); without, it is left out and only counted
    /// (`WireBlock.textCount`): a block whose state section holds the text writes no other copy
    /// of it, and copying every character of a large notebook into the block was a tenth of its save.
    /// With `encodingOps`, each op is encoded as it is made (`WireBlock.encodedOps`), not held:
    /// for a block whose ops are not changed afterwards (no structures stored).
    private func makeBlock(changes order: ChangeIndices, rowOf: ChangeIndices, firstRow: Int, table: [UInt32]? = nil, withText: Bool = true,
                           encodingOps: Bool = false) -> WireBlock {
        // Read through a local: each access to `self.log` inside the loops and closures below
        // copied the whole op log (sixteen retains and releases), per change and per op.
        let log = self.log
        let table = table ?? replicaTable(of: order)
        var agentIndex = [UInt32](repeating: .max, count: log.replicas.count)
        for (i, a) in table.enumerated() { agentIndex[Int(a)] = UInt32(i) }
        // A constant for the closure to capture (a captured variable is checked on every access).
        let index = agentIndex
        @inline(__always) func remap(_ id: LocalID) -> LocalID { id.isNone ? id : LocalID(agent: index[Int(id.agent)], counter: id.counter) }

        var block = WireBlock()
        block.replicas = table.map { log.replicas[Int($0)] }
        block.firstRow = firstRow
        // Dependencies and extra fields are gathered here; the changes themselves are made one
        // at a time as the encoder reads them (a `WireChange` per change would be 48 bytes each).
        var depRows: [Int32] = [], extraBytes: [UInt8] = []
        depRows.reserveCapacity(order.count)
        // The log's interned strings, interned in the block once each (-1: not yet).
        var blockString = [Int](repeating: -1, count: log.strings.count)
        var k = 0
        while k < order.count {
            let ci = order[k]
            let c = log.changes[ci]
            if blockString[Int(c.author)] < 0 { blockString[Int(c.author)] = block.intern(log.strings[Int(c.author)]) }
            if blockString[Int(c.message)] < 0 { blockString[Int(c.message)] = block.intern(log.strings[Int(c.message)]) }
            for d in log.deps(of: ci) { depRows.append(Int32(rowOf[d])) }
            if c.extra != 0 { extraBytes.append(contentsOf: log.extras[Int(c.extra)]) }
            k += 1
            // The changes of its log run that come right after it in the order share its author,
            // message and (no) extra fields, and each depends on the one before, on the row
            // before (change `order[m]` is on row `firstRow + m`).
            guard c.extra == 0 else { continue }
            assert(rowOf[ci] == firstRow + k - 1)
            let j = order.consecutiveEnd(after: k - 1, below: log.changes.runEnd(of: ci))
            depRows.appendRows(firstRow + k - 1 ..< firstRow + j - 1)
            k = j
        }
        block.depRows = depRows
        block.extraBytes = extraBytes
        block.generatedChanges = GeneratedChanges(log: log, order: order, replicaIndex: index, stringIndex: blockString)
        // The op being gathered and its first unit's id (no optional tuple: that one was
        // destroyed through the runtime's generic witnesses, op after op).
        var pending: Op?
        var pendingFirstID = LocalID.none
        var lv = 0
        var utf8: [UInt8] = []
        if order.count == log.changes.count {
            // Every op is in the block: its text is the log's, and its ops about as many (cut
            // where the order leaves the log's, joined where it returns), so the arrays are
            // made once instead of doubling (and copying) over the walk.
            if withText { utf8.reserveCapacity(log.textCount) }
            if !encodingOps { block.ops.reserveCapacity(log.ops.count) }
        }
        var encoder = encodingOps ? OpColumnEncoder(structures: false) : nil
        var textCount = 0
        let logText = log.textView
        var pieces = OpPieces(order, in: log)
        while let piece = pieces.next() {
            let ci = piece.change, op = piece.op
            let body: OpBody
            switch op.body {
            case .insertText(let n, let l, let r, let s):
                body = .insertText(note: remap(n), originLeft: remap(l), originRight: remap(r), contentStart: textCount)
                if withText { logText.appendUTF8(s ..< s + op.length, to: &utf8) }
                textCount += op.length
            case .deleteText(let n, let t, let reversed):
                body = .deleteText(note: remap(n), target: remap(t), reversed: reversed)
            default:
                body = op.body.mapIDs(remap)
            }
            let next = Op(lv: lv, length: op.length, body: body)
            let firstID = remap(log.localID(ofLV: op.lv, change: ci))
            lv += op.length
            if let p = pending, let merged = OpLog.merge(p, firstID: pendingFirstID, next, firstID: firstID) {
                pending = merged
            } else {
                if let p = pending {
                    if encoder == nil { block.ops.append(p) } else { encoder?.append(p) }
                }
                pending = next
                pendingFirstID = firstID
            }
        }
        if let p = pending {
            if encoder == nil { block.ops.append(p) } else { encoder?.append(p) }
        }
        if let made = encoder.take() {
            block.encodedOps = (made.columnsSoFar(), made.rows, made.units, made.predecessors)
        }
        if withText { block.insertedUTF8 = (utf8, textCount) } else { block.placeholderCount = textCount }
        return block
    }

    /// The ops of the changes in `order`, cut where the order leaves the log's order, each with
    /// the index of the change holding its first unit. Changes whose units follow each other in
    /// the log (most of them: the log is in causal order too) are taken as one stretch, so a run
    /// of typing made of many changes stays one op. An iterator rather than a function taking a
    /// closure: a closure's captured variables have their exclusive access checked at run time
    /// on every use, about 80 instructions a piece in a save.
    struct OpPieces: IteratorProtocol {
        private let order: ChangeIndices
        private let log: OpLog
        /// The position in `order` where the next stretch starts.
        private var k = 0
        /// The current stretch's local versions, the next op to cut from it, and the change
        /// holding the last piece's first unit.
        private var start = 0, end = 0, opIndex = 0, change = 0

        init(_ order: ChangeIndices, in log: OpLog) {
            self.order = order
            self.log = log
        }

        /// An op or a part of one, and the change holding its first unit. (A struct: an optional
        /// tuple was copied and destroyed through the runtime's generic witnesses, piece after piece.)
        struct Piece {
            var change: Int
            var op: Op
        }

        mutating func next() -> Piece? {
            while opIndex >= log.ops.count || log.ops[opIndex].lv >= end {
                guard k < order.count else { return nil }
                start = log.changes.lvStart(order[k])
                // Changes tile the log's local versions in order, so the next change index always
                // starts where the one before ends; another change may too (when those between
                // are empty).
                var j = order.consecutiveEnd(after: k, below: log.changes.count)
                var last = order[j - 1]
                while j < order.count {
                    let c = order[j]
                    guard c == last + 1 || log.changes.lvStart(c) == log.changes.lvEnd(last) else { break }
                    j = order.consecutiveEnd(after: j, below: log.changes.count)
                    last = order[j - 1]
                }
                end = log.changes.lvEnd(last)
                change = order[k]
                k = j
                opIndex = end > start ? log.opIndex(containingLV: start) : log.ops.count
            }
            let op = log.ops[opIndex]
            let from = max(start, op.lv), to = min(end, op.lv + op.length)
            if from != start { change = log.changeIndex(containingLV: from, from: change) }
            opIndex += 1
            return Piece(change: change, op: from == op.lv && to == op.lv + op.length ? op : log.slice(op, from: from, to: to, change: change))
        }
    }
}
