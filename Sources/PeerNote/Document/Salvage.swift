#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Recovering what is intact in a damaged .peernote file (`pnmerge salvage`).
//
// 1. The file is split into blocks tolerantly: after damage the reader resynchronises at the
//    next occurrence of the 8 magic bytes. A block is trusted only when its envelope decodes,
//    its CRC-32 matches and its payload decodes completely; anything else (a block whose
//    checksum fails even if its payload still partly decodes, a truncated block, bytes that
//    are no block) is lost as a whole.
// 2. The changes of trusted blocks are kept in file (row) order when their causal history is
//    complete: every dependency was kept, and the replica's previous change was kept. A change
//    that depends on a lost or dropped change is dropped, and so is every later change of a
//    replica that lost one.
// 3. The kept changes are replayed into a new document with full verification. A change whose
//    ops still do not apply (only possible in a crafted file) is dropped too, with its
//    dependents, and the replay starts again.

extension Document {
    /// Recovers every intact change of a damaged file into a valid document and reports exactly
    /// what was lost (see `SalvageResult`). An intact file comes back unchanged.
    ///
    /// Throws when nothing can be recovered: no intact base block (which holds the document's
    /// identity and its first change), or a base block of a newer format version.
    public static func salvage(_ bytes: [UInt8]) throws(PeerNoteError) -> SalvageResult {
        // Not `load` first: a crafted file can trap in the loader (see docs/ROBUSTNESS.md); the
        // salvager checks those cases before it lets the loader see any bytes.
        try salvage(bytes, nested: false)
    }

    /// `salvage(_:)`; `nested` when it salvages the bytes of a left-out notebook on their own
    /// (which then has no left-out notebook of its own to salvage in turn).
    static func salvage(_ bytes: [UInt8], nested: Bool) throws(PeerNoteError) -> SalvageResult {
        try salvage(bytes, nested: nested, work: SalvageWork(steps: SalvageWork.allowance(forFileOf: bytes.count)))
    }

    /// `salvage(_:nested:)` taking its integration work from `work` (shared with the salvage of
    /// the file it was cut out of, for a left-out notebook salvaged on its own).
    fileprivate static func salvage(_ bytes: [UInt8], nested: Bool, work: SalvageWork) throws(PeerNoteError) -> SalvageResult {
        var salvager = Salvager(bytes: bytes, nested: nested, work: work)
        return try salvager.run()
    }
}

/// The list-integration work (scan steps, as `DocState.workBudget` counts them) one salvage may
/// still take, over all its replays and the salvages of the notebooks it left out: a reference,
/// so that a left-out notebook's salvage takes from what the file's has left.
final class SalvageWork {
    var steps: Int
    init(steps: Int) { self.steps = steps }

    /// Twice the loader's bound for a file of `size` bytes (`VerifiedFile.workBudget`), so that a
    /// file the loader refuses for its work is refused about as fast here, not once for every
    /// replay or left-out part.
    static func allowance(forFileOf size: Int) -> Int { 2 * VerifiedFile.workBudget(fileSize: size) }
}

/// The work of `Document.salvage` on one damaged file.
struct Salvager {
    /// A block that passed every check of its own (envelope, checksum, payload).
    struct Trusted {
        var raw: RawBlock
        var block: WireBlock
        var region: Int
    }

    /// Where a change of a trusted block stands.
    enum Fate: Equatable {
        case kept
        case dropped(String)

        var reason: String? { if case .dropped(let r) = self { r } else { nil } }
    }

    let bytes: [UInt8]
    var regions: [SalvageRegion] = []
    var trusted: [Trusted] = []
    /// Rows (change positions in the original file) that lie in damaged bytes, as ranges.
    var unreadableRows: [Range<Int>] = []
    var uncounted: [SalvageUncounted] = []
    /// Rows at least held by damaged bytes before the base block, as the first left-out append block after them numbers them.
    var rowsBeforeBase = 0
    var start: SalvageStart?
    var baseOffset = 0
    /// Whether the append blocks left out before the base block continue bytes identical to the
    /// recovered blocks (so that they are this notebook's, and a change id the output holds is the same change).
    var orphansAreOurs = false
    /// Most replays tried before every change from the failing one on is given up.
    static let maxReplays = 32
    /// Integration work all replays together may still take (see `SalvageWork`).
    let work: SalvageWork
    /// Largest magnitude of a time (seconds) salvage keeps: differences of two such times fit in Int64.
    static let maxTime: UInt64 = 1 << 62
    /// Whether the replay drops changes with such times (only when the result is saved compact:
    /// an intact file or prefix is written back as it is, whatever its times).
    var guardTimes = false

