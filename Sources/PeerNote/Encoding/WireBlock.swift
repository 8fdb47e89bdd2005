#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One change as it is stored in a block: unverified. `replica` indexes the
/// block's replica table. Its dependencies are rows (positions of changes in
/// the file, counted across blocks): `WireBlock.deps(of:)`. `author` and
/// `message` index `WireBlock.strings`; its unknown fields are
/// `WireBlock.extra(of:)`.
///
/// A plain value (no references), so that reading a block of millions of
/// changes allocates a few arrays, not several per change. Its fields are
/// stored in 32 bits (48 bytes a change, not 80: a load or save of a long
/// history holds one per change); the reader checks that they fit
/// (`WireChange.fits`) before it builds one.
struct WireChange: Sendable, Equatable {
    private var replica32: UInt32
    var seq: UInt32
    private var length32: UInt32
    private var depCount32: UInt32
    var time: Int64
    private var depStart32: UInt32
    private var author32: UInt32
    private var message32: UInt32
    private var extraStart32: UInt32
    private var extraCount32: UInt32

    /// Whether `value` fits a field's 32 bits.
    @inline(__always) static func fits(_ value: Int) -> Bool { value >= 0 && value <= Int(UInt32.max) }

    init(replica: Int, seq: UInt32, length: Int, time: Int64, depStart: Int, depCount: Int, author: Int, message: Int, extraStart: Int, extraCount: Int) {
        replica32 = UInt32(replica)
        self.seq = seq
        length32 = UInt32(length)
        depCount32 = UInt32(depCount)
        self.time = time
        depStart32 = UInt32(depStart)
        author32 = UInt32(author)
        message32 = UInt32(message)
        extraStart32 = UInt32(extraStart)
        extraCount32 = UInt32(extraCount)
    }

    var replica: Int { get { Int(replica32) } set { replica32 = UInt32(newValue) } }
    var length: Int { get { Int(length32) } set { length32 = UInt32(newValue) } }
    var depStart: Int { get { Int(depStart32) } set { depStart32 = UInt32(newValue) } }
    var depCount: Int { get { Int(depCount32) } set { depCount32 = UInt32(newValue) } }
    var author: Int { get { Int(author32) } set { author32 = UInt32(newValue) } }
    var message: Int { get { Int(message32) } set { message32 = UInt32(newValue) } }
    var extraStart: Int { get { Int(extraStart32) } set { extraStart32 = UInt32(newValue) } }
    var extraCount: Int { get { Int(extraCount32) } set { extraCount32 = UInt32(newValue) } }
}

