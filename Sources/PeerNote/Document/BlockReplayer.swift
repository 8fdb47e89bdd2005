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
    static let writesStructures = ProcessInfo.processInfo.environment["PEERNOTE_WRITE_FORMAT"] == "3"

    /// `save(mode)`; with `writeStructures`, a compact save's base block with a state section is
    /// written as format version 3, else as version 2 (its state section without the bodies'
    /// structures, every insert's origins stored).
    @_spi(Diagnostics) public func save(_ mode: SaveMode, writeStructures: Bool) -> [UInt8] {
        save(mode, writeStructures: writeStructures, concurrentFrom: WireCodec.concurrentEncodingThreshold)
    }

    /// `save(mode, writeStructures:)`; a compact save of `concurrentFrom` changes or more makes
    /// its state section on another thread (tests set it to compare the two ways).
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
            let opRows = p.opRows + block.ops.count, predecessors = p.predecessors + block.predecessorCount
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
        var block: WireBlock
        if order.count >= concurrentFrom && !writeStructures, let input = stateSectionInput(),
           case let replicaTable = table.map({ log.replicas[Int($0)] }), let slots = Self.stateSectionSlots(input, replicaTable: replicaTable) {
            // A large block: its state section is made, encoded and compressed on another thread
            // while this one makes the rest of the block and encodes its columns but the text
            // column; that column (the notes' deleted text) is made by whichever thread is done
            // first (on the benchmark's documents, the other one for a merged copy, this one for
            // a single writer's); the column set is then compressed, on both threads. Two
            // hand-overs only: a third, to encode the columns on both threads, gains nothing a
            // fresh process can measure (Benchmarks/HISTORY.md, 2026-11-25).
            let deadTextWork = Claim()
            let makeDeadText: @Sendable () -> (text: [Unicode.Scalar], column: [UInt8]) = {
                let dead = Self.deadText(input, slots: slots)
                return (dead, WireCodec.deadTextColumn(dead))
            }
            let (made, (state, compressed, deadThere)) = Concurrently.run({ () -> (WireBlock, [UInt64: [UInt8]], [String], (text: [Unicode.Scalar], column: [UInt8])?) in
                let block = makeBlock(changes: order, rowOf: rowOf, firstRow: 0, table: table)
                let (raw, strings) = WireCodec.encodeColumns(block, stateSection: true, concurrent: false)
                return (block, raw, strings, deadTextWork.take() ? makeDeadText() : nil)
            }, alongside: { () -> (WireState, CompressedSection, (text: [Unicode.Scalar], column: [UInt8])?) in
                let state = Self.stateSection(input, slots: slots, replicaTable: replicaTable)
                let compressed = WireCodec.compressState(state)
                return (state, compressed, deadTextWork.take() ? makeDeadText() : nil)
            })
            guard let dead = made.3 ?? deadThere else { preconditionFailure("neither thread made the deleted text") }
            var raw = made.1
            if !dead.column.isEmpty { raw[ColumnID.opText.rawValue] = dead.column }
            block = made.0
            block.deadText = dead.text
            block.encodedColumns = EncodedColumns(bytes: ColumnSet.encode(raw), strings: made.2)
            block.state = state
            block.compressedState = compressed
        } else {
            block = makeBlock(changes: order, rowOf: rowOf, firstRow: 0, table: table)
            if let input = stateSectionInput(), let slots = Self.stateSectionSlots(input, replicaTable: block.replicas) {
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
        let bytes = Self.encodeLoadable(&block, fileBefore: 0, changes: rowOf.count, opRows: block.ops.count, predecessors: predecessors)
        persisted = Persisted(bytes: bytes, rowOfChange: rowOf, opRows: block.ops.count, predecessors: predecessors, units: log.lvCount, unknownFields: unknownFields)
        return bytes
    }

    /// The block's bytes, padded when needed so that the file (`fileBefore` bytes before the
    /// block, holding `changes`, `opRows` and `predecessors` in all with it) meets the limits
    /// every reader enforces: runs of identical edits compress so well that, unpadded, a file of
    /// 70,000 keystrokes would be 330 bytes, more changes than a file that small may hold.
    static func encodeLoadable(_ block: inout WireBlock, fileBefore: Int, changes: Int, opRows: Int, predecessors: Int) -> [UInt8] {
        let required = WireCodec.Limits().requiredFileSize(
            changes: changes, ops: opRows, predecessors: predecessors, dependencies: block.depRows.count,
            units: block.ops.reduce(0) { $0 + $1.length }, insertedScalars: block.text.count)
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
        guard !log.text.isEmpty, concurrentValues.isEmpty else { return nil }
        return StateSectionInput(state: state, replicas: log.replicas, title: title)
    }

    /// The notes of a compact save's state section (`noteStates` indices), in its order: the
    /// notes in the order of notes, then the deleted ones; nil when the state cannot be written
    /// as a state section for a block whose replica table is `replicaTable`.
    private static func stateSectionSlots(_ input: StateSectionInput, replicaTable: [ReplicaID]) -> [Int]? {
        let state = input.state
        let all = state.allNoteSlotsInOrder
        guard all.count == state.noteStates.count else { return nil }
        let table = Set(replicaTable)
        guard all.allSatisfy({ table.contains(input.replicas[Int(state.noteStates[$0].id.agent)]) }) else { return nil }
        return all.filter { !state.noteStates[$0].isDeleted } + all.filter { state.noteStates[$0].isDeleted }
    }

    /// The state section of a compact save (see `WireState`), for a block whose replica table
    /// is `replicaTable` (`slots` from `stateSectionSlots`).
    private static func stateSection(_ input: StateSectionInput, slots: [Int], replicaTable: [ReplicaID]) -> WireState {
        var index: [ReplicaID: Int] = [:]
        for (i, r) in replicaTable.enumerated() { index[r] = i }
        let notes = slots.map { slot in
            let n = input.state.noteStates[slot]
            return WireNoteState(replica: index[input.replicas[Int(n.id.agent)]] ?? 0, counter: n.id.counter, title: n.title.value ?? "",
                                 tags: n.visibleTags, priority: n.priority.value ?? .normal, created: n.created, deleted: n.isDeleted,
                                 body: String(scalars: n.body.visibleElements))
        }
        return WireState(title: input.title, notes: notes)
    }

    /// The deleted text that goes with a state section (the text column's contents): each
    /// note's deleted characters in document order, the notes in `slots` order.
    private static func deadText(_ input: StateSectionInput, slots: [Int]) -> [Unicode.Scalar] {
        var dead: [Unicode.Scalar] = []
        for slot in slots {
            let body = input.state.noteStates[slot].body
            if body.totalCount > body.visibleCount { dead += body.deletedElements }
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
    /// `replicaTable(of:)`).
    private func makeBlock(changes order: ChangeIndices, rowOf: ChangeIndices, firstRow: Int, table: [UInt32]? = nil) -> WireBlock {
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
        if order.count == log.changes.count {
            // Every op is in the block: its text is the log's, and its ops about as many (cut
            // where the order leaves the log's, joined where it returns), so the arrays are
            // made once instead of doubling (and copying) over the walk.
            block.text.reserveCapacity(log.text.count)
            block.ops.reserveCapacity(log.ops.count)
        }
        var pieces = OpPieces(order, in: log)
        while let piece = pieces.next() {
            let ci = piece.change, op = piece.op
            let body: OpBody
            switch op.body {
            case .insertText(let n, let l, let r, let s):
                body = .insertText(note: remap(n), originLeft: remap(l), originRight: remap(r), contentStart: block.text.count)
                block.text.append(contentsOf: log.text[s ..< s + op.length])
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
                if let p = pending { block.ops.append(p) }
                pending = next
                pendingFirstID = firstID
            }
        }
        if let p = pending { block.ops.append(p) }
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

    // MARK: Loading

    /// The notebook a file holds, as `load(bytes).notebook` gives it. A compact save of a
    /// document without conflicts stores its state beside its history, and then this reads
    /// only that (checksummed, not yet checked against the history: `load` and
    /// `pnmerge validate` do that); other files are loaded in full.
    public static func readNotebook(_ bytes: [UInt8]) throws(PeerNoteError) -> Notebook {
        let raws: [RawBlock]
        do throws(FormatError) { raws = try BlockCodec.decode(bytes) } catch {
            throw error.documentError
        }
        guard raws.count == 1 else { return try load(bytes).notebook }
        let read: (documentID: UUID, replicas: [ReplicaID], state: WireState)?
        do throws(FormatError) { read = try WireCodec.decodeState(raws[0]) } catch {
            throw error.documentError
        }
        guard let (id, replicas, state) = read else { return try load(bytes).notebook }
        let notes = state.notes.filter { !$0.deleted }.map { n in
            Note(id: NoteID(replica: replicas[n.replica], counter: n.counter), title: n.title, body: n.body, tags: n.tags,
                 priority: n.priority, created: Date(timeIntervalSince1970: TimeInterval(n.created)), isDeleted: false)
        }
        return Notebook(id: id, title: state.title, notes: notes, conflicts: [])
    }

    /// Reads and verifies several documents at once, each as `load` does, on up to one thread
    /// per processor: a merge reads two copies, which a machine with a second core reads in
    /// about the time of the larger. The results are in the order of `files`; each fails or not on its own.
    public static func loadAll(_ files: [[UInt8]]) -> [Result<Document, PeerNoteError>] {
        // The largest file is read on the calling thread, which is running already (a new
        // thread takes a moment to start) and whose malloc arena then holds the document that
        // is usually merged into and saved; the others' arenas keep only smaller ones.
        // Each is read on one thread: the files already keep the cores busy (a second thread for
        // the largest one's base block makes 3 busy threads on 2 cores, which is no faster).
        let largest = files.indices.max { files[$0].count < files[$1].count } ?? 0
        let concurrentFrom = files.count > 1 ? Int.max : WireCodec.concurrentEncodingThreshold
        return Concurrently.map(files, here: largest) { bytes in Result { () throws(PeerNoteError) in try load(bytes, concurrentFrom: concurrentFrom) } }
    }

    /// Reads and verifies a document: checksums, structure, causal integrity (dependencies
    /// present, sequence numbers contiguous) and references (every op names something that exists).
    public static func load(_ bytes: [UInt8]) throws(PeerNoteError) -> Document {
        try load(bytes, concurrentFrom: WireCodec.concurrentEncodingThreshold)
    }

    /// `load(_:)`; a base block of `concurrentFrom` changes and ops or more is replayed on two
    /// threads (see `BlockReplayer.replayBase`; tests set it to compare the two ways).
    static func load(_ bytes: [UInt8], concurrentFrom: Int) throws(PeerNoteError) -> Document {
        let raws: [RawBlock]
        do { raws = try BlockCodec.decode(bytes) } catch {
            throw error.documentError
        }
        let blocks: [WireBlock]
        // Inflated on two threads when the base block is replayed on two (`concurrentFrom`).
        let inflatingFrom = concurrentFrom == .max ? Int.max : min(concurrentFrom, WireCodec.concurrentInflateThreshold)
        var totals = WireCodec.Totals()
        do { blocks = try WireCodec.decodePayloads(raws, fileSize: bytes.count, concurrentFrom: inflatingFrom, totals: &totals) } catch {
            throw error.documentError
        }
        guard let first = blocks.first, first.kind == .base, let docID = first.documentID, let genesis = first.genesis else {
            throw .invalidDocument(offset: 0, message: "the first block is not a base block")
        }
        var replayer = BlockReplayer(genesis: genesis)
        // Integration work a file may ask for, proportional to its size (hostile files could ask
        // for quadratic work: thousands of concurrent inserts at one place).
        let budget = VerifiedFile.workBudget(fileSize: bytes.count)
        replayer.state.workBudget = budget
        var unknownFields = first.unknownFields
        var rows = 0
        var crc: UInt32 = 0
        var crcEnd = 0
        for block in blocks {
            if block.offset > 0 {
                try Self.checkPlacement(of: block, in: bytes, crc: &crc, checksummed: &crcEnd, rows: rows)
                // A later block's value for a key replaces an earlier one's (a newer writer updated it).
                for f in block.unknownFields where !unknownFields.contains(f) {
                    let key = WireCodec.unknownFieldKey(f)
                    unknownFields.removeAll { WireCodec.unknownFieldKey($0) == key }
                    unknownFields.append(f)
                }
            }
            let structured = block.state?.storesStructures ?? false
            // A block storing its bodies' structures: the text ops are applied to the log alone,
            // then the bodies built from the structures.
            replayer.state.bodiesFromStructures = structured
            if block.offset == 0 && block.changes.count + block.ops.count >= concurrentFrom {
                try replayer.replayBase(block)
            } else {
                try replayer.replay(block)
            }
            replayer.state.bodiesFromStructures = false
            if let state = block.state {
                // A state section shows the state its block's changes give in their canonical
                // order, which a compact save writes them in: a block in another order is refused
                // (it could show one notebook to a reader of the section and another to one of
                // the history). Only a base block has one, and it is read first.
                if let bad = replayer.log.firstOutOfCanonicalOrder() {
                    throw .invalidDocument(offset: block.offset, message: "change at row \(bad): a block with a state section holds its changes in canonical order (by Lamport timestamp, then replica id), and this one comes before the change above it")
                }
                if structured {
                    try replayer.buildBodies(state, dead: block.deadText, block: block)
                } else {
                    try replayer.fillText(state, dead: block.deadText, block: block)
                }
            }
            rows += block.changes.count
        }
        // The state is the changes applied in the canonical order (`DocState.canonical`): a file
        // whose rows are in another order (appended blocks) is applied again in that order when
        // its rows are not (an honest history gives the same state both ways; a crafted one may
        // not, and then only the canonical order is the same in every copy). Within a budget of
        // its own, as large as the first.
        // What a save appending to these bytes is checked from (`VerifiedFile`): the state the
        // rows give in file order, which is the document's unless it was replayed canonically.
        var verified: VerifiedFile?
        if replayer.log.firstOutOfCanonicalOrder() != nil {
            try replayer.replayCanonically(workBudget: VerifiedFile.workBudget(fileSize: bytes.count)) { row in
                blocks.last { $0.firstRow <= row }?.offset ?? 0
            }
        } else {
            let spent = budget - replayer.state.workBudget
            var state = replayer.state
            state.workBudget = .max
            verified = VerifiedFile(bytes: bytes, genesis: genesis, log: replayer.log, state: state, workSpent: spent, totals: totals,
                                    rows: rows, checksum: crc, checksummed: crcEnd)
        }
        replayer.state.workBudget = .max
        let doc = Document(id: docID, genesis: genesis, log: replayer.log, state: replayer.state, replica: .random(), author: "")
        // A state section is written only without conflicts (`readNotebook` shows none); the
        // registers were checked with the text, which leaves notes deleted while edited.
        if blocks.count == 1, first.state != nil, !doc.concurrentValues.isEmpty {
            throw .invalidDocument(offset: first.offset, message: "the state section does not match the history: the history has conflicts")
        }
        doc.unknownFields = unknownFields
        doc.persisted = Persisted(bytes: bytes, rowOfChange: ChangeIndices(0 ..< rows), opRows: blocks.reduce(0) { $0 + $1.ops.count },
                                  predecessors: blocks.reduce(0) { $0 + $1.predecessorCount }, units: doc.log.lvCount, unknownFields: unknownFields,
                                  verified: verified)
        return doc
    }

}

/// Verifies blocks and applies them to an op log and a state: the work of `Document.load`,
/// done on plain values (not through the document's properties) so that it stays fast for
/// logs of millions of changes.
struct BlockReplayer {
    var log = OpLog()
    var state = DocState()
    let genesis: ChangeID

    /// Verifies and applies one block's changes, in order.
    mutating func replay(_ block: WireBlock) throws(PeerNoteError) {
        // Replayed into locals moved out of `self` (unique, so nothing is copied): reading a
        // stored property's members through `self` in a loop copied the whole log per op.
        var log = self.log, state = self.state
        self.log = OpLog()
        self.state = DocState()
        defer { self.log = log; self.state = state }
        try Self.replay(block, genesis: genesis, log: &log, state: &state)
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
            // the log instead, as `replay` does.
            var state = DocState()
            state.workBudget = budget
            state.bodiesFromStructures = bodiesFromStructures
            do throws(ApplyFailure) { try state.applyOps(of: log, from: 0, firstChange: 0) } catch {
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
    mutating func replayCanonically(workBudget: Int, blockOffset: (Int) -> Int) throws(PeerNoteError) {
        do throws(ApplyFailure) { state = try DocState.canonical(of: log, workBudget: workBudget) } catch {
            throw .invalidDocument(offset: blockOffset(error.change), message: "change at row \(error.change): change \(log.changeID(error.change)): \(error.error.description(in: log))")
        }
    }

    private static func applyError(_ error: ApplyFailure, block: WireBlock, firstChange: Int, log: OpLog) -> PeerNoteError {
        let row = block.firstRow + (error.change - firstChange)
        return .invalidDocument(offset: block.offset, message: "change at row \(row): change \(log.changeID(error.change)): \(error.error.description(in: log))")
    }

    private static func replay(_ block: WireBlock, genesis: ChangeID, log: inout OpLog, state: inout DocState, applying: Bool = true) throws(PeerNoteError) {
        let agents = block.replicas.map { log.agent(for: $0) }
        let mapAgent: (LocalID) -> LocalID = { id in id.isNone || id.isUnstated ? id : LocalID(agent: agents[Int(id.agent)], counter: id.counter) }
        let startLV = log.lvCount
        log.reserve(changes: block.changes.count, ops: block.ops.count, text: block.text.count)
        // The block's authors and messages, interned once (changes then refer to them by index).
        let stringMap = block.strings.map { log.internString($0) }
        let firstChange = log.changes.count
        var opIndex = 0
        var used = 0              // units of block.ops[opIndex] already taken
        var opFirstID = LocalID.none
        var next = 0              // the next change not yet appended (a stretch appends several)
        // Nothing here captures `block`: a capture would copy the whole block for every op.
        let blockOffset = block.offset
        let ops = block.ops, blockText = block.text, changes = block.changes
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
                                                  lengths: changes.lengths(i ..< j), scalars: blockText[s + used ..< s + used + units]) {
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
                if j > i, let piece = try? WireBlock.piece(of: ops[opIndex], text: blockText, used: used, take: units, firstID: opFirstID, mapAgent: mapAgent),
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
                   log.extendLastInsert(by: take, scalars: blockText[s + used ..< s + used + take]) {
                    used += take
                    remaining -= take
                    if used == op.length { opIndex += 1; used = 0 }
                    continue
                }
                let piece: WireBlock.Piece
                do { piece = try WireBlock.piece(of: op, text: blockText, used: used, take: take, firstID: opFirstID, mapAgent: mapAgent) } catch {
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
        guard applying else { return }
        // Apply the block's ops to the state, whole runs at a time (a run spans the changes
        // of one replica that continue each other), in causal order.
        do throws(ApplyFailure) { try state.applyOps(of: log, from: startLV, firstChange: firstChange) } catch {
            throw applyError(error, block: block, firstChange: firstChange, log: log)
        }
    }

    /// Puts the text of a block stored in document order (its state section and deleted text)
    /// in place of the placeholders replay inserted, then checks that the state section shows
    /// what the replayed history gives. Called right after `replay(block)`.
    mutating func fillText(_ snapshot: WireState, dead: [Unicode.Scalar], block: WireBlock) throws(PeerNoteError) {
        try Self.fillText(snapshot, dead: dead, block: block, log: &log, state: &state)
    }

    /// `fillText` on a given log and state (salvage replays into a document's own).
    static func fillText(_ snapshot: WireState, dead: [Unicode.Scalar], block: WireBlock, log: inout OpLog, state: inout DocState) throws(PeerNoteError) {
        func fail(_ message: String) -> PeerNoteError {
            .invalidDocument(offset: block.offset, message: "the state section does not match the history: \(message)")
        }
        let ids = try listedNotes(snapshot, block: block, log: &log, state: state)
        var deadPos = 0
        for (k, note) in snapshot.notes.enumerated() {
            let live = note.body.scalarArray
            var livePos = 0
            var ok = true
            _ = state.rewriteBody(of: ids[k]) { _, length, deleted in
                let source = deleted ? dead : live
                let pos = deleted ? deadPos : livePos
                guard ok, pos + length <= source.count else { ok = false; return [] }
                if deleted { deadPos += length } else { livePos += length }
                return source[pos ..< pos + length]
            }
            guard ok, livePos == live.count else { throw fail("note \(k)'s text does not fit its body") }
        }
        try checkRegisters(snapshot, ids: ids, block: block, state: state)
        // Each insert's characters, from its note: a note's elements in the order it integrated
        // them are its inserts' characters in op order (the block was just replayed, in op order,
        // into an empty state).
        // Arenas by note position in `ids`; the dictionary is consulted only when the note
        // changes from one insert op to the next (hashing on every op cost a tenth of fillText).
        let arenas = ids.map { id in state.slot(of: id).map { state.noteStates[$0].body.insertionOrder } ?? [] }
        var used = [Int](repeating: 0, count: ids.count)
        var position: [LocalID: Int] = [:]
        for (k, id) in ids.enumerated() { position[id] = k }
        var current = -1
        let complete = log.rewriteInsertedText { note, length in
            if current < 0 || ids[current] != note {
                guard let k = position[note] else { return nil }
                current = k
            }
            let start = used[current]
            guard start + length <= arenas[current].count else { return nil }
            used[current] = start + length
            return arenas[current][start ..< start + length]
        }
        guard complete, zip(used, arenas).allSatisfy({ $0 == $1.count }) else { throw fail("the inserted text does not add up") }
        guard deadPos == dead.count else { throw fail("deleted text is left over") }
    }

    /// The ids of the notes a state section lists, once checked to be the history's notes, each
    /// once, in the order the section lists them in (live notes in the order of notes, then
    /// deleted ones).
    private static func listedNotes(_ snapshot: WireState, block: WireBlock, log: inout OpLog, state: DocState) throws(PeerNoteError) -> [LocalID] {
        let agents = block.replicas.map { log.agent(for: $0) }
        let ids = snapshot.notes.map { LocalID(agent: agents[$0.replica], counter: $0.counter) }
        guard Set(ids).count == ids.count, ids.count == state.noteStates.count else {
            throw Self.snapshotMismatch(block, "it lists \(ids.count) notes, the history has \(state.noteStates.count)")
        }
        let expectedOrder = state.orderedNoteSlots.map { state.noteStates[$0].id }
            + state.allNoteSlotsInOrder.filter { state.noteStates[$0].isDeleted }.map { state.noteStates[$0].id }
        guard expectedOrder == ids else { throw Self.snapshotMismatch(block, "notes are not listed in document order") }
        return ids
    }

    /// Checks each listed note's title, tags, priority, creation time and deleted flag, and the
    /// notebook's title, against the history's.
    private static func checkRegisters(_ snapshot: WireState, ids: [LocalID], block: WireBlock, state: DocState) throws(PeerNoteError) {
        for (k, note) in snapshot.notes.enumerated() {
            guard let slot = state.slot(of: ids[k]) else { throw Self.snapshotMismatch(block, "note \(k) does not exist") }
            // In place: copying each note to compare it was a tenth of loading a notebook of many notes.
            // A deleted note's registers may hold concurrent values: readers do not show it, and
            // its conflicts are not listed until it is restored (writers wrote such files, and
            // must go on reading them); the section holds the values the history shows.
            let shown = !note.deleted
            guard (state.noteStates[slot].title.value ?? "").hasSameScalars(as: note.title), !(shown && state.noteStates[slot].title.isConflicted),
                  state.noteStates[slot].visibleTags.elementsEqual(note.tags, by: { $0.hasSameScalars(as: $1) }),
                  state.noteStates[slot].priority.value ?? .normal == note.priority, !(shown && state.noteStates[slot].priority.isConflicted),
                  state.noteStates[slot].created == note.created, state.noteStates[slot].isDeleted == note.deleted,
                  !(shown && state.noteStates[slot].position.isConflicted) else {
                throw Self.snapshotMismatch(block, "note \(k) differs")
            }
        }
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
        let ids = try listedNotes(snapshot, block: block, log: &log, state: state)
        let agents = block.replicas.map { log.agent(for: $0) }
        // Each body's elements in list order: visible ones from the section's body, deleted ones
        // from the deleted text.
        var stored: [StoredBody] = []
        stored.reserveCapacity(ids.count)
        var deadPos = 0
        for (k, note) in snapshot.notes.enumerated() {
            let runs = note.structure ?? []
            let live = note.body.scalarArray
            var livePos = 0
            var elements: [Unicode.Scalar] = []
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
            for (k, body) in bodies.enumerated() {
                do throws(ApplyError) { try state.setBody(body, of: ids[k]) } catch { throw fail("note \(k) does not exist") }
            }
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
            }
            state = replayed
        }
        if let problem = derivedOriginProblem(log) { throw fail(problem) }
        try checkRegisters(snapshot, ids: ids, block: block, state: state)
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
        default:
            var found: String?
            _ = body.mapIDs { id in
                if found == nil { found = problem(id, me, myLamport, log) }
                return id
            }
            return found
        }
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

extension Document {
    /// The checks that place an append block in its file: it is an append block, its
    /// `previousCRC` is the CRC-32 of the bytes before it (`crc` is that of
    /// `bytes[..<checksummed]`, carried forward here, so a file is checksummed once: linear in
    /// its size), and its `firstRow` is the number of changes before it (`rows`). Used by `load`
    /// for every block after the first and by `checkAppended`, so both refuse alike.
    static func checkPlacement(of block: WireBlock, in bytes: [UInt8], crc: inout UInt32, checksummed: inout Int,
                               rows: Int) throws(PeerNoteError) {
        guard block.kind == .append else { throw .invalidDocument(offset: block.offset, message: "a second base block") }
        crc = CRC32.checksum(bytes[checksummed ..< block.offset], initial: crc)
        checksummed = block.offset
        guard block.previousCRC == crc else {
            throw .invalidDocument(offset: block.offset, message: "appended block does not belong after the bytes before it (checksum of earlier blocks differs)")
        }
        guard block.firstRow == rows else {
            throw .invalidDocument(offset: block.offset, message: "appended block starts at change \(block.firstRow), the file holds \(rows) before it")
        }
    }
}