    /// Whether these bytes are a left-out notebook cut out of a file being salvaged.
    let nested: Bool
    /// For a change dropped because its block's text needs a change that cannot be used: that change.
    var culprits: [ChangeKey: ChangeKey] = [:]

    init(bytes: [UInt8], nested: Bool, work: SalvageWork) {
        self.bytes = bytes
        self.nested = nested
        self.work = work
    }

    mutating func run() throws(PeerNoteError) -> SalvageResult {
        try split()
        guard trusted.contains(where: { $0.block.kind == .base }) else {
            let why = regions.first { $0.kind == .damaged }?.problem ?? "no block found"
            throw .invalidDocument(offset: 0, message: "nothing can be recovered: there is no intact base block (the block with the document's identity and first change); \(why)")
        }
        numberRows()
        let first = ChangeKey(block: 0, index: 0)
        var fates = decideFates()
        var replays = 0
        while true {
            guard fates[first] == .kept else {
                throw .invalidDocument(offset: trusted[0].raw.offset, message: "nothing can be recovered: " + firstChangeProblem(fates))
            }
            switch replay(fates) {
            case .success(let document):
                if let result = try finish(document, fates: fates) { return result }
                // The result must be saved compact, and it holds times that cannot be: again without them.
                guardTimes = true
                fates = decideFates()
                replays = 0
            case .failure(let failure):
                replays += 1
                if replays > Self.maxReplays || failure.outOfWork {
                    // Out of work: everything from this change on asks for more than the file's
                    // size allows, and another replay would only meet the bound again.
                    // A crafted file: give up on everything from this change on. What comes before it
                    // replayed cleanly, so the next replay succeeds.
                    for key in fates.keys where key > failure.key && fates[key] == .kept {
                        fates[key] = .dropped(failure.outOfWork ? "left out: the changes before it take all the work the file's size allows"
                                                                : "left out after \(Self.maxReplays) failed replays")
                    }
                }
                fates[failure.key] = .dropped(failure.message)
                if let culprit = failure.culprit { culprits[failure.key] = culprit }
                fates = propagateDrops(fates)
            }
        }
    }

    /// Why the document's first change cannot be used, naming the change at fault first when
    /// another change of its block is (a block that stores its text in document order).
    func firstChangeProblem(_ fates: [ChangeKey: Fate]) -> String {
        let first = ChangeKey(block: 0, index: 0)
        let why = fates[first]?.reason ?? "it is missing"
        guard let culprit = culprits[first], culprit != first, let culpritWhy = fates[culprit]?.reason else {
            return "the document's first change cannot be used (\(why))"
        }
        return "the change at row \(row(of: culprit)) (\(changeID(culprit))) cannot be used, because \(culpritWhy); "
            + "and without it the document's first change cannot be used either, because their block stores its text in document order, "
            + "which needs every change of the block"
    }

    // MARK: Splitting