/// The contents of one block: unverified data. Op ids (`LocalID.agent`) index
/// `replicas`; `insertText` content indexes `text`. `Document` verifies it by
/// replaying it into an op log.
struct WireBlock: Sendable {
    var kind: BlockKind = .base
    var documentID: UUID?
    var genesis: ChangeID?
    var replicas: [ReplicaID] = []
    var changes = WireChanges()
    /// Instead of `changes`, when saving: the changes made one at a time, in order, as the
    /// encoder reads them (so that a save of a long history does not hold one `WireChange` per
    /// change). Their dependencies and extra fields are `depRows` and `extraBytes` back to back
    /// (their `depStart` and `extraStart` are not used).
    var generatedChanges: GeneratedChanges?
    /// The dependency rows of every change, back to back. 32 bits each (a long history holds
    /// one per change): the reader refuses a block whose rows pass `WireBlock.maxRow`.
    var depRows: [Int32] = []
    /// Authors and messages the changes name; index 0 is the empty string. Each spelling once,
    /// by its exact Unicode scalars (`ExactString`).
    var strings: [String] = [""]
    private var stringIndex: [ExactString: Int] = [ExactString(""): 0]
    /// The unknown fields of every change, back to back.
    var extraBytes: [UInt8] = []
    var ops: [Op] = []
    /// The characters insert ops insert, in op order. A block read with a state section holds
    /// placeholders here (its text is in document order: `state` and `deadText`) until the
    /// loader has replayed it and knows which character is which.
    var text: [Unicode.Scalar] = []
    /// Set when a block with a state section was read without placeholders
    /// (`WireCodec.decodePayloads(_:fileSize:limits:concurrentFrom:totals:placeholders:)`):
    /// `text` is then empty, and its ops insert this many characters, which are known only once
    /// the block is replayed (the state section's bodies and `deadText`, in document order).
    /// A save's block with a state section leaves `text` empty the same way: the section and
    /// `deadText` are what it writes of the text.
    /// Nil when `text` holds what the ops insert (placeholders included).
    var placeholderCount: Int?
    /// When saving: the characters the insert ops insert, in op order, already as the text
    /// column holds them (UTF-8), and how many they are; `text` is then empty. A save without a
    /// state section makes these rather than `text`, a quarter of its size for most text (a
    /// notebook with a conflict is saved so, its whole text in the block).
    var insertedUTF8: (bytes: [UInt8], count: Int)?
    /// How many characters the block's insert ops insert: what `text` holds or stands for.
    var textCount: Int { placeholderCount ?? insertedUTF8?.count ?? text.count }
    /// The state section, when the block has one (see `WireState`).
    var state: WireState?
    /// With a state section: the inserted characters that are now deleted, note by note in the
    /// state's order, each in document order (the text column's contents).
    var deadText: [Unicode.Scalar] = []
    /// When saving: `state` encoded and compressed already (`WireCodec.compressState`), by a save
    /// that did it while it made the rest of the block. `state` then only says that the block
    /// has a section, and of which version (`Format.version(of:)`): its entries may be left out.
    var compressedState: CompressedSection?
    /// When saving: the column set encoded already (`WireCodec.encodeColumnSet`), likewise.
    var encodedColumns: EncodedColumns?
    var firstRow = 0
    var previousCRC: UInt32?
    /// Payload map entries this version does not know: raw CBOR of key then value.
    var unknownFields: [[UInt8]] = []
    /// Absolute offset of the block in its file (for error messages).
    var offset = 0
    /// Zero bytes to write in the padding field (key 11), so that the file meets the reader's
    /// limits (`WireCodec.Limits.requiredFileSize`); never kept when read.
    var padding = 0

    /// When saving: the ops encoded as the save made them, their columns but the text column
    /// (`OpColumnEncoder`), rather than held in `ops`, which is then empty: a large block's ops
    /// are as many as its log's, a copy of them all while the block is encoded.
    var encodedOps: (columns: [ColumnID: [UInt8]], rows: Int, units: Int, predecessors: Int)?
    /// How many op rows the block holds.
    var opRowCount: Int { encodedOps?.rows ?? ops.count }
    /// How many op units the block's ops hold.
    var opUnitCount: Int { encodedOps?.units ?? ops.reduce(0) { $0 + $1.length } }

    /// How many predecessors (overwritten values, removed tag adds) the block's ops list.
    var predecessorCount: Int {
        if let made = encodedOps { return made.predecessors }
        return ops.reduce(0) { n, op in
            switch op.body {
            case .setNotebookTitle(_, let p), .setNoteTitle(_, _, let p), .setPriority(_, _, let p),
                 .deleteNote(_, let p), .restoreNote(_, let p), .moveNote(_, _, _, let p), .removeTag(_, _, let p):
                n + p.count
            default:
                n
            }
        }
    }
}

extension Array where Element == Int32 {
    /// Appends the rows `rows` (those a run of changes, each on the row before, depends on).
    /// Grown once and filled through a pointer: `append(contentsOf:)` of a range goes through
    /// the generic sequence copy, about 30 instructions a row, and a long history has one per change.
    mutating func appendRows(_ rows: Range<Int>) {
        guard let first = rows.first, let last = rows.last else { return }
        precondition(first >= 0 && last <= Int(Int32.max))
        let start = count
        append(contentsOf: repeatElement(0, count: rows.count))
        withUnsafeMutableBufferPointer { p in
            var v = Int32(first)
            for i in start ..< p.count {
                p[i] = v
                v &+= 1
            }
        }
    }
}

/// A block's changes made on demand from an op log (see `WireBlock.generatedChanges`): the
/// log's changes `order`, with the block's replica and string indices.
struct GeneratedChanges: Sendable {
    let log: OpLog
    let order: ChangeIndices
    /// The block replica index of each log agent, and the block string index of each log string.
    let replicaIndex: [UInt32]
    let stringIndex: [Int]

    var count: Int { order.count }

