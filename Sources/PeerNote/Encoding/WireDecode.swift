#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension WireCodec {
    /// Limits on what one file may ask of the reader, proportional to its size. The row budgets
    /// bound the whole file, all its blocks together, so that many small blocks cannot multiply
    /// what a small file may ask for. (Inflated columns are bounded per block: 1,100 times their
    /// compressed size plus 64 KB, and never more than the block declares.)
    struct Limits {
        /// Changes per byte of file, plus `slack`; op rows and predecessors each have the same
        /// budget. Real files hold about 3 changes per byte or fewer (a 97 KB save of the
        /// automerge-paper trace holds 260,000 changes) and far fewer op rows (consecutive typing
        /// is one op). More than this is runs of identical edits that only a crafted file (or a
        /// script) makes, and every one of them costs memory and time once loaded.
        var rowsPerByte = 8
        /// Op units per byte of file, plus `slack` and two per character the block inserts, for each block.
        var unitsPerByte = 1_100
        var slack = 1 << 16

        /// The most changes (and, separately, op rows and predecessors) a file of `fileSize` bytes may hold.
        func maxRows(fileSize: Int) -> UInt64 { UInt64(fileSize) * UInt64(rowsPerByte) + UInt64(slack) }

        /// The smallest file size whose budgets admit a file holding `changes`, `ops` and
        /// `predecessors` in all, and a last block of `dependencies` dependencies and `units` op
        /// units inserting `insertedScalars` characters (earlier blocks met their limits in a smaller file). A writer pads a file
        /// that would be smaller, so that whatever the library saves, it loads.
        func requiredFileSize(changes: Int, ops: Int, predecessors: Int, dependencies: Int, units: Int, insertedScalars: Int) -> Int {
            func atLeast(_ n: Int, _ perByte: Int) -> Int { n <= 0 ? 0 : (n + perByte - 1) / perByte }
            let rows = max(changes, ops, predecessors, dependencies) - slack
            return max(atLeast(rows, rowsPerByte), atLeast(units - slack - 2 * insertedScalars, unitsPerByte))
        }
    }

    /// What the blocks of a file read so far hold: the file's budgets are shared by all its blocks.
    struct Totals: Sendable, Equatable {
        var changes = 0
        var ops = 0
        var predecessors = 0
        /// The bytes the blocks' sections declare they inflate to.
        var inflated: UInt64 = 0
    }

    /// Reads every block's payload, in file order, within one budget for the whole file.
    /// A block whose compressed state section and columns are each `concurrentFrom` bytes or more
    /// inflates them on two threads (`decodePayload`); the default, never.
    static func decodePayloads(_ raws: [RawBlock], fileSize: Int, limits: Limits = Limits(), concurrentFrom: Int = .max) throws(FormatError) -> [WireBlock] {
        var totals = Totals()
        return try decodePayloads(raws, fileSize: fileSize, limits: limits, concurrentFrom: concurrentFrom, totals: &totals)
    }

    /// `decodePayloads`, after blocks holding `totals` (which it adds the blocks it reads to).
    /// Without `placeholders`, a block with a state section holds no placeholder text
    /// (`WireBlock.placeholderCount`): for a reader that replays it knowing so (`Document.load`).
    static func decodePayloads(_ raws: [RawBlock], fileSize: Int, limits: Limits = Limits(), concurrentFrom: Int = .max,
                               totals: inout Totals, placeholders: Bool = true) throws(FormatError) -> [WireBlock] {
        var blocks: [WireBlock] = []
        blocks.reserveCapacity(raws.count)
        for raw in raws {
            blocks.append(try decodePayload(raw, fileSize: fileSize, limits: limits, totals: &totals, concurrentFrom: concurrentFrom,
                                            placeholders: placeholders))
        }
        return blocks
    }

    /// Compressed bytes from which each of a block's two compressed parts (state section and
    /// columns) makes inflating them on two threads pay: at about 100 MB/s of output, 16 KiB
    /// compressed is a few hundred microseconds a part, against some tens to hand one over.
    static let concurrentInflateThreshold = 1 << 14

    /// Reads one block's payload as if it were the only block of the file.
    static func decodePayload(_ raw: RawBlock, fileSize: Int, limits: Limits = Limits()) throws(FormatError) -> WireBlock {
        var totals = Totals()
        return try decodePayload(raw, fileSize: fileSize, limits: limits, totals: &totals)
    }

    /// The entries of a block's payload map.
    static func payloadMap(_ raw: RawBlock) throws(FormatError) -> [CBORPair] {
        let base = raw.payloadOffset
        do {
            let item = try CBORDecoder.decodeItem(raw.payload, at: 0, limits: CBORLimits(maxDepth: 16, maxItems: raw.payload.count + 16))
            guard item.end == raw.payload.count else { throw FormatError(offset: base + item.end, message: "extra bytes after the block's payload map") }
            guard let m = item.map else { throw FormatError(offset: base, message: "block payload is not a map") }
            return m
        } catch let e as CBORDecodeError {
            throw FormatError(e, base: base)
        } catch let e as FormatError {
            throw e
        } catch {
            throw FormatError(offset: base, message: "\(error)")
        }
    }

    /// The known fields of a payload map by key, and the unknown ones verbatim (raw key and value).
    static func payloadFields(_ map: [CBORPair], _ raw: RawBlock) throws(FormatError) -> ([BlockKey: CBORItem], [[UInt8]]) {
        let base = raw.payloadOffset
        var fields: [BlockKey: CBORItem] = [:]
        var unknown: [[UInt8]] = []
        var unknownKeys: [UInt64] = []
        for pair in map {
            guard let k = pair.key.uint else { throw FormatError(offset: base + pair.key.offset, message: "block field key is not an unsigned integer") }
            if let key = BlockKey(rawValue: k) {
                guard fields[key] == nil else { throw FormatError(offset: base + pair.key.offset, message: "block field \(k) appears twice") }
                fields[key] = pair.value
            } else {
                guard !unknownKeys.contains(k) else { throw FormatError(offset: base + pair.key.offset, message: "block field \(k) appears twice") }
                unknownKeys.append(k)
                unknown.append(Array(raw.payload[pair.key.offset ..< pair.value.end]))
            }
        }
        // A state section changes what the text column holds: a version-1 reader would misread
        // the block, so only a version-2 block may have one.
        if raw.version < 2, let item = fields[.state] ?? fields[.stateSize] {
            throw FormatError(offset: base + item.offset, message: "a version-\(raw.version) block has a state section (fields 12 and 13 need format version 2)")
        }
        return (fields, unknown)
    }

    /// The key of an unknown payload field kept as raw CBOR (its key's bytes, then its value's),
    /// as `payloadFields` read it; nil for bytes that do not start with an unsigned integer.
    static func unknownFieldKey(_ field: [UInt8]) -> UInt64? {
        (try? CBORDecoder.decodeItem(field, at: 0, limits: CBORLimits(maxDepth: 1, maxItems: 1)))?.uint
    }

    static func documentID(_ idItem: CBORItem, base: Int) throws(FormatError) -> UUID {
        guard let (tag, inner) = idItem.tagged, tag == Format.uuidTag, let b = inner.bytesValue, b.count == 16 else {
            throw FormatError(offset: base + idItem.offset, message: "document id is not a UUID (tag 37, 16 bytes)")
        }
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    static func replicaTable(_ reps: CBORItem, base: Int) throws(FormatError) -> [ReplicaID] {
        guard let repArray = reps.array else { throw FormatError(offset: base + reps.offset, message: "replica table is not an array") }
        var replicas: [ReplicaID] = []
        for r in repArray {
            guard let b = r.bytesValue, let id = ReplicaID(bytes: b) else { throw FormatError(offset: base + r.offset, message: "replica id is not 16 bytes") }
            replicas.append(id)
        }
        guard Set(replicas).count == replicas.count else { throw FormatError(offset: base + reps.offset, message: "replica table lists a replica twice") }
        return replicas
    }

    /// The document id, replica table and state section of a base block that has one (nil for
    /// any other block), without reading its history: what reading a notebook needs.
    static func decodeState(_ raw: RawBlock) throws(FormatError) -> (documentID: UUID, replicas: [ReplicaID], state: WireState)? {
        let base = raw.payloadOffset
        let (fields, _) = try payloadFields(try payloadMap(raw), raw)
        guard fields[.state] != nil, fields[.kind]?.uint == BlockKind.base.rawValue,
              let idItem = fields[.documentID], let reps = fields[.replicas] else { return nil }
        let id = try documentID(idItem, base: base)
        let replicas = try replicaTable(reps, base: base)
        let units = fields[.opUnitCount]?.uint ?? 0
        if let state = fields[.state]?.bytesValue, let size = fields[.stateSize]?.uint,
           size <= UInt64(state.count) * UInt64(Format.maxInflateRatio) + UInt64(Format.maxInflateSlack) {
            try MemoryBudget.check(inflating: size, offset: base + (fields[.state]?.offset ?? 0))
        }
        guard let state = try stateSection(fields, kind: .base, replicas: replicas.count, version: raw.version,
                                           maxElements: Int(min(units, UInt64(Int32.max))), readingStructures: false, base: base) else { return nil }
        return (id, replicas, state)
    }

    /// The state section of a block (nil when it has none), inflated and decoded. Only a base
    /// block may have one, with its inflated size beside it.
    /// From version 3 on, each note's entry holds its body's structure, whose elements may not
    /// outnumber `maxElements` (the block's op units).
    /// (Without `readingStructures`, they are left undecoded: `StateCodec.decode`.)
    static func stateSection(_ fields: [BlockKey: CBORItem], kind: BlockKind, replicas: Int, version: UInt64, maxElements: Int,
                             readingStructures: Bool = true, base: Int) throws(FormatError) -> WireState? {
        guard let item = fields[.state] else {
            if let size = fields[.stateSize] { throw FormatError(offset: base + size.offset, message: "block has a state size (field 13) but no state section (field 12)") }
            return nil
        }
        guard kind == .base else { throw FormatError(offset: base + item.offset, message: "an appended block has a state section (field 12)") }
        guard let compressed = item.bytesValue else { throw FormatError(offset: base + item.offset, message: "state section (field 12) is not a byte string") }
        guard let sizeItem = fields[.stateSize], let size = sizeItem.uint else {
            throw FormatError(offset: base + item.offset, message: "state section lacks its inflated size (field 13, an unsigned integer)")
        }
        let maxSize = UInt64(compressed.count) * UInt64(Format.maxInflateRatio) + UInt64(Format.maxInflateSlack)
        let sectionBase = base + item.end - compressed.count
        guard size <= maxSize else { throw FormatError(offset: sectionBase, message: "state section claims to inflate to \(size) bytes, impossible for \(compressed.count) compressed bytes") }
        let bytes: [UInt8]
        do throws(DeflateError) { bytes = try Deflate.decompress(compressed[...], maxOutput: Int(size)) } catch {
            throw FormatError(offset: sectionBase, message: "compressed state section is damaged: \(error.message)")
        }
        guard bytes.count == Int(size) else { throw FormatError(offset: sectionBase, message: "state section inflates to \(bytes.count) bytes, block says \(size)") }
        do throws(StateCodec.ReadError) {
            return try StateCodec.decode(bytes, replicas: replicas, structures: version >= Format.structuresVersion, maxElements: maxElements,
                                         readingStructures: readingStructures)
        } catch {
            throw FormatError(offset: sectionBase, message: error.message)
        }
    }

    /// Reads a block's payload into unverified changes and ops. `totals` is what the blocks read
    /// before it hold (as read, whatever this block's `firstRow` claims); the block may only use
    /// what they leave of the file's budget, and is added to `totals` when it is read completely.
    /// A block whose compressed state section and columns are each `concurrentFrom` bytes or more
    /// has the state section inflated and read on another thread while this one inflates the
    /// columns; the result, and the error when both are damaged (the state section's), are the same.
    static func decodePayload(_ raw: RawBlock, fileSize: Int, limits: Limits = Limits(), totals: inout Totals,
                              concurrentFrom: Int = .max, placeholders: Bool = true) throws(FormatError) -> WireBlock {
        try decodePayload(try preparePayload(raw, fileSize: fileSize, limits: limits, totals: totals), totals: &totals,
                          concurrentFrom: concurrentFrom, placeholders: placeholders)
    }

    /// `decodePayload` of a block prepared after the blocks `totals` holds.
    static func decodePayload(_ prepared: PreparedPayload, totals: inout Totals, concurrentFrom: Int = .max,
                              placeholders: Bool = true) throws(FormatError) -> WireBlock {
        let raw = prepared.raw, fileSize = prepared.fileSize
        // A large block read without placeholders: its columns are decoded while the other
        // thread reads the state section (the longer half), before the section's text count is
        // known (`decodeColumns`' `textLater`); that count is checked against the ops once both
        // are done. If anything fails or disagrees, the columns are decoded again as below, after
        // the section, so that a damaged file is refused with the same error either way.
        if !placeholders, let halves = PayloadHalves(prepared, concurrentFrom: concurrentFrom) {
            let (early, state) = Concurrently.run({ halves.decodeColumns() }, alongside: { halves.readState() })
            if let block = try halves.join(early, state, totals: &totals) { return block }
        }
        var block = prepared.block
        let columns = prepared.columns
        let columnBytes = try readStateAndInflateColumns(prepared.fields, raw: raw, columns: columns, unitCount: prepared.counts.units,
                                                         into: &block, concurrentFrom: concurrentFrom)
        // Offsets inside inflated columns have no place in the file: report the columns' offset.
        let predecessors: Int
        do throws(ColumnReadError) {
            predecessors = try decodeColumns(columnBytes, into: &block, strings: prepared.strings, changeCount: Int(prepared.counts.changes),
                                             unitCount: Int(prepared.counts.units), liveScalars: block.state?.liveScalarCount, placeholders: placeholders,
                                             structures: block.state?.storesStructures ?? false, maxRows: Int(prepared.counts.maxRows),
                                             maxOps: prepared.maxOps, maxPredecessors: prepared.maxPredecessors, fileSize: fileSize)
        } catch {
            throw FormatError(offset: columns.base, message: error.message)
        }
        return try prepared.finish(block, predecessors: predecessors, totals: &totals)
    }

    /// A block's payload read up to its two compressed parts: its header, replica and string
    /// tables, counts and extents, all checked against the file's budget after the blocks before
    /// it (`totals`).
    struct PreparedPayload: Sendable {
        /// The header and replica table (no changes, ops or state yet).
        fileprivate(set) var block: WireBlock
        fileprivate let raw: RawBlock
        fileprivate let fields: PayloadFields
        fileprivate let strings: [String]
        fileprivate let counts: RowCounts
        fileprivate let columns: ColumnsExtent
        fileprivate let inflated: UInt64
        fileprivate let maxOps: Int
        fileprivate let maxPredecessors: Int
        fileprivate let fileSize: Int

        /// The block with its changes and ops (`predecessors` listed), checked against the
        /// units its text allows, with `totals` now counting it.
        fileprivate func finish(_ block: WireBlock, predecessors: Int, totals: inout Totals) throws(FormatError) -> WireBlock {
            let unitsLimit = columns.unitsBase + 2 * UInt64(block.textCount)
            guard counts.units <= unitsLimit else { throw columns.unitsRefused(unitsLimit) }
            totals.changes += block.changes.count
            totals.ops += block.ops.count
            totals.predecessors += predecessors
            totals.inflated = inflated
            return block
        }
    }

    /// `decodePayload` up to the block's two compressed parts (its errors up to there), after
    /// the blocks `totals` holds.
    static func preparePayload(_ raw: RawBlock, fileSize: Int, limits: Limits = Limits(), totals: Totals) throws(FormatError) -> PreparedPayload {
        var block = WireBlock()
        block.offset = raw.offset
        let map: [BlockKey: CBORItem]
        (map, block.unknownFields) = try payloadFields(try payloadMap(raw), raw)
        let fields = PayloadFields(map: map, base: raw.payloadOffset)
        if let padding = map[.padding], padding.bytesValue == nil {
            throw FormatError(offset: fields.base + padding.offset, message: "padding (field 11) is not a byte string")
        }
        try readHeader(fields, into: &block, limits: limits, fileSize: fileSize)
        block.replicas = try replicaTable(try fields.need(.replicas), base: fields.base)
        let strings = try stringTable(fields)
        let counts = try rowCounts(fields, block: block, totals: totals, limits: limits, fileSize: fileSize)
        let columns = try columnsExtent(fields, counts: counts, limits: limits, fileSize: fileSize)
        let inflated = try checkMemory(fields, kind: block.kind, columnsSize: columns.size, totals: totals)
        let maxRows = counts.maxRows
        return PreparedPayload(block: block, raw: raw, fields: fields, strings: strings, counts: counts, columns: columns, inflated: inflated,
                               maxOps: Int(maxRows) - min(totals.ops, Int(maxRows)), maxPredecessors: Int(maxRows) - min(totals.predecessors, Int(maxRows)),
                               fileSize: fileSize)
    }

    /// A payload's known fields, with the offset of its first byte for errors.
    fileprivate struct PayloadFields: Sendable {
        let map: [BlockKey: CBORItem]
        let base: Int

        subscript(_ k: BlockKey) -> CBORItem? { map[k] }

        /// The field, or an error naming it.
        func need(_ k: BlockKey) throws(FormatError) -> CBORItem {
            guard let v = map[k] else { throw FormatError(offset: base, message: "block lacks field \(k.rawValue) (\(k))") }
            return v
        }

        /// The field as an unsigned integer, or an error naming it.
        func uint(_ k: BlockKey) throws(FormatError) -> UInt64 {
            let v = try need(k)
            guard let u = v.uint else { throw FormatError(offset: base + v.offset, message: "block field \(k) is not an unsigned integer") }
            return u
        }
    }

    /// The block's kind, and what a base block (document id, genesis change) or an appended one
    /// (previous block's checksum, first row) says of where it stands.
    private static func readHeader(_ fields: PayloadFields, into block: inout WireBlock, limits: Limits, fileSize: Int) throws(FormatError) {
        let base = fields.base
        guard let kind = BlockKind(rawValue: try fields.uint(.kind)) else {
            throw FormatError(offset: base + (fields[.kind]?.offset ?? 0), message: "unknown block kind \(try fields.uint(.kind))")
        }
        block.kind = kind
        if kind == .base {
            block.documentID = try documentID(try fields.need(.documentID), base: base)
            let g = try fields.need(.genesis)
            guard let arr = g.array, arr.count == 2, let rb = arr[0].bytesValue, let r = ReplicaID(bytes: rb), let seq = arr[1].uint, seq <= UInt32.max else {
                throw FormatError(offset: base + g.offset, message: "genesis change id is not [replica (16 bytes), seq]")
            }
            block.genesis = ChangeID(replica: r, seq: UInt32(seq))
        } else {
            let crc = try fields.uint(.previousCRC)
            guard crc <= UInt32.max else { throw FormatError(offset: base, message: "previous-block checksum out of range") }
            block.previousCRC = UInt32(crc)
            let firstRow = try fields.uint(.firstRow)
            guard firstRow <= limits.maxRows(fileSize: fileSize) else {
                throw FormatError(offset: base + (fields[.firstRow]?.offset ?? 0), message: "append block starts at change \(firstRow), more than a \(fileSize)-byte file can hold")
            }
            block.firstRow = Int(firstRow)
        }
    }

    /// The block's string table.
    private static func stringTable(_ fields: PayloadFields) throws(FormatError) -> [String] {
        let strs = try fields.need(.strings)
        guard let strArray = strs.array else { throw FormatError(offset: fields.base + strs.offset, message: "string table is not an array") }
        var strings: [String] = []
        for s in strArray {
            guard let t = s.textValue else { throw FormatError(offset: fields.base + s.offset, message: "string table entry is not text") }
            strings.append(t)
        }
        return strings
    }

    /// The change and op unit counts a block declares, and the file's row budget.
    fileprivate struct RowCounts: Sendable {
        var changes: UInt64
        var units: UInt64
        var maxRows: UInt64
    }

    /// The block's change and op unit counts; its changes must fit what the file's row budget
    /// leaves after the blocks before it.
    private static func rowCounts(_ fields: PayloadFields, block: WireBlock, totals: Totals, limits: Limits, fileSize: Int) throws(FormatError) -> RowCounts {
        let changeCount = try fields.uint(.changeCount)
        let unitCount = try fields.uint(.opUnitCount)
        let maxRows = limits.maxRows(fileSize: fileSize)
        // Rows before this block: what the blocks before it hold, or what it claims if that is more.
        let before = max(UInt64(max(totals.changes, 0)), UInt64(block.firstRow))
        guard before <= maxRows, changeCount <= maxRows - before else {
            let offset = fields.base + (fields[.changeCount]?.offset ?? 0)
            if before == 0 {
                throw FormatError(offset: offset, message: "block claims \(changeCount) changes, more than a \(fileSize)-byte file can hold (at most \(maxRows))")
            }
            throw FormatError(offset: offset, message: "block claims \(changeCount) changes after the \(before) before it, more than a \(fileSize)-byte file can hold (at most \(maxRows) in all)")
        }
        return RowCounts(changes: changeCount, units: unitCount, maxRows: maxRows)
    }

    /// A block's compressed columns, the size they declare, and the op unit budget they allow.
    fileprivate struct ColumnsExtent: Sendable {
        var compressed: [UInt8]
        var size: UInt64
        /// The file offset of the compressed bytes.
        var base: Int
        /// The op units a block may claim before counting the characters it inserts.
        var unitsBase: UInt64
        var unitCount: UInt64
        var unitCountOffset: Int
        var fileSize: Int

        /// The error for a block claiming more op units than `limit`.
        func unitsRefused(_ limit: UInt64) -> FormatError {
            FormatError(offset: unitCountOffset, message: "block claims \(unitCount) op units, more than a \(fileSize)-byte file can hold (at most \(limit) here)")
        }
    }

    /// The block's compressed columns and their declared size, within the inflate ratio; the op
    /// units it claims, within what its file size and columns allow.
    private static func columnsExtent(_ fields: PayloadFields, counts: RowCounts, limits: Limits, fileSize: Int) throws(FormatError) -> ColumnsExtent {
        let base = fields.base
        let colItem = try fields.need(.columns)
        guard let compressed = colItem.bytesValue else { throw FormatError(offset: base + colItem.offset, message: "columns are not a byte string") }
        let size = try fields.uint(.columnsSize)
        let maxSize = UInt64(compressed.count) * UInt64(Format.maxInflateRatio) + UInt64(Format.maxInflateSlack)
        guard size <= maxSize else { throw FormatError(offset: base + colItem.offset, message: "columns claim to inflate to \(size) bytes, impossible for \(compressed.count) compressed bytes") }
        // Op units: 1,100 per byte of file + 65,536, plus two per character the block inserts (so
        // that a block may delete what it inserts, however well that text compresses: a pasted
        // megabyte of one character and its deletion make a 1 KB file). The characters are not
        // known yet; there are at most as many as the columns' bytes.
        let extent = ColumnsExtent(compressed: compressed, size: size, base: base + colItem.end - compressed.count,
                                   unitsBase: UInt64(fileSize) * UInt64(limits.unitsPerByte) + UInt64(limits.slack),
                                   unitCount: counts.units, unitCountOffset: base + (fields[.opUnitCount]?.offset ?? 0), fileSize: fileSize)
        guard counts.units <= extent.unitsBase + 2 * size else { throw extent.unitsRefused(extent.unitsBase + 2 * size) }
        return extent
    }

    /// What the file's blocks inflate to so far, this one's state section and columns included
    /// (sizes no larger than their limits, so the sum cannot overflow), checked against the
    /// memory reading them needs.
    /// (A state size past its own limit is left to `stateSection`, which refuses it as damage.)
    private static func checkMemory(_ fields: PayloadFields, kind: BlockKind, columnsSize: UInt64, totals: Totals) throws(FormatError) -> UInt64 {
        var stateDeclared: UInt64 = 0
        if kind == .base, let state = fields[.state]?.bytesValue, let declared = fields[.stateSize]?.uint,
           declared <= UInt64(state.count) * UInt64(Format.maxInflateRatio) + UInt64(Format.maxInflateSlack) {
            stateDeclared = declared
        }
        let inflated = totals.inflated + columnsSize + stateDeclared
        try MemoryBudget.check(inflating: inflated, offset: fields.base)
        return inflated
    }

    /// A large block with a state section, read as two halves that run at once: its columns,
    /// inflated and decoded (`decodeColumns`), and its state section, inflated and read
    /// (`readState`), each on a thread of the caller's choosing, then joined (`join`). The
    /// columns are read before the section's text count is known (`decodeColumns`' `textLater`):
    /// the block counts as placeholders the characters its ops insert, which `join` checks
    /// against the section. Made only for a block whose compressed section and columns are
    /// each `concurrentFrom` bytes or more.
    struct PayloadHalves: Sendable {
        fileprivate let prepared: PreparedPayload

        /// The halves of `prepared`'s block, when it has a state section and both parts are large.
        init?(_ prepared: PreparedPayload, concurrentFrom: Int) {
            guard let section = prepared.fields[.state]?.bytesValue, min(section.count, prepared.columns.compressed.count) >= concurrentFrom else { return nil }
            self.prepared = prepared
        }

        /// The block's header (no changes, ops or state).
        var header: WireBlock { prepared.block }

        /// Whether the block's version stores the bodies' structures in the state section
        /// (`join` checks that the section says so).
        var storesStructures: Bool { prepared.raw.version >= Format.structuresVersion }

        /// The block with its changes and ops, its `placeholderCount` the characters the ops
        /// insert, and the predecessors its ops list; nil when the columns do not read (the
        /// block is then read again one half after the other, which reports why).
        func decodeColumns() -> (block: WireBlock, predecessors: Int)? {
            let columns = prepared.columns, counts = prepared.counts
            guard let columnBytes = try? Deflate.decompress(columns.compressed, maxOutput: Int(columns.size)), columnBytes.count == Int(columns.size) else { return nil }
            var block = prepared.block
            var reached = 0
            let predecessors = withUnsafeMutablePointer(to: &reached) { reached in
                try? WireCodec.decodeColumns(columnBytes, into: &block, strings: prepared.strings, changeCount: Int(counts.changes), unitCount: Int(counts.units),
                                             liveScalars: nil, placeholders: false, textLater: true, textReached: reached, structures: storesStructures,
                                             maxRows: Int(counts.maxRows), maxOps: prepared.maxOps, maxPredecessors: prepared.maxPredecessors,
                                             fileSize: prepared.fileSize)
            }
            guard let predecessors else { return nil }
            block.placeholderCount = reached
            return (block, predecessors)
        }

        /// The state section, inflated and read.
        func readState() -> Result<WireState?, FormatError> {
            let block = prepared.block, maxElements = Int(min(prepared.counts.units, UInt64(Int32.max)))
            return Result { () throws(FormatError) in
                try stateSection(prepared.fields.map, kind: block.kind, replicas: block.replicas.count, version: prepared.raw.version,
                                 maxElements: maxElements, base: prepared.fields.base)
            }
        }

        /// The block, when both halves read and agree: the ops insert as many characters as the
        /// section's bodies and the text column hold (no more than the block's units), and the
        /// section stores the bodies' structures exactly when the block's version says so; with
        /// `totals` counting it. Nil otherwise: the caller reads the block again with
        /// `decodePayload`, which finds the error. An error of the state section is thrown here,
        /// as it would be there, first.
        func join(_ columns: (block: WireBlock, predecessors: Int)?, _ state: Result<WireState?, FormatError>,
                  totals: inout Totals) throws(FormatError) -> WireBlock? {
            let state = try state.get()
            guard var block = columns?.block, let predecessors = columns?.predecessors, let state, state.storesStructures == storesStructures else { return nil }
            let live = state.liveScalarCount, total = live + block.deadText.count
            guard live <= Int(prepared.counts.units), block.placeholderCount == total else { return nil }
            block.state = state
            return try prepared.finish(block, predecessors: predecessors, totals: &totals)
        }
    }

    /// Reads the state section into `block` and returns the inflated columns. The state section
    /// is read first (its errors come first), then the columns; a large block has them inflated
    /// at once, one on each thread.
    private static func readStateAndInflateColumns(_ fields: PayloadFields, raw: RawBlock, columns: ColumnsExtent, unitCount: UInt64,
                                                   into block: inout WireBlock, concurrentFrom: Int) throws(FormatError) -> [UInt8] {
        let compressed = columns.compressed, size = columns.size, columnBase = columns.base
        let inflateColumns = { () -> Result<[UInt8], FormatError> in
            let columnBytes: [UInt8]
            do throws(DeflateError) { columnBytes = try Deflate.decompress(compressed, maxOutput: Int(size)) } catch {
                return .failure(FormatError(offset: columnBase, message: "compressed columns are damaged: \(error.message)"))
            }
            guard columnBytes.count == Int(size) else {
                return .failure(FormatError(offset: columnBase, message: "columns inflate to \(columnBytes.count) bytes, block says \(size)"))
            }
            return .success(columnBytes)
        }
        let map = fields.map, base = fields.base, kind = block.kind
        let replicaCount = block.replicas.count, version = raw.version, maxElements = Int(min(unitCount, UInt64(Int32.max)))
        let readState = { @Sendable () -> Result<WireState?, FormatError> in
            Result { () throws(FormatError) in
                try stateSection(map, kind: kind, replicas: replicaCount, version: version, maxElements: maxElements, base: base)
            }
        }
        let columnBytes: [UInt8]
        if min(fields[.state]?.bytesValue?.count ?? 0, compressed.count) >= concurrentFrom {
            let (columnResult, stateResult) = Concurrently.run(inflateColumns, alongside: readState)
            block.state = try stateResult.get()
            columnBytes = try columnResult.get()
        } else {
            block.state = try readState().get()
            columnBytes = try inflateColumns().get()
        }
        return columnBytes
    }

    /// The scalars whose UTF-8 is `bytes`, or nil if they are not valid UTF-8 (as the standard
    /// library's `UTF8` decoder judges). Runs of ASCII, most of any text, are widened eight
    /// bytes at a time into the output's storage; the decoder reads the rest, a scalar at a time
    /// (about 17 instructions a byte, too many for all of them).
    static func decodeScalars(_ bytes: ArraySlice<UInt8>) -> [Unicode.Scalar]? {
        bytes.withUnsafeBufferPointer { src -> [Unicode.Scalar]? in
            guard let base = src.baseAddress, !src.isEmpty else { return [] }
            let n = src.count
            var valid = true
            // At most one scalar a byte: the output never outgrows `n`.
            let out = [Unicode.Scalar](unsafeUninitializedCapacity: n) { dst, count in
                var i = 0, k = 0
                while i < n {
                    // Eight bytes at a time while none has its high bit set.
                    while i + 8 <= n {
                        let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                        guard word & 0x8080_8080_8080_8080 == 0 else { break }
                        for b in 0 ..< 8 { dst[k + b] = Unicode.Scalar(src[i + b]) }
                        i += 8
                        k += 8
                    }
                    guard i < n else { break }
                    if src[i] < 0x80 {
                        dst[k] = Unicode.Scalar(src[i])
                        i += 1
                        k += 1
                        continue
                    }
                    // One scalar of two to four bytes, decoded and checked by the library (a new
                    // decoder each time: one holds bytes it has read ahead).
                    var it = UnsafeBufferPointer(rebasing: src[i...]).makeIterator()
                    var utf8 = UTF8()
                    guard case .scalarValue(let scalar) = utf8.decode(&it) else { valid = false; break }
                    dst[k] = scalar
                    k += 1
                    i += UTF8.width(scalar)
                }
                count = k
            }
            return valid ? out : nil
        }
    }

    /// The string whose UTF-8 is `bytes`, or nil if they are not valid UTF-8. Made from the
    /// bytes in one pass (appending decoded scalars to a `String.UnicodeScalarView` cost
    /// thousands of instructions a title); invalid bytes would decode to replacement
    /// characters, so valid ones are the string's own UTF-8 unchanged.
    static func decodeString(_ bytes: ArraySlice<UInt8>) -> String? {
        let string = String(decoding: bytes, as: UTF8.self)
        guard bytes.allSatisfy({ $0 < 0x80 }) || string.utf8.elementsEqual(bytes) else { return nil }
        return string
    }
}