    /// Splits the file into trusted blocks and damaged regions, resynchronising on the magic bytes.
    mutating func split() throws(PeerNoteError) {
        var pos = 0
        var damageStart: Int?
        var damageReason: String?
        var trustedTotals = WireCodec.Totals()
        func closeDamage(at end: Int, into regions: inout [SalvageRegion]) {
            guard let start = damageStart, end > start else { damageStart = nil; return }
            regions.append(SalvageRegion(offset: start, length: end - start, kind: .damaged, changeCount: nil, keptChanges: 0,
                                         problem: damageReason ?? "not part of any block"))
            damageStart = nil
            damageReason = nil
        }
        while pos < bytes.count {
            if startsWithMagic(at: pos) {
                switch Self.decodeBlock(bytes, at: pos) {
                case .success(let raw):
                    do throws(FormatError) {
                        if let problem = Self.preflight(raw, fileSize: bytes.count) { throw problem }
                        // One row budget for the whole file, as when loading: the blocks kept so far count.
                        let block = try WireCodec.decodePayload(raw, fileSize: bytes.count, totals: &trustedTotals)
                        closeDamage(at: pos, into: &regions)
                        regions.append(SalvageRegion(offset: raw.offset, length: raw.end - raw.offset,
                                                     kind: block.kind == .base ? .baseBlock : .appendBlock,
                                                     changeCount: block.changes.count, keptChanges: 0, problem: nil))
                        trusted.append(Trusted(raw: raw, block: block, region: regions.count - 1))
                        pos = raw.end
                        continue
                    } catch {
                        // Too large for this machine is not damage: nothing to salvage here.
                        if let m = error.memory { throw .needsMoreMemory(needed: m.needed, available: m.available) }
                        if damageStart == nil { damageStart = pos; damageReason = "block at offset \(pos): \(error.message) (at offset \(error.offset ?? pos))" }
                    }
                case .failure(let error):
                    // A newer version is not damage: say so instead of "salvaging" it.
                    if pos == 0, let v = error.unsupportedVersion { throw .unsupportedVersion(v) }
                    if damageStart == nil {
                        damageStart = pos
                        // Cut short: the bytes end inside an item, or an array or string is
                        // longer than what remains and no block follows (else the length may be
                        // the damage).
                        let cut = switch error.cbor {
                        case .endOfInput: true
                        case .countExceedsInput, .lengthExceedsInput: nextMagic(after: pos + 1) == bytes.count
                        default: false
                        }
                        damageReason = "block at offset \(pos): " + (cut ? "the block is cut short: " : "") + "\(error.message) (at offset \(error.offset ?? pos))"
                    }
                }
                pos = nextMagic(after: pos + 1)
            } else {
                if damageStart == nil {
                    damageStart = pos
                    damageReason = pos == 0 ? "not a .peernote block (wrong magic bytes)" : "bytes at offset \(pos) are not a block"
                }
                pos = nextMagic(after: pos)
            }
        }
        closeDamage(at: bytes.count, into: &regions)
        for r in regions.indices where regions[r].kind == .damaged && SalvageRegion.holdsNoChange(bytes[regions[r].range]) {
            regions[r].changeCount = 0
            regions[r].problem = (regions[r].problem ?? "not a block") + "; they cannot have held a change (fewer than "
                + "\(SalvageRegion.smallestBlockWithAChange) bytes, and none of them starts the block magic)"
        }
        if trusted.isEmpty, regions.count == 1, bytes.count > 0, regions[0].offset == 0, !startsWithMagic(at: 0) {
            throw .invalidDocument(offset: 0, message: "nothing can be recovered: not a .peernote file (wrong magic bytes, and no block anywhere in it)")
        }
        if bytes.isEmpty { throw .invalidDocument(offset: 0, message: "nothing can be recovered: the file is empty") }
    }

    func startsWithMagic(at pos: Int) -> Bool {
        guard bytes.count - pos >= Format.magic.count else { return false }
        for i in 0 ..< Format.magic.count where bytes[pos + i] != Format.magic[i] { return false }
        return true
    }

    /// The offset of the next magic at or after `pos`, or the end of the file.
    func nextMagic(after pos: Int) -> Int {
        var p = max(pos, 0)
        let first = Format.magic[0]
        while p + Format.magic.count <= bytes.count {
            if bytes[p] == first && startsWithMagic(at: p) { return p }
            p += 1
        }
        return bytes.count
    }

    /// One block at `pos` with its envelope and checksum checked (as `BlockCodec.decode` does
    /// for each block, but for one block at a time, so that damage elsewhere does not matter).
    static func decodeBlock(_ bytes: [UInt8], at pos: Int) -> Result<RawBlock, FormatError> {
        let item: CBORItem
        do { item = try CBORDecoder.decodeItem(bytes, at: pos, limits: CBORLimits(maxDepth: 8, maxItems: 16)) } catch {
            return .failure(FormatError(error))
        }
        guard case .tagged(let t1, let inner) = item.value, t1 == Format.selfDescribeTag,
              case .tagged(let t2, let body) = inner.value, t2 == Format.blockTag,
              let fields = body.array, fields.count == 3 else {
            return .failure(FormatError(offset: pos, message: "block is not [version, payload, checksum]"))
        }
        guard let version = fields[0].uint, version >= 1 else {
            return .failure(FormatError(offset: fields[0].offset, message: "format version is not a positive integer"))
        }
        guard let payload = fields[1].bytesValue else { return .failure(FormatError(offset: fields[1].offset, message: "block payload is not a byte string")) }
        guard let crc = fields[2].uint else { return .failure(FormatError(offset: fields[2].offset, message: "block checksum is not an unsigned integer")) }
        let actual = CRC32.checksum(payload)
        guard UInt64(actual) == crc else {
            return .failure(FormatError(offset: fields[1].offset, message: "checksum mismatch: block says \(Hex.string(UInt32(truncatingIfNeeded: crc))), contents give \(Hex.string(actual))"))
        }
        guard version <= Format.version else {
            return .failure(FormatError(offset: fields[0].offset, message: "format version \(version) is newer than this tool reads", unsupportedVersion: version))
        }
        return .success(RawBlock(offset: pos, end: item.end, version: version, payloadOffset: fields[1].end - payload.count, payload: payload))
    }

