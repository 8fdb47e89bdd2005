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
    static func decodePayloads(_ raws: [RawBlock], fileSize: Int, limits: Limits = Limits(), concurrentFrom: Int = .max,
                               totals: inout Totals) throws(FormatError) -> [WireBlock] {
        var blocks: [WireBlock] = []
        blocks.reserveCapacity(raws.count)
        for raw in raws { blocks.append(try decodePayload(raw, fileSize: fileSize, limits: limits, totals: &totals, concurrentFrom: concurrentFrom)) }
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
                              concurrentFrom: Int = .max) throws(FormatError) -> WireBlock {
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
        let columnBytes = try readStateAndInflateColumns(fields, raw: raw, columns: columns, unitCount: counts.units,
                                                         into: &block, concurrentFrom: concurrentFrom)
        // Offsets inside inflated columns have no place in the file: report the columns' offset.
        let predecessors: Int
        let maxRows = counts.maxRows
        do throws(ColumnReadError) {
            predecessors = try decodeColumns(columnBytes, into: &block, strings: strings, changeCount: Int(counts.changes), unitCount: Int(counts.units),
                                             liveScalars: block.state?.liveScalarCount, structures: block.state?.storesStructures ?? false,
                                             maxRows: Int(maxRows), maxOps: Int(maxRows) - min(totals.ops, Int(maxRows)),
                                             maxPredecessors: Int(maxRows) - min(totals.predecessors, Int(maxRows)), fileSize: fileSize)
        } catch {
            throw FormatError(offset: columns.base, message: error.message)
        }
        let unitsLimit = columns.unitsBase + 2 * UInt64(block.text.count)
        guard counts.units <= unitsLimit else { throw columns.unitsRefused(unitsLimit) }
        totals.changes += block.changes.count
        totals.ops += block.ops.count
        totals.predecessors += predecessors
        totals.inflated = inflated
        return block
    }

    /// A payload's known fields, with the offset of its first byte for errors.
    private struct PayloadFields {
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
    private struct RowCounts {
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
    private struct ColumnsExtent {
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

    private struct ColumnReadError: Error { var message: String }

    /// A pair of op columns naming ids (replica indices and counters), read a row at a time and
    /// checked as read. A note reference names a replica as it is; another reference names it
    /// plus one, 0 meaning none, and then has no counter.
    private struct IDColumns {
        let replicas: [UInt64], counters: [Int64]
        let replicaCount: Int
        private var row = 0, counter = 0

        init(replicas: [UInt64], counters: [Int64], replicaCount: Int) {
            self.replicas = replicas
            self.counters = counters
            self.replicaCount = replicaCount
        }

        @inline(__always) static func id(_ r: UInt64, _ c: Int64, replicas: Int, _ what: String) throws(ColumnReadError) -> LocalID {
            guard r < UInt64(replicas) else { throw ColumnReadError(message: "\(what) names replica \(r), the table has \(replicas)") }
            guard c >= 0 && c <= Int64(UInt32.max - 1) else { throw ColumnReadError(message: "\(what) counter \(c) out of range") }
            return LocalID(agent: UInt32(r), counter: UInt32(c))
        }

        @inline(__always) mutating func nextNote() throws(ColumnReadError) -> LocalID {
            let r = replicas[row], c = counters[row]
            row += 1
            return try Self.id(r, c, replicas: replicaCount, "note reference")
        }

        @inline(__always) mutating func nextReference() throws(ColumnReadError) -> LocalID {
            let r = replicas[row]
            row += 1
            if r == 0 { return .none }
            let c = counters[counter]
            counter += 1
            return try Self.id(r - 1, c, replicas: replicaCount, "reference")
        }
    }

    /// Times (seconds since 1970) beyond ±2^52 are refused: far past any real clock, and small
    /// enough that differences between any two of them fit the delta columns.
    static let maxTime: Int64 = 1 << 52

    /// Decodes the columns into `block` and returns the number of predecessors its ops list.
    /// `maxOps` and `maxPredecessors` are what the file's budget leaves for this block.
    /// With `structures` (a version 3 block whose state section stores the bodies' structures),
    /// column 49 says which insertText ops store their origins; the others get `LocalID.unstated`.
    private static func decodeColumns(_ bytes: [UInt8], into block: inout WireBlock, strings: [String], changeCount: Int, unitCount: Int, liveScalars: Int?,
                                      structures: Bool, maxRows: Int, maxOps: Int, maxPredecessors: Int, fileSize: Int) throws(ColumnReadError) -> Int {
        let set: [UInt64: ColumnSlice]
        do { set = try ColumnSet.decode(bytes, base: 0) } catch { throw ColumnReadError(message: "column layout: \(error.message)") }
        for key in set.keys where ColumnID(rawValue: key) == nil || (key == ColumnID.opOriginsStored.rawValue && !structures) {
            throw ColumnReadError(message: "unknown column \(key) (written by a newer version?)")
        }
        func col(_ id: ColumnID) -> ColumnSlice { set[id.rawValue] ?? ColumnSlice(bytes: [], base: 0) }
        func uints(_ id: ColumnID, _ n: Int) throws(ColumnReadError) -> [UInt64] {
            do { return try UIntColumnDecoder.decode(col(id).bytes, base: 0, count: n) } catch { throw ColumnReadError(message: "column \(id): \(error.message)") }
        }
        func deltas(_ id: ColumnID, _ n: Int) throws(ColumnReadError) -> [Int64] {
            do { return try DeltaColumnDecoder.decode(col(id).bytes, base: 0, count: n) } catch { throw ColumnReadError(message: "column \(id): \(error.message)") }
        }
        func uintRuns(_ id: ColumnID, _ n: Int) throws(ColumnReadError) -> [ColumnRun<UInt64>] {
            do { return try UIntColumnDecoder.decodeRuns(col(id).bytes, base: 0, count: n) } catch { throw ColumnReadError(message: "column \(id): \(error.message)") }
        }
        func deltaRuns(_ id: ColumnID, _ n: Int) throws(ColumnReadError) -> [DeltaRun] {
            do { return try DeltaColumnDecoder.decodeRuns(col(id).bytes, base: 0, count: n) } catch { throw ColumnReadError(message: "column \(id): \(error.message)") }
        }
        func bools(_ id: ColumnID, _ n: Int) throws(ColumnReadError) -> [Bool] {
            do { return try BoolColumnDecoder.decode(col(id).bytes, base: 0, count: n) } catch { throw ColumnReadError(message: "column \(id): \(error.message)") }
        }
        func small(_ v: UInt64, _ what: String, below limit: Int) throws(ColumnReadError) -> Int {
            guard v < UInt64(limit) else { throw ColumnReadError(message: "\(what) \(v) is out of range (< \(limit))") }
            return Int(v)
        }
        /// The sum of `xs`, at most `limit`: counts of dependencies and predecessors at most the
        /// file's row budget, byte lengths at most the inflated columns' size.
        func sum(_ xs: [UInt64], _ what: String, limit: Int) throws(ColumnReadError) -> Int {
            try sum(xs.lazy.map { ColumnRun(value: $0, count: 1) }, what, limit: limit)
        }
        func sum(_ runs: some Sequence<ColumnRun<UInt64>>, _ what: String, limit: Int) throws(ColumnReadError) -> Int {
            var total: UInt64 = 0
            for r in runs {
                let (part, o1) = r.value.multipliedReportingOverflow(by: UInt64(r.count))
                let (s, o2) = total.addingReportingOverflow(part)
                guard !o1, !o2, s <= UInt64(limit) else { throw ColumnReadError(message: "\(what) add up to more than this file can hold") }
                total = s
            }
            return Int(total)
        }
        // Changes, a column at a time: each column is read as runs of equal values (or, for
        // sequence numbers and times, equal steps), checked a run at a time, and folded into
        // the run-length list (`WireChanges.Builder`). A typing session of thousands of
        // changes is a run in every column but lengths, so this costs the runs, not the changes.
        let n = changeCount
        let replicaCount = UInt64(block.replicas.count), stringCount = UInt64(strings.count), firstRow = block.firstRow
        var builder = WireChanges.Builder(count: n)
        // Each column lists where a change does not continue the one before in that column (the
        // list's run rule); the builder then visits only runs' first changes, in order.
        var breaks: [Int] = []
        /// Appends the positions `from ..< to` (those after the first change) to `breaks`.
        func breakEach(_ from: Int, _ to: Int) { if max(from, 1) < to { breaks.append(contentsOf: max(from, 1) ..< to) } }
        do {
            // Decoded first: the column decoder bounds `n` by the column's bytes before anything is allocated.
            let runs = try uintRuns(.changeReplica, n)
            breaks.removeAll(keepingCapacity: true)
            var i = 0
            for (k, r) in runs.enumerated() {
                guard r.value < replicaCount else { throw ColumnReadError(message: "change replica \(r.value) is out of range (< \(replicaCount))") }
                if k > 0 && r.value != runs[k - 1].value { breaks.append(i) }
                i += r.count
            }
            var cursor = RunCursor(runs)
            builder.column(breaks: breaks) { c, i in c.replica = Int(cursor.value(at: i)) }
        }
        do {
            let runs = try deltaRuns(.changeSeq, n)
            breaks.removeAll(keepingCapacity: true)
            var i = 0
            for (k, r) in runs.enumerated() {
                // Equally spaced: the ends bound the rest.
                if min(r.first, r.last) < 1 || max(r.first, r.last) > Int64(UInt32.max) {
                    let bad = (0 ..< r.count).first { r.value($0) < 1 || r.value($0) > Int64(UInt32.max) } ?? 0
                    throw ColumnReadError(message: "change at row \(firstRow + i + bad): sequence number \(r.value(bad)) out of range")
                }
                if k > 0 && r.first != runs[k - 1].last + 1 { breaks.append(i) }
                if r.step != 1 { breakEach(i + 1, i + r.count) }
                i += r.count
            }
            var cursor = DeltaCursor(runs)
            builder.column(breaks: breaks) { c, i in c.seq = UInt32(cursor.value(at: i)) }
        }
        do {
            let runs = try uintRuns(.changeLength, n)
            var units = 0, i = 0
            var lengths: [UInt32] = []
            lengths.reserveCapacity(n)
            for r in runs {
                guard r.value >= 1 && r.value <= UInt64(unitCount), WireChange.fits(Int(r.value)) else {
                    throw ColumnReadError(message: "change at row \(firstRow + i): length \(r.value) out of range")
                }
                let (part, o1) = Int(r.value).multipliedReportingOverflow(by: r.count)
                let (total, o2) = units.addingReportingOverflow(part)
                guard !o1, !o2 else { throw ColumnReadError(message: "changes cover more op units than the block says (\(unitCount))") }
                units = total
                lengths.append(contentsOf: repeatElement(UInt32(r.value), count: r.count))
                i += r.count
            }
            guard units == unitCount else { throw ColumnReadError(message: "changes cover \(units) op units, block says \(unitCount)") }
            builder.setLengths(lengths)
        }
        var depRows: [Int32] = []
        do {
            // Rows are kept in 32 bits; a file this large could not be loaded anyway.
            guard firstRow + n - 1 <= WireBlock.maxRow else { throw ColumnReadError(message: "the block is too large (a row passes 2^31)") }
            let depCountRuns = try uintRuns(.changeDepCount, n)
            let depTotal = try sum(depCountRuns, "dependency counts", limit: maxRows)
            let distRuns = try uintRuns(.changeDepDistance, depTotal)
            depRows.reserveCapacity(depTotal)
            breaks.removeAll(keepingCapacity: true)
            var dist = RunReader(distRuns)
            var i = 0
            for r in depCountRuns {
                if r.value == 1 {
                    // Changes with one dependency each: a run of equal distances at a time.
                    var left = r.count
                    while left > 0 {
                        let (d, m) = dist.take(atMost: left)
                        let row = firstRow + i
                        // Rows grow along the chunk: its first row bounds the distance.
                        guard d >= 1 && d <= UInt64(row) else { throw ColumnReadError(message: "change at row \(row): dependency \(d) rows back lies before the start of the file (missing dependency)") }
                        depRows.appendRows(row - Int(d) ..< row - Int(d) + m)
                        if d != 1 { breakEach(i, i + m) }
                        i += m
                        left -= m
                    }
                    guard WireChange.fits(depRows.count) else { throw ColumnReadError(message: "change at row \(firstRow + i - 1): the block is too large (a position passes 2^32)") }
                    continue
                }
                for _ in 0 ..< r.count {
                    let row = firstRow + i
                    let depStart = depRows.count
                    for _ in 0 ..< r.value {
                        let d = dist.take(atMost: 1).value
                        guard d >= 1 && d <= UInt64(row) else { throw ColumnReadError(message: "change at row \(row): dependency \(d) rows back lies before the start of the file (missing dependency)") }
                        depRows.append(Int32(row - Int(d)))
                    }
                    // A few changes (merges) have a handful of dependencies, checked pairwise.
                    if r.value > 1 {
                        let deps = depRows[depStart...]
                        let repeated = deps.count <= 8 ? deps.indices.contains { j in deps[(j + 1)...].contains(deps[j]) } : Set(deps).count != deps.count
                        guard !repeated else { throw ColumnReadError(message: "change at row \(row): lists a dependency twice") }
                    }
                    guard WireChange.fits(depRows.count) else { throw ColumnReadError(message: "change at row \(row): the block is too large (a position passes 2^32)") }
                    if i > 0 { breaks.append(i) }
                    i += 1
                }
            }
            // A run's first change: its dependencies start after those of every change before it.
            var cursor = SumCursor(depCountRuns)
            builder.column(breaks: breaks) { c, i in
                c.depStart = cursor.sum(before: i)
                c.depCount = cursor.value(at: i)
            }
        }
        do {
            let runs = try deltaRuns(.changeTime, n)
            breaks.removeAll(keepingCapacity: true)
            var i = 0
            for (k, r) in runs.enumerated() {
                if max(r.first.magnitude, r.last.magnitude) > Self.maxTime.magnitude {
                    let bad = (0 ..< r.count).first { r.value($0).magnitude > Self.maxTime.magnitude } ?? 0
                    throw ColumnReadError(message: "change at row \(firstRow + i + bad): time \(r.value(bad)) is out of range")
                }
                if k > 0 && r.first != runs[k - 1].last { breaks.append(i) }
                if r.step != 0 { breakEach(i + 1, i + r.count) }
                i += r.count
            }
            var cursor = DeltaCursor(runs)
            builder.column(breaks: breaks) { c, i in c.time = cursor.value(at: i) }
        }
        do {
            let authorRuns = try uintRuns(.changeAuthor, n), messageRuns = try uintRuns(.changeMessage, n)
            // The first change with an index out of range (its author checked before its message).
            func firstBad(_ runs: [ColumnRun<UInt64>], _ bad: (UInt64) -> Bool) -> (at: Int, value: UInt64)? {
                var i = 0
                for r in runs {
                    if bad(r.value) { return (i, r.value) }
                    i += r.count
                }
                return nil
            }
            let badAuthor = firstBad(authorRuns) { $0 >= stringCount }, badMessage = firstBad(messageRuns) { $0 > stringCount }
            if let a = badAuthor, a.at <= badMessage?.at ?? .max { throw ColumnReadError(message: "author index \(a.value) is out of range (< \(stringCount))") }
            if let m = badMessage { throw ColumnReadError(message: "message index \(m.value - 1) is out of range (< \(stringCount))") }
            // Where either changes: the two columns' run starts, merged.
            breaks.removeAll(keepingCapacity: true)
            var a = 0, m = 0, aStart = 0, mStart = 0
            while a < authorRuns.count || m < messageRuns.count {
                let next = min(a < authorRuns.count ? aStart : .max, m < messageRuns.count ? mStart : .max)
                let changed = (a < authorRuns.count && aStart == next && a > 0 && authorRuns[a].value != authorRuns[a - 1].value)
                    || (m < messageRuns.count && mStart == next && m > 0 && messageRuns[m].value != messageRuns[m - 1].value)
                if changed { breaks.append(next) }
                if a < authorRuns.count && aStart == next { aStart += authorRuns[a].count; a += 1 }
                if m < messageRuns.count && mStart == next { mStart += messageRuns[m].count; m += 1 }
            }
            // Wire string k is block string k + 1 (block string 0 is the empty string).
            var authors = RunCursor(authorRuns), messages = RunCursor(messageRuns)
            builder.column(breaks: breaks) { c, i in c.author = Int(authors.value(at: i)) + 1; c.message = Int(messages.value(at: i)) }
        }
        do {
            let extraRuns = try uintRuns(.changeExtraLength, n)
            let extraTotal = try sum(extraRuns, "extra field lengths", limit: bytes.count)
            guard col(.changeExtra).bytes.count == extraTotal else { throw ColumnReadError(message: "column changeExtra holds \(col(.changeExtra).bytes.count) bytes, expected \(extraTotal)") }
            guard WireChange.fits(extraTotal) else { throw ColumnReadError(message: "the block is too large (a position passes 2^32)") }
            breaks.removeAll(keepingCapacity: true)
            var i = 0
            for r in extraRuns {
                if r.value != 0 { breakEach(i, i + r.count) }
                i += r.count
            }
            var cursor = SumCursor(extraRuns)
            builder.column(breaks: breaks) { c, i in
                c.extraStart = cursor.sum(before: i)
                c.extraCount = cursor.value(at: i)
            }
        }
        let changes = builder.finish()
        block.strings = [""] + strings
        block.extraBytes = Array(col(.changeExtra).bytes)
        block.changes = changes
        block.depRows = depRows
        // Ops: read kinds and lengths to learn how many rows each sparse column has.
        let opLengthBytes = col(.opKind).bytes.count + col(.opLength).bytes.count
        _ = opLengthBytes
        // The number of op rows is not stored; it is the rows the kind column holds, bounded by units.
        let opRows = try countRows(col(.opKind).bytes, max: unitCount)
        guard opRows <= maxOps else {
            throw ColumnReadError(message: "the block holds \(opRows) ops, more than a \(fileSize)-byte file can hold (at most \(maxRows) in all; \(maxOps) left for this block)")
        }
        let kinds = try uints(.opKind, opRows)
        let rows = kinds.count
        let lengths = try uints(.opLength, rows)
        var noteRows = 0, ref1Rows = 0, ref2Rows = 0, revRows = 0, valueRows = 0, predRows = 0, prioRows = 0, createdRows = 0, payloadRows = 0
        // Which insertText ops store their origins (all of them before version 3).
        var insertRows = 0
        for k in kinds where k == OpKind.insertText.rawValue { insertRows += 1 }
        let originsStored = structures ? try bools(.opOriginsStored, insertRows) : []
        var storedInserts = 0
        for stored in originsStored where stored { storedInserts += 1 }
        if structures { ref1Rows -= insertRows - storedInserts; ref2Rows -= insertRows - storedInserts }
        for k in kinds {
            switch OpKind(rawValue: k) {
            case .setNotebookTitle: valueRows += 1; predRows += 1
            case .createNote: ref1Rows += 1; ref2Rows += 1; createdRows += 1
            case .setNoteTitle: noteRows += 1; valueRows += 1; predRows += 1
            case .insertText: noteRows += 1; ref1Rows += 1; ref2Rows += 1
            case .deleteText: noteRows += 1; ref1Rows += 1; revRows += 1
            case .addTag: noteRows += 1; valueRows += 1
            case .removeTag: noteRows += 1; valueRows += 1; predRows += 1
            case .setPriority: noteRows += 1; prioRows += 1; predRows += 1
            case .deleteNote, .restoreNote: noteRows += 1; predRows += 1
            case .moveNote: noteRows += 1; ref1Rows += 1; ref2Rows += 1; predRows += 1
            case nil: payloadRows += 1
            }
        }
        let noteR = try uints(.opNoteReplica, noteRows), noteC = try deltas(.opNoteCounter, noteRows)
        // A reference's counter is stored only when it names something (its replica is not 0).
        func named(_ replicas: [UInt64]) -> Int {
            var n = 0
            for r in replicas where r != 0 { n += 1 }
            return n
        }
        let r1R = try uints(.opRef1Replica, ref1Rows), r1C = try deltas(.opRef1Counter, named(r1R))
        let r2R = try uints(.opRef2Replica, ref2Rows), r2C = try deltas(.opRef2Counter, named(r2R))
        let rev = try bools(.opReversed, revRows)
        let valueLen = try uints(.opValueLength, valueRows)
        let valueTotal = try sum(valueLen, "value lengths", limit: bytes.count)
        guard col(.opValue).bytes.count == valueTotal else { throw ColumnReadError(message: "column opValue holds \(col(.opValue).bytes.count) bytes, expected \(valueTotal)") }
        let predCount = try uints(.opPredCount, predRows)
        let predTotal = try sum(predCount, "predecessor counts", limit: maxPredecessors)
        let predR = try uints(.opPredReplica, predTotal), predC = try deltas(.opPredCounter, predTotal)
        let prio = try uints(.opPriority, prioRows), created = try deltas(.opCreated, createdRows)
        let payloadLen = try uints(.opPayloadLength, payloadRows)
        let payloadTotal = try sum(payloadLen, "payload lengths", limit: bytes.count)
        guard col(.opPayload).bytes.count == payloadTotal else { throw ColumnReadError(message: "column opPayload holds \(col(.opPayload).bytes.count) bytes, expected \(payloadTotal)") }
        guard let stored = decodeScalars(col(.opText).bytes) else { throw ColumnReadError(message: "inserted text is not valid UTF-8") }
        if let live = liveScalars {
            // Text in document order: which character each insert made is known once the block
            // is replayed (`BlockReplayer.fillText`); until then, placeholders.
            guard live <= unitCount else { throw ColumnReadError(message: "the state section holds more text than the block's ops insert") }
            block.deadText = stored
            block.text = [Unicode.Scalar](repeating: "\u{FFFD}", count: live + stored.count)
        } else {
            block.text = stored
        }
        let text = block.text

        var ri = 0, vi = 0, pi = 0, ppos = 0, pri = 0, ci = 0, pli = 0
        var valuePos = col(.opValue).bytes.startIndex, payloadPos = col(.opPayload).bytes.startIndex, textPos = 0
        let nReplicas = block.replicas.count
        func id(_ r: UInt64, _ c: Int64, _ what: String) throws(ColumnReadError) -> LocalID {
            try IDColumns.id(r, c, replicas: nReplicas, what)
        }
        // Read a row at a time through local values, not nested functions: a nested function's
        // captured counters cost about 150 instructions a read (copy A reads 40,000 of them).
        var notes = IDColumns(replicas: noteR, counters: noteC, replicaCount: nReplicas)
        var refs1 = IDColumns(replicas: r1R, counters: r1C, replicaCount: nReplicas)
        var refs2 = IDColumns(replicas: r2R, counters: r2C, replicaCount: nReplicas)
        func value() throws(ColumnReadError) -> String {
            let len = Int(valueLen[vi]); vi += 1
            let bytes = col(.opValue).bytes[valuePos ..< valuePos + len]
            valuePos += len
            guard let s = decodeString(bytes) else { throw ColumnReadError(message: "a title or tag is not valid UTF-8") }
            return s
        }
        func preds() throws(ColumnReadError) -> [LocalID] {
            let k = Int(predCount[pi]); pi += 1
            var out: [LocalID] = []
            for _ in 0 ..< k { out.append(try id(predR[ppos], predC[ppos], "overwritten value")); ppos += 1 }
            return out
        }
        var lv = 0, insertIndex = 0
        block.ops.reserveCapacity(rows)
        for row in 0 ..< rows {
            let len = Int(lengths[row])
            guard len >= 1 && len <= unitCount - lv else { throw ColumnReadError(message: "op \(row): length \(lengths[row]) out of range") }
            let body: OpBody
            switch OpKind(rawValue: kinds[row]) {
            case .setNotebookTitle: body = .setNotebookTitle(try value(), preds: try preds())
            case .createNote:
                let l = try refs1.nextReference(), r = try refs2.nextReference()
                guard created[ci].magnitude <= Self.maxTime.magnitude else { throw ColumnReadError(message: "op \(row): creation time \(created[ci]) is out of range") }
                body = .createNote(originLeft: l, originRight: r, created: created[ci]); ci += 1
            case .setNoteTitle: let n = try notes.nextNote(); body = .setNoteTitle(note: n, try value(), preds: try preds())
            case .insertText:
                let n = try notes.nextNote()
                let stated = !structures || originsStored[insertIndex]
                insertIndex += 1
                let l = stated ? try refs1.nextReference() : LocalID.unstated, r = stated ? try refs2.nextReference() : LocalID.unstated
                guard textPos + len <= text.count else {
                    if liveScalars != nil { throw ColumnReadError(message: "the state section and the text column hold \(text.count) characters, fewer than the ops insert") }
                    throw ColumnReadError(message: "op \(row): inserted text runs past the text column")
                }
                body = .insertText(note: n, originLeft: l, originRight: r, contentStart: textPos)
                textPos += len
            case .deleteText:
                let n = try notes.nextNote(), t = try refs1.nextReference()
                guard !t.isNone else { throw ColumnReadError(message: "op \(row): delete has no target") }
                body = .deleteText(note: n, target: t, reversed: rev[ri]); ri += 1
            case .addTag: let n = try notes.nextNote(); body = .addTag(note: n, try value())
            case .removeTag: let n = try notes.nextNote(); body = .removeTag(note: n, try value(), removes: try preds())
            case .setPriority:
                let n = try notes.nextNote()
                guard let p = Priority.allCases.first(where: { UInt64($0.rank) == prio[pri] }) else { throw ColumnReadError(message: "op \(row): priority \(prio[pri]) unknown") }
                pri += 1
                body = .setPriority(note: n, p, preds: try preds())
            case .deleteNote: let n = try notes.nextNote(); body = .deleteNote(note: n, preds: try preds())
            case .restoreNote: let n = try notes.nextNote(); body = .restoreNote(note: n, preds: try preds())
            case .moveNote:
                let n = try notes.nextNote(), l = try refs1.nextReference(), r = try refs2.nextReference()
                body = .moveNote(note: n, originLeft: l, originRight: r, preds: try preds())
            case nil:
                let plen = Int(payloadLen[pli]); pli += 1
                body = .unknown(kind: kinds[row], payload: Array(col(.opPayload).bytes[payloadPos ..< payloadPos + plen]))
                payloadPos += plen
            }
            if case .insertText = body {} else if case .deleteText = body {} else if case .unknown = body {} else {
                guard len == 1 else { throw ColumnReadError(message: "op \(row): length \(len), this kind of op has length 1") }
            }
            block.ops.append(Op(lv: lv, length: len, body: body))
            lv += len
        }
        guard lv == unitCount else { throw ColumnReadError(message: "ops cover \(lv) units, block says \(unitCount)") }
        guard textPos == text.count else {
            if liveScalars != nil { throw ColumnReadError(message: "the state section and the text column hold \(text.count) characters, the ops insert \(textPos)") }
            throw ColumnReadError(message: "text column holds \(text.count - textPos) characters no op inserts")
        }
        return predTotal
    }

    /// How many values a uint RLE column holds (walks runs without allocating), at most `max`.
    private static func countRows(_ bytes: ArraySlice<UInt8>, max: Int) throws(ColumnReadError) -> Int {
        var reader = ByteReader(bytes, base: 0)
        var total = 0
        do {
            while !reader.isAtEnd {
                let n = try reader.sleb()
                if n > 0 {
                    _ = try reader.uleb()
                    total += Int(n)
                } else if n < 0 && n > Int64.min {
                    let k = Int(-n)
                    guard k <= max else { throw ColumnReadError(message: "column opKind: run longer than the block's op units") }
                    for _ in 0 ..< k { _ = try reader.uleb() }
                    total += k
                } else {
                    throw ColumnReadError(message: "column opKind: empty run")
                }
                guard total <= max else { throw ColumnReadError(message: "column opKind: more ops than op units") }
            }
        } catch let e as ColumnReadError { throw e } catch {
            throw ColumnReadError(message: "column opKind: \(error)")
        }
        return total
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

/// Reads a column's runs at ascending positions (each read at or after the one before), as
/// `WireChanges.Builder` visits changes.
private struct RunCursor<Value: Equatable & Sendable> {
    private let runs: [ColumnRun<Value>]
    private var run = 0
    /// The position of `runs[run]`'s first value.
    private var start = 0
    init(_ runs: [ColumnRun<Value>]) { self.runs = runs }

    @inline(__always) mutating func value(at i: Int) -> Value {
        while start + runs[run].count <= i { start += runs[run].count; run += 1 }
        return runs[run].value
    }
}

/// `RunCursor` for a delta column's runs.
private struct DeltaCursor {
    private let runs: [DeltaRun]
    private var run = 0, start = 0
    init(_ runs: [DeltaRun]) { self.runs = runs }

    @inline(__always) mutating func value(at i: Int) -> Int64 {
        while start + runs[run].count <= i { start += runs[run].count; run += 1 }
        return runs[run].value(i - start)
    }
}

/// `RunCursor` for a column of counts, that also gives the sum of the counts before a
/// position (where a change's dependencies or extra bytes start). The column's total was
/// checked against a limit, so no sum overflows.
private struct SumCursor {
    private let runs: [ColumnRun<UInt64>]
    private var run = 0, start = 0, before = 0
    init(_ runs: [ColumnRun<UInt64>]) { self.runs = runs }

    @inline(__always) private mutating func seek(_ i: Int) {
        while start + runs[run].count <= i {
            before += Int(runs[run].value) * runs[run].count
            start += runs[run].count
            run += 1
        }
    }
    @inline(__always) mutating func value(at i: Int) -> Int { seek(i); return Int(runs[run].value) }
    @inline(__always) mutating func sum(before i: Int) -> Int { seek(i); return before + Int(runs[run].value) * (i - start) }
}

/// Takes a column's values in order, a run (or the part of one that is wanted) at a time.
private struct RunReader {
    private let runs: [ColumnRun<UInt64>]
    private var run = 0
    /// Values of `runs[run]` already taken.
    private var used = 0
    init(_ runs: [ColumnRun<UInt64>]) { self.runs = runs }

    /// The next value and how many times it repeats, at most `limit` (≥ 1). The caller takes
    /// no more values than the column holds (it was decoded for exactly the sum of the counts).
    @inline(__always) mutating func take(atMost limit: Int) -> (value: UInt64, count: Int) {
        let r = runs[run]
        let m = min(limit, r.count - used)
        used += m
        if used == r.count { run += 1; used = 0 }
        return (r.value, m)
    }
}