    /// Change `i` of the block, for `i` in `0 ..< count`.
    @inline(__always)
    func change(_ i: Int) -> WireChange {
        let c = log.changes[order[i]]
        return WireChange(replica: Int(replicaIndex[Int(c.agent)]), seq: c.seq, length: c.length, time: c.time,
                          depStart: 0, depCount: Int(c.depCount), author: stringIndex[Int(c.author)], message: stringIndex[Int(c.message)],
                          extraStart: 0, extraCount: c.extra == 0 ? 0 : log.extras[Int(c.extra)].count)
    }

    /// The op units changes `range` hold in all; `range` as for `forEachLength(of:_:)`.
    @inline(__always) func units(of range: ClosedRange<Int>) -> Int {
        let first = order[range.lowerBound]
        return log.changes.lvEnd(first + range.count - 1) - log.changes.lvStart(first)
    }

    /// The lengths of changes `range`, in order (without making their records).
    /// `range` must be changes that follow each other in the log too (as `continuing(after:)` gives).
    @inline(__always) func forEachLength(of range: ClosedRange<Int>, _ body: (Int) -> Void) {
        let first = order[range.lowerBound]
        assert(order[range.upperBound] == first + range.count - 1)
        log.changes.forEachLength(first ..< first + range.count, body)
    }

    /// How many changes after change `i` each continue the one before as `WireChanges` stores
    /// a run (the next change of the same log run, right after it in the order, hence on the
    /// row before; no extra fields).
    func continuing(after i: Int) -> Int {
        let ci = order[i]
        guard log.changes[ci].extra == 0 else { return 0 }
        return order.consecutiveEnd(after: i, below: log.changes.runEnd(of: ci)) - i - 1
    }
}

extension WireBlock {
    /// How many changes the block holds.
    var changeCount: Int { generatedChanges?.count ?? changes.count }

    /// The largest row a block's change may be on (rows are stored in 32 bits).
    static let maxRow = Int(Int32.max)

    /// Change `i`'s dependencies: their rows.
    func deps(of i: Int) -> LazyMapCollection<ArraySlice<Int32>, Int> {
        depRows[changes[i].depStart ..< changes[i].depStart + changes[i].depCount].lazy.map { Int($0) }
    }
    func author(of i: Int) -> String { strings[changes[i].author] }
    func message(of i: Int) -> String { strings[changes[i].message] }
    func extra(of i: Int) -> ArraySlice<UInt8> { extraBytes[changes[i].extraStart ..< changes[i].extraStart + changes[i].extraCount] }

    /// The index of `s` in `strings`, adding it when new (the previous change's strings are checked first).
    mutating func intern(_ s: String) -> Int {
        if s.isEmpty { return 0 }
        if let last = changes.last {
            if strings[last.author].hasSameScalars(as: s) { return last.author }
            if strings[last.message].hasSameScalars(as: s) { return last.message }
        }
        let key = ExactString(s)
        if let i = stringIndex[key] { return i }
        strings.append(s)
        stringIndex[key] = strings.count - 1
        return strings.count - 1
    }

    /// Appends a change.
    mutating func appendChange(replica: Int, seq: UInt32, length: Int, deps: some Collection<Int>, time: Int64,
                               author: String, message: String, extra: some Collection<UInt8> = EmptyCollection()) {
        let a = intern(author), m = intern(message)
        let change = WireChange(replica: replica, seq: seq, length: length, time: time, depStart: depRows.count, depCount: deps.count,
                                author: a, message: m, extraStart: extraBytes.count, extraCount: extra.count)
        for d in deps { depRows.append(Int32(d)) }
        extraBytes.append(contentsOf: extra)
        changes.append(change, continuesPrevious: deps.count == 1 && deps.first == firstRow + changes.count - 1)
    }
}

extension WireBlock {
    /// Why a part of a stored op cannot be taken.
    struct PieceError: Error { var message: String }

    /// Units of a stored op as `piece(of:...)` gives them: the body to append to an op log,
    /// and the characters it inserts. (A struct, not a tuple: a tuple holding an `OpBody`,
    /// returned through typed throws, is copied and destroyed through the runtime's generic
    /// tuple witnesses, hundreds of instructions an op on load.)
    struct Piece: Sendable {
        var body: OpBody
        var scalars: ArraySlice<Unicode.Scalar>
    }