    /// Refuses payloads that `WireCodec.decodePayload` cannot read safely: an append block whose
    /// `firstRow` is more rows than the file can hold makes its row arithmetic overflow (a trap).
    static func preflight(_ raw: RawBlock, fileSize: Int) -> FormatError? {
        guard let map = try? CBORDecoder.decodeItem(raw.payload, at: 0, limits: CBORLimits(maxDepth: 16, maxItems: raw.payload.count + 16)),
              map.mapValue(forKey: BlockKey.kind.rawValue)?.uint == BlockKind.append.rawValue,
              let item = map.mapValue(forKey: BlockKey.firstRow.rawValue), let firstRow = item.uint else { return nil }
        let maxRows = WireCodec.Limits().maxRows(fileSize: fileSize)
        guard firstRow > maxRows else { return nil }
        return FormatError(offset: raw.payloadOffset + item.offset, message: "the block starts at row \(firstRow), more rows than a \(fileSize)-byte file can hold")
    }

    // MARK: What deciding which changes to keep records (SalvageDecision.swift decides)

    /// Identifies a change of a trusted block.
    struct ChangeKey: Hashable, Comparable {
        var block: Int
        var index: Int
        static func < (a: ChangeKey, b: ChangeKey) -> Bool { (a.block, a.index) < (b.block, b.index) }
    }

    /// For each row of the original file held by a trusted block, which change it is.
    var changeAtRow: [Int: ChangeKey] = [:]

    /// An intact block left out whole, and the part of `parts` it belongs to.
    struct LeftOutBlock {
        var trusted: Trusted
        var part: Int
    }
    var leftOutBlocks: [LeftOutBlock] = []
    /// The left-out parts as `numberRows` found them (their changes are filled in by `finish`).
    var parts: [SalvageLeftOut] = []

    // MARK: Replaying

    /// Why a replay stopped: the change at fault.
    struct ReplayFailure: Error {
        var key: ChangeKey
        /// Why the change cannot be used.
        var message: String
        /// The change of the same block that makes this one unusable, when it is another one.
        var culprit: ChangeKey?
        /// Whether the replay ran out of integration work (`work`).
        var outOfWork = false
    }

    /// Verifies and applies the kept changes, block by block, into a new document (as
    /// `Document.load` does, but skipping the units of dropped changes), within the loader's
    /// bound on integration work and what is left of `work`, which it takes its work from.
    func replay(_ fates: [ChangeKey: Fate]) -> Result<Document, ReplayFailure> {
        let budget = Swift.min(VerifiedFile.workBudget(fileSize: bytes.count), work.steps)
        var used = 0
        defer { work.steps -= used }
        let result = replay(fates, workBudget: budget, used: &used)
        if case .success(let doc) = result { doc.state.workBudget = .max }
        return result
    }