    /// Units `used ..< used + take` of a block's op `op` (an op may run over several changes), as
    /// the body to append to an op log, with the characters it inserts (from the block's `text`).
    /// `firstID` is the log id of the op's first unit; `mapAgent` turns the block's replica indices
    /// into the log's. Loading and salvage both read ops through this, so they split them
    /// identically. Static, so that a caller passes the block's arrays, never a copy of the block.
    /// With `textFromStart`, an insert's characters are read from position 0 of `text` rather than
    /// from its `contentStart` (placeholders: `WireBlock.placeholderCount`).
    static func piece(of op: Op, text: [Unicode.Scalar], textFromStart: Bool = false, used: Int, take: Int, firstID: LocalID,
                      mapAgent: (LocalID) -> LocalID) throws(PieceError) -> Piece {
        // Text ops, nearly all of a file's, have their ids mapped here, as `mapIDs` would map
        // them, without building the mapped body first and matching it again.
        switch op.body {
        case .insertText(let n, let l, let r, let s):
            // Unit k's left origin is unit k - 1 of the same op.
            let body = OpBody.insertText(note: mapAgent(n), originLeft: used == 0 ? mapAgent(l) : firstID.advanced(by: used - 1),
                                         originRight: mapAgent(r), contentStart: 0)
            let from = (textFromStart ? 0 : s) + used
            return Piece(body: body, scalars: text[from ..< from + take])
        case .deleteText(let n, let t, let rev):
            if rev && Int(t.counter) - used - (take - 1) < 0 { throw PieceError(message: "a delete counts down past the first element") }
            // A one-unit delete has no direction: always `reversed: false` (one canonical form).
            let body = OpBody.deleteText(note: mapAgent(n), target: mapAgent(t).advanced(by: rev ? -used : used), reversed: rev && take > 1)
            return Piece(body: body, scalars: [])
        case .unknown:
            // Units of an unknown op cannot be split meaningfully; keep it whole.
            guard used == 0 && take == op.length else { throw PieceError(message: "an op of unknown kind \(op.body.kind) spans two changes") }
            return Piece(body: op.body.mapIDs(mapAgent), scalars: [])
        default:
            return Piece(body: op.body.mapIDs(mapAgent), scalars: [])
        }
    }
}

/// Turns a `WireBlock` into a block payload and back (columns, see `ColumnID`).
enum WireCodec {
    // MARK: Encoding

    /// The block's payload bytes. A block of `concurrentFrom` changes, ops and units or more is
    /// encoded on two threads (tests set it to compare the two ways).
    static func encodePayload(_ block: WireBlock, concurrentFrom: Int = concurrentEncodingThreshold) -> [UInt8] {
        // On two threads: the change columns beside the op columns, then the state section
        // beside the column set, each deflated. (A small block is done on this one: a thread
        // costs more than it would save.)
        let concurrent = block.changeCount + block.opRowCount + block.textCount >= concurrentFrom
        func both<A, B>(_ first: () -> A, _ second: @escaping @Sendable () -> B) -> (A, B) {
            concurrent ? Concurrently.run(first, alongside: second) : (first(), second())
        }
        let encoded = block.encodedColumns ?? encodeColumnSet(block, stateSection: block.state != nil, concurrent: concurrent)
        let columnBytes = encoded.bytes, strings = encoded.strings
        let section = block.state
        let columns: CompressedSection, state: CompressedSection?
        if section == nil || block.compressedState != nil {
            columns = CompressedSection(raw: columnBytes.count, deflated: Deflate.compress(columnBytes))
            state = block.compressedState
        } else {
            (columns, state) = both({ CompressedSection(raw: columnBytes.count, deflated: Deflate.compress(columnBytes)) }, { () -> CompressedSection? in
                section.map { compressState($0) }
            })
        }

        var e = CBOREncoder()
        var count = 7 + block.unknownFields.count
        if block.kind == .base { count += 2 }
        if block.kind == .append { count += 2 }
        if block.padding > 0 { count += 1 }
        if state != nil { count += 2 }
        e.mapHeader(count)
        e.unsigned(BlockKey.kind.rawValue); e.unsigned(block.kind.rawValue)
        if block.kind == .base {
            e.unsigned(BlockKey.documentID.rawValue); e.tag(Format.uuidTag); e.bytes(uuidBytes(block.documentID ?? UUID()))
            e.unsigned(BlockKey.genesis.rawValue); e.arrayHeader(2)
            e.bytes(block.genesis?.replica.bytes ?? []); e.unsigned(UInt64(block.genesis?.seq ?? 0))
        }
        e.unsigned(BlockKey.replicas.rawValue); e.arrayHeader(block.replicas.count)
        for r in block.replicas { e.bytes(r.bytes) }
        e.unsigned(BlockKey.strings.rawValue); e.arrayHeader(strings.count)
        for s in strings { e.text(s) }
        e.unsigned(BlockKey.changeCount.rawValue); e.unsigned(UInt64(block.changeCount))
        e.unsigned(BlockKey.opUnitCount.rawValue); e.unsigned(UInt64(block.opUnitCount))
        e.unsigned(BlockKey.columns.rawValue); e.bytes(columns.deflated)
        // The inflated size bounds decompression on the way back in.
        e.unsigned(BlockKey.columnsSize.rawValue); e.unsigned(UInt64(columns.raw))
        if block.kind == .append {
            e.unsigned(BlockKey.previousCRC.rawValue); e.unsigned(UInt64(block.previousCRC ?? 0))
            e.unsigned(BlockKey.firstRow.rawValue); e.unsigned(UInt64(block.firstRow))
        }
        if block.padding > 0 {
            e.unsigned(BlockKey.padding.rawValue); e.bytes([UInt8](repeating: 0, count: block.padding))
        }
        if let state {
            e.unsigned(BlockKey.state.rawValue); e.bytes(state.deflated)
            e.unsigned(BlockKey.stateSize.rawValue); e.unsigned(UInt64(state.raw))
        }
        for f in block.unknownFields { e.raw(f) }
        return e.bytes
    }