    /// `replay(fates)` within `workBudget` scan steps; `used` is set to the steps taken.
    private func replay(_ fates: [ChangeKey: Fate], workBudget: Int, used: inout Int) -> Result<Document, ReplayFailure> {
        let base = trusted[0].block
        guard let docID = base.documentID, let genesis = base.genesis else {
            return .failure(ReplayFailure(key: ChangeKey(block: 0, index: 0), message: "the base block has no identity"))
        }
        let doc = Document(id: docID, genesis: genesis, log: OpLog(), state: DocState(), replica: .random(), author: "")
        // The loader's bound on integration work (`Document.load`): a crafted file's concurrent
        // inserts at one place (quadratic work) make their change fail to apply here, and it is
        // dropped, instead of the replay running for minutes.
        doc.state.workBudget = workBudget
        defer { used = workBudget - Swift.max(doc.state.workBudget, 0) }
        // The log's changes in the order they were kept, by key (for an error of the canonical replay).
        var keys: [ChangeKey] = []
        doc.unknownFields = base.unknownFields
        var newRow: [Int: Int] = [:]   // original row → row in the recovered document
        for (bi, t) in trusted.enumerated() {
            // A block that leaves origins out (format version 3) gets them from its structures
            // first: replaying it change by change needs them.
            let block = t.block.statingDerivedOrigins()
            if bi > 0 { for f in block.unknownFields where !doc.unknownFields.contains(f) { doc.unknownFields.append(f) } }
            let agents = block.replicas.map { doc.log.agent(for: $0) }
            let mapAgent: (LocalID) -> LocalID = { id in id.isNone || id.isUnstated ? id : LocalID(agent: agents[Int(id.agent)], counter: id.counter) }
            var opIndex = 0
            var used = 0
            var opFirstID = LocalID.none
            var opStartedInDropped = false
            let blockText = block.text
            for (i, c) in block.changes.enumerated() {
                let key = ChangeKey(block: bi, index: i)
                let keep = fates[key] == .kept
                if !keep {
                    // Skip its units.
                    var remaining = c.length
                    while remaining > 0 && opIndex < block.ops.count {
                        if used == 0 { opStartedInDropped = true }
                        let take = min(block.ops[opIndex].length - used, remaining)
                        used += take
                        remaining -= take
                        if used == block.ops[opIndex].length { opIndex += 1; used = 0 }
                    }
                    continue
                }
                func fail(_ m: String) -> Result<Document, ReplayFailure> {
                    .failure(ReplayFailure(key: key, message: "its ops do not apply to what its history holds: \(m)"))
                }
                let agent = agents[c.replica]
                let expected = doc.log.changeCount(of: agent) + 1
                guard Int(c.seq) == expected else { return fail("sequence number \(c.seq), expected \(expected)") }
                var deps: [Int] = []
                for d in block.deps(of: i) {
                    guard let mapped = newRow[d] else { return fail("a dependency was not recovered") }
                    deps.append(mapped)
                }
                // Times so far from now that two of them could not be stored side by side (compact
                // saves store differences) are not trustworthy: real clocks are within ±2^62 s.
                guard !guardTimes || c.time.magnitude <= Self.maxTime else { return fail("its time \(c.time) s is out of range") }
                // Op counters are 32-bit: a replica's units must fit (the loader traps here; see ROBUSTNESS.md).
                let counterStart = doc.log.lastChange(of: agent).map { Int(doc.log.changes.counterStart($0)) + doc.log.changes.length($0) } ?? 0
                guard counterStart + c.length <= Int(UInt32.max) else { return fail("its op counters pass 2^32") }
                let ci = doc.log.beginChange(agent: agent, deps: deps, time: c.time, author: block.author(of: i),
                                             message: block.message(of: i), extra: Array(block.extra(of: i)))
                newRow[row(of: key)] = ci
                keys.append(key)
                let lvStart = doc.log.lvCount
                var remaining = c.length
                while remaining > 0 {
                    guard opIndex < block.ops.count else { return fail("the ops end before the change does") }
                    let op = block.ops[opIndex]
                    if used == 0 {
                        opFirstID = doc.log.nextID
                        opStartedInDropped = false
                    } else if opStartedInDropped || doc.log.nextID != opFirstID.advanced(by: used) {
                        return fail("an op runs on into it from another change")
                    }
                    let take = min(op.length - used, remaining)
                    let piece: WireBlock.Piece
                    do { piece = try WireBlock.piece(of: op, text: blockText, used: used, take: take, firstID: opFirstID, mapAgent: mapAgent) } catch {
                        return fail(error.message)
                    }
                    let body = piece.body, scalars = piece.scalars
                    if case .createNote(_, _, let created) = body, guardTimes, created.magnitude > Self.maxTime {
                        return fail("a note's creation time \(created) s is out of range")
                    }
                    doc.log.append(body, length: take, scalars: scalars)
                    used += take
                    remaining -= take
                    if used == op.length { opIndex += 1; used = 0 }
                }
                // Apply this change's units to the state.
                let lvEnd = doc.log.lvCount
                let record = doc.log.changes[ci]
                var k = doc.log.opIndex(containingLV: lvStart)
                while k < doc.log.ops.count && doc.log.ops[k].lv < lvEnd {
                    let whole = doc.log.ops[k]
                    let from = max(whole.lv, lvStart), to = min(whole.lv + whole.length, lvEnd)
                    let piece = doc.log.slice(whole, from: from, to: to)
                    do {
                        try doc.state.apply(piece, id: doc.log.localID(ofLV: from, change: ci), lamport: record.lamport + UInt64(from - lvStart),
                                            replicas: doc.log.replicas, text: doc.log.textView)
                    } catch {
                        var failure = ReplayFailure(key: key, message: "its ops do not apply to what its history holds: \(error.description(in: doc.log))")
                        failure.outOfWork = error == .tooMuchWork
                        return .failure(failure)
                    }
                    k += 1
                }
            }
            // Text stored in document order (a state section) can only be put in place once
            // every change of its block is back: without them, which character is which is lost.
            if let snapshot = block.state {
                let first = ChangeKey(block: bi, index: 0)
                if let bad = block.changes.indices.first(where: { fates[ChangeKey(block: bi, index: $0)] != .kept }) {
                    let culprit = ChangeKey(block: bi, index: bad)
                    return .failure(ReplayFailure(key: first, message: "its block stores its text in document order, which needs every change of the block, "
                                                  + "and the change at row \(row(of: culprit)) (\(changeID(culprit))) cannot be used", culprit: culprit))
                }
                // The log and state are moved out of the document (two accesses to it at once would conflict).
                var log = OpLog(), state = DocState()
                swap(&log, &doc.log)
                swap(&state, &doc.state)
                defer { swap(&log, &doc.log); swap(&state, &doc.state) }
                do throws(PeerNoteError) { try BlockReplayer.fillText(snapshot, dead: block.deadText, block: block, log: &log, state: &state) } catch {
                    return .failure(ReplayFailure(key: first, message: "its ops do not apply to what its history holds: \(error.description)"))
                }
            }
        }
        // The state is the canonical order's (`DocState.canonical`), from what is left of the budget.
        if doc.log.firstOutOfCanonicalOrder() != nil {
            do throws(ApplyFailure) {
                doc.state = try DocState.canonical(of: doc.log, workBudget: doc.state.workBudget)
            } catch {
                let key = error.change < keys.count ? keys[error.change] : ChangeKey(block: 0, index: 0)
                var failure = ReplayFailure(key: key, message: "its ops do not apply to what its history holds: \(error.error.description(in: doc.log))")
                failure.outOfWork = error.error == .tooMuchWork
                doc.state.workBudget = 0
                return .failure(failure)
            }
        }
        return .success(doc)
    }

    /// Whether a change time or note creation time lies outside ±`maxTime` (see `guardTimes`).
    static func hasExtremeTimes(_ d: Document) -> Bool {
        if d.log.changes.contains(where: { $0.time.magnitude > maxTime }) { return true }
        return d.log.ops.contains { op in
            if case .createNote(_, _, let created) = op.body { return created.magnitude > maxTime }
            return false
        }
    }

    /// Whether every append block says the bytes and rows before it are exactly those of the file.
    func appendBlocksChain() -> Bool {
        var crc: UInt32 = 0
        var rows = 0
        var end = 0
        for t in trusted {
            if t.block.kind == .append && (t.block.previousCRC != crc || t.block.firstRow != rows) { return false }
            crc = CRC32.checksum(bytes[t.raw.offset ..< t.raw.end], initial: crc)
            rows += t.block.changes.count
            end = t.raw.end
        }
        return end == bytes.count
    }

    // MARK: Result

    /// The result, or nil when it must be saved compact but holds times a compact save cannot store.
    func finish(_ recovered: Document, fates: [ChangeKey: Fate]) throws(PeerNoteError) -> SalvageResult? {
        var dropped: [DroppedChange] = []
        var keptPerBlock = [Int](repeating: 0, count: trusted.count)
        for key in fates.keys.sorted() {
            let c = trusted[key.block].block.changes[key.index]
            switch fates[key] ?? .kept {
            case .kept: keptPerBlock[key.block] += 1
            case .dropped(let reason):
                let block = trusted[key.block].block
                dropped.append(DroppedChange(id: changeID(key), author: block.author(of: key.index), time: Date(timeIntervalSince1970: TimeInterval(c.time)),
                                             message: block.message(of: key.index), reason: reason))
            }
        }

        // Prefer the intact prefix of the file when it holds exactly what was recovered.
        var output: [UInt8]?
        var document = recovered
        var prefixBlocks = 0
        var expectedOffset = 0
        for (bi, t) in trusted.enumerated() {
            guard t.raw.offset == expectedOffset, keptPerBlock[bi] == t.block.changes.count else { break }
            prefixBlocks += 1
            expectedOffset = t.raw.end
        }
        let keptTotal = keptPerBlock.reduce(0, +)
        // Intact: every byte is in a block that was kept whole, every block follows the bytes before it.
        if expectedOffset == bytes.count, prefixBlocks == trusted.count, dropped.isEmpty, appendBlocksChain(),
           let loaded = try? Document.load(bytes) {
            return SalvageResult(document: loaded, bytes: bytes, isIntact: true, regions: report(keptPerBlock, loaded).regions, droppedChanges: [],
                                 unreadableChanges: 0, uncounted: [], start: nil, baseOffset: 0, leftOut: [])
        }
        if prefixBlocks > 0, keptPerBlock[..<prefixBlocks].reduce(0, +) == keptTotal,
           let prefixDoc = try? Document.load(Array(bytes[..<expectedOffset])) {
            output = Array(bytes[..<expectedOffset])
            document = prefixDoc
        }
        let outBytes: [UInt8]
        if let output { outBytes = output } else {
            if !guardTimes && Self.hasExtremeTimes(recovered) { return nil }
            outBytes = recovered.save(.compact)
            do { document = try Document.load(outBytes) } catch {
                throw .invalidDocument(offset: nil, message: "the recovered changes do not form a valid document: \(error)")
            }
        }
        let unreadable = unreadableRows.reduce(0) { $0 + $1.count } + rowsBeforeBase
        if document.changeCount != keptTotal {
            throw .invalidDocument(offset: nil, message: "the recovered document holds \(document.changeCount) changes, expected \(keptTotal)")
        }
        let (regions, leftOut) = report(keptPerBlock, document)
        return SalvageResult(document: document, bytes: outBytes, isIntact: false, regions: regions, droppedChanges: dropped,
                             unreadableChanges: unreadable, uncounted: uncounted, start: start, baseOffset: baseOffset, leftOut: leftOut)
    }