    /// Changes, ops and units from which a save encodes its columns on two threads.
    static let concurrentEncodingThreshold = 1 << 14

    /// The block's column set (uncompressed) and its string table, for a block that has a state
    /// section or not (which the text column holds all inserted text or only the deleted text,
    /// `deadText`), with the change columns encoded on another thread when `concurrent`.
    static func encodeColumnSet(_ block: WireBlock, stateSection: Bool, concurrent: Bool) -> EncodedColumns {
        let (raw, strings) = encodeColumns(block, stateSection: stateSection, concurrent: concurrent)
        return EncodedColumns(bytes: ColumnSet.encode(raw), strings: strings)
    }

    /// `encodeColumnSet`'s columns by id (the empty ones left out), before they are laid out as a
    /// column set, and the string table. A save that makes the text column of a block with a
    /// state section elsewhere (`deadTextColumn`) leaves `block.deadText` empty and adds it.
    static func encodeColumns(_ block: WireBlock, stateSection: Bool, concurrent: Bool) -> (raw: [UInt64: [UInt8]], strings: [String]) {
        let structures = block.state?.storesStructures ?? false
        let (opColumns, (changeColumns, strings)) = concurrent
            ? Concurrently.run({ encodeOpColumns(block, stateSection: stateSection, structures: structures) }, alongside: { encodeChangeColumns(block) })
            : (encodeOpColumns(block, stateSection: stateSection, structures: structures), encodeChangeColumns(block))
        var raw: [UInt64: [UInt8]] = [:]
        for (k, v) in changeColumns.merging(opColumns, uniquingKeysWith: { a, _ in a }) where !v.isEmpty { raw[k.rawValue] = v }
        return (raw, strings)
    }

    /// The text column of a block with a state section: its deleted text (`deadText`), UTF-8.
    static func deadTextColumn(_ dead: [Unicode.Scalar]) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(dead.count)
        for scalar in dead { UTF8.encode(scalar) { text.append($0) } }
        return text
    }

    /// A state section's bytes as a block stores them: its CBOR compressed, and the CBOR's size.
    static func compressState(_ section: WireState) -> CompressedSection {
        let bytes = StateCodec.encode(section)
        return CompressedSection(raw: bytes.count, deflated: Deflate.compress(bytes))
    }

    /// The block's change columns and its string table (authors and messages).
    private static func encodeChangeColumns(_ block: WireBlock) -> ([ColumnID: [UInt8]], [String]) {
        // The string table lists the strings in order of first use (authors and non-empty messages).
        // Two local indices may hold one string (blocks built by hand): one wire entry each string.
        var strings: [String] = []
        var wireIndex = [Int](repeating: -1, count: block.strings.count)
        var wireIndexByString: [ExactString: Int] = [:]
        let emptyMessage = block.strings.map(\.isEmpty)
        var cols: [ColumnID: [UInt8]] = [:]
        // Changes.
        var cReplica = UIntColumnEncoder(), cSeq = DeltaColumnEncoder(), cLen = UIntColumnEncoder()
        var cDepCount = UIntColumnEncoder(), cDepDist = UIntColumnEncoder(), cTime = DeltaColumnEncoder()
        var cAuthor = UIntColumnEncoder(), cMessage = UIntColumnEncoder(), cExtraLen = UIntColumnEncoder()
        var extra: [UInt8] = []
        let generated = block.generatedChanges
        var depPos = 0, extraPos = 0    // where the next generated change's dependencies and extra fields start
        var i = 0
        let changeCount = block.changeCount
        while i < changeCount {
            let c = generated.map { $0.change(i) } ?? block.changes[i]
            let depStart = generated == nil ? c.depStart : depPos, extraStart = generated == nil ? c.extraStart : extraPos
            depPos += c.depCount
            extraPos += c.extraCount
            let row = block.firstRow + i
            cReplica.append(UInt64(c.replica))
            cSeq.append(Int64(c.seq))
            cLen.append(UInt64(c.length))
            cDepCount.append(UInt64(c.depCount))
            if c.depCount == 1 {
                cDepDist.append(UInt64(row - Int(block.depRows[depStart])))
            } else if c.depCount > 1 {
                for d in block.depRows[depStart ..< depStart + c.depCount].sorted(by: >) { cDepDist.append(UInt64(row - Int(d))) }
            }
            cTime.append(c.time)
            // The author, then a non-empty message, take wire indices in order of first use.
            if wireIndex[c.author] < 0 { assignWireIndex(c.author, block.strings, &wireIndex, &strings, &wireIndexByString) }
            if !emptyMessage[c.message] && wireIndex[c.message] < 0 {
                assignWireIndex(c.message, block.strings, &wireIndex, &strings, &wireIndexByString)
            }
            cAuthor.append(UInt64(wireIndex[c.author]))
            cMessage.append(emptyMessage[c.message] ? 0 : UInt64(wireIndex[c.message]) + 1)
            cExtraLen.append(UInt64(c.extraCount))
            if c.extraCount > 0 { extra += block.extraBytes[extraStart ..< extraStart + c.extraCount] }
            // The changes that continue this one (a typing session: most of a long history) take
            // their columns' values as runs: the same replica, time, author and message, seq
            // and row one more each, one dependency on the row before, no extra fields (changes
            // made from an op log). A decoded block's changes keep the runs they were read as
            // (`WireChanges`): there a run's later changes differ in seq, length and their one
            // dependency, which may be any earlier row. (A change a test edits by hand is a run
            // of its own, so damaged blocks are encoded as they stand.)
            let k = generated?.continuing(after: i) ?? block.changes.continuingStretch(from: i + 1, room: .max).end - (i + 1)
            if k > 0, generated == nil {
                cReplica.append(UInt64(c.replica), count: k)
                cSeq.append(steps: 1, count: k)
                for length in block.changes.lengths(i + 1 ..< i + 1 + k) { cLen.append(UInt64(length)) }
                cDepCount.append(1, count: k)
                // Change i + j's one dependency is the (c.depCount + j - 1)-th entry after c's first.
                let firstDep = c.depStart + c.depCount
                for j in 0 ..< k { cDepDist.append(UInt64(row + 1 + j - Int(block.depRows[firstDep + j]))) }
                cTime.append(steps: 0, count: k)
                cAuthor.append(UInt64(wireIndex[c.author]), count: k)
                cMessage.append(emptyMessage[c.message] ? 0 : UInt64(wireIndex[c.message]) + 1, count: k)
                cExtraLen.append(0, count: k)
                i += k
            } else if k > 0 {
                cReplica.append(UInt64(c.replica), count: k)
                cSeq.append(steps: 1, count: k)
                // As many units as changes: every one is a single keystroke (each has at least one).
                if let g = generated, g.units(of: i + 1 ... i + k) == k {
                    cLen.append(1, count: k)
                } else {
                    generated?.forEachLength(of: i + 1 ... i + k) { cLen.append(UInt64($0)) }
                }
                cDepCount.append(1, count: k)
                cDepDist.append(1, count: k)
                cTime.append(steps: 0, count: k)
                cAuthor.append(UInt64(wireIndex[c.author]), count: k)
                cMessage.append(emptyMessage[c.message] ? 0 : UInt64(wireIndex[c.message]) + 1, count: k)
                cExtraLen.append(0, count: k)
                depPos += k
                i += k
            }
            i += 1
        }
        cols[.changeReplica] = cReplica.finish(); cols[.changeSeq] = cSeq.finish(); cols[.changeLength] = cLen.finish()
        cols[.changeDepCount] = cDepCount.finish(); cols[.changeDepDistance] = cDepDist.finish(); cols[.changeTime] = cTime.finish()
        cols[.changeAuthor] = cAuthor.finish(); cols[.changeMessage] = cMessage.finish(); cols[.changeExtraLength] = cExtraLen.finish()
        cols[.changeExtra] = extra
        return (cols, strings)
    }

    /// The block's op columns (with the text column: all inserted text, or with a state section
    /// the deleted text).
    private static func encodeOpColumns(_ block: WireBlock, stateSection: Bool, structures: Bool) -> [ColumnID: [UInt8]] {
        if let made = block.encodedOps {
            // Encoded as the save made them (`OpColumnEncoder`): only the text column is left.
            var cols = made.columns
            if stateSection { cols[.opText] = deadTextColumn(block.deadText) }
            return cols
        }
        var encoder = OpColumnEncoder(structures: structures)
        var text: [UInt8] = []
        // Text already in UTF-8 is the column as it stands: the inserts' text in op order.
        let inScalars = block.insertedUTF8 == nil
        var inserted = 0
        for op in block.ops {
            encoder.append(op)
            if case .insertText(_, _, _, let s) = op.body {
                if !stateSection && inScalars { for scalar in block.text[s ..< s + op.length] { UTF8.encode(scalar) { text.append($0) } } }
                assert(inScalars || s == inserted, "a block's UTF-8 text is in the order of its ops")
                inserted = s + op.length
            }
        }
        var cols = encoder.finish()
        cols[.opText] = block.insertedUTF8?.bytes ?? text
        if stateSection { cols[.opText] = deadTextColumn(block.deadText) }
        return cols
    }

    /// Gives block string `local` its index in the wire string table (appending it when new).
    private static func assignWireIndex(_ local: Int, _ blockStrings: [String], _ wireIndex: inout [Int],
                                        _ strings: inout [String], _ byString: inout [ExactString: Int]) {
        let s = blockStrings[local]
        let key = ExactString(s)
        let w = byString[key] ?? strings.count
        if w == strings.count { strings.append(s); byString[key] = w }
        wireIndex[local] = w
    }

    static func uuidBytes(_ u: UUID) -> [UInt8] {
        withUnsafeBytes(of: u.uuid) { Array($0) }
    }
}