    /// The regions with what became of each block's changes, and the left-out parts with their
    /// changes, given the changes kept per placed block and the `recovered` document.
    func report(_ keptPerBlock: [Int], _ recovered: Document) -> (regions: [SalvageRegion], leftOut: [SalvageLeftOut]) {
        var regions = self.regions
        var parts = self.parts
        for (bi, t) in trusted.enumerated() {
            regions[t.region].keptChanges = keptPerBlock[bi]
            let lost = t.block.changes.count - keptPerBlock[bi]
            regions[t.region].droppedChanges = lost
            if lost > 0 { regions[t.region].problem = SalvageRegion.droppedProblem(lost, of: t.block.changes.count) }
        }
        for lb in leftOutBlocks {
            let block = lb.trusted.block
            // Changes of another document are not this one's, whatever their ids.
            let ours = parts[lb.part].kind == .copy || parts[lb.part].kind == .unplacedAppends || (parts[lb.part].kind == .orphanAppends && orphansAreOurs)
            var already = 0
            for (i, c) in block.changes.enumerated() {
                let id = ChangeID(replica: block.replicas[c.replica], seq: c.seq)
                let held = ours && recovered.log.changeIndex(of: id) != nil
                if held { already += 1 }
                parts[lb.part].changes.append(SalvageLeftOut.Change(id: id, author: block.author(of: i), alreadyRecovered: held))
            }
            let r = lb.trusted.region
            regions[r].alreadyRecovered = already
            let earlierCopy = parts[lb.part].kind == .orphanAppends && orphansAreOurs
            var problem = "left out: " + (earlierCopy ? "an append block of an earlier copy of this notebook whose base block is lost" : regions[r].problem ?? "")
            if already > 0 { problem += SalvageRegion.alreadyText(already, of: block.changes.count) }
            regions[r].problem = problem
        }
        if !nested {
            for p in parts.indices where parts[p].kind == .otherDocument || parts[p].kind == .copy {
                if let alone = try? Document.salvage(Array(bytes[parts[p].range]), nested: true, work: work) {
                    parts[p].onItsOwn = SalvageLeftOut.OnItsOwn(title: alone.document.title, changes: alone.document.changeCount, intact: alone.isIntact)
                }
            }
        }
        return (regions, parts)
    }
}