/// A section of a block compressed (`Deflate.compress`), and its size before.
struct CompressedSection: Sendable {
    var raw: Int
    var deflated: [UInt8]
}

/// A block's column set before compression, and the string table its change columns index.
struct EncodedColumns: Sendable {
    var bytes: [UInt8]
    var strings: [String]
}

/// A block's op columns, made an op at a time, in the block's order: of a block's `ops`
/// (`WireCodec.encodeColumnSet`), or of each op as a save makes it (`WireBlock.encodedOps`),
/// which then never holds them all. The text column is the caller's; the others are those of
/// the wire format (peernote(5)), with version 3's `opOriginsStored` when `structures`.
struct OpColumnEncoder {
    private let structures: Bool
    private var kind = UIntColumnEncoder(), length = UIntColumnEncoder()
    private var noteR = UIntColumnEncoder(), noteC = DeltaColumnEncoder()
    private var r1R = UIntColumnEncoder(), r1C = DeltaColumnEncoder(), r2R = UIntColumnEncoder(), r2C = DeltaColumnEncoder()
    private var reversed = BoolColumnEncoder(), valueLen = UIntColumnEncoder(), predCount = UIntColumnEncoder()
    private var predR = UIntColumnEncoder(), predC = DeltaColumnEncoder(), priority = UIntColumnEncoder(), created = DeltaColumnEncoder()
    private var payloadLen = UIntColumnEncoder(), originsStored = BoolColumnEncoder()
    private var values: [UInt8] = [], payloads: [UInt8] = []
    /// The rows, units and predecessors appended so far.
    private(set) var rows = 0, units = 0, predecessors = 0

    init(structures: Bool) { self.structures = structures }

    /// Encodes `op` (but its text), after those before it.
    mutating func append(_ op: Op) {
        rows += 1
        units += op.length
        kind.append(op.body.kind)
        length.append(UInt64(op.length))
        switch op.body {
        case .setNotebookTitle(let v, let p): value(v); preds(p)
        case .createNote(let l, let r, let c): ref1(l); ref2(r); created.append(c)
        case .setNoteTitle(let n, let v, let p): note(n); value(v); preds(p)
        case .insertText(let n, let l, let r, _):
            note(n)
            // Version 3 (`structures`): an insert whose origins follow from its note's structure stores none.
            let stated = !(l.isUnstated && r.isUnstated)
            precondition(stated || structures, "only a block storing its structures leaves origins out")
            if structures { originsStored.append(stated) }
            if stated { ref1(l); ref2(r) }
        case .deleteText(let n, let t, let rev): note(n); ref1(t); reversed.append(rev)
        case .addTag(let n, let t): note(n); value(t)
        case .removeTag(let n, let t, let rm): note(n); value(t); preds(rm)
        case .setPriority(let n, let p, let ps): note(n); priority.append(UInt64(p.rank)); preds(ps)
        case .deleteNote(let n, let p), .restoreNote(let n, let p): note(n); preds(p)
        case .moveNote(let n, let l, let r, let p): note(n); ref1(l); ref2(r); preds(p)
        case .unknown(_, let payload): payloadLen.append(UInt64(payload.count)); payloads += payload
        }
    }

    /// The columns by id (the empty ones too; the text column empty).
    consuming func finish() -> [ColumnID: [UInt8]] { columnsSoFar() }

    /// The columns of the ops appended so far (`finish`, for an encoder that is let go next).
    func columnsSoFar() -> [ColumnID: [UInt8]] {
        var cols: [ColumnID: [UInt8]] = [:]
        cols[.opKind] = kind.finish(); cols[.opLength] = length.finish()
        cols[.opNoteReplica] = noteR.finish(); cols[.opNoteCounter] = noteC.finish()
        cols[.opRef1Replica] = r1R.finish(); cols[.opRef1Counter] = r1C.finish()
        cols[.opRef2Replica] = r2R.finish(); cols[.opRef2Counter] = r2C.finish()
        cols[.opReversed] = reversed.finish(); cols[.opValueLength] = valueLen.finish(); cols[.opValue] = values
        cols[.opPredCount] = predCount.finish(); cols[.opPredReplica] = predR.finish(); cols[.opPredCounter] = predC.finish()
        cols[.opPriority] = priority.finish(); cols[.opCreated] = created.finish(); cols[.opText] = []
        cols[.opPayloadLength] = payloadLen.finish(); cols[.opPayload] = payloads
        if structures { cols[.opOriginsStored] = originsStored.finish() }
        return cols
    }

    private mutating func note(_ n: LocalID) { noteR.append(UInt64(n.agent)); noteC.append(Int64(n.counter)) }

    private mutating func ref1(_ id: LocalID) {
        if id.isNone { r1R.append(0) } else { r1R.append(UInt64(id.agent) + 1); r1C.append(Int64(id.counter)) }
    }

    private mutating func ref2(_ id: LocalID) {
        if id.isNone { r2R.append(0) } else { r2R.append(UInt64(id.agent) + 1); r2C.append(Int64(id.counter)) }
    }

    private mutating func preds(_ p: [LocalID]) {
        predecessors += p.count
        predCount.append(UInt64(p.count))
        for id in p.sorted() { predR.append(UInt64(id.agent)); predC.append(Int64(id.counter)) }
    }

    /// Straight from the string's bytes: an array made of each title and tag was freed again at once.
    private mutating func value(_ s: String) { valueLen.append(UInt64(s.utf8.count)); values.append(contentsOf: s.utf8) }
}
