#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a reader holds once it has read and verified a file: the file's bytes, and the log and
/// state its blocks give in file order with what they used of the file's budgets. A save that
/// appends blocks to these bytes is checked by reading only those blocks from here, as
/// `Document.load` reads them after the earlier ones (`Document.checkAppended`).
///
/// Invariants: `log` and `state` are what `Document.load` holds after replaying every block of
/// `bytes` in file order (no canonical replay: the rows are in canonical order), before it makes
/// a document of them; `workSpent` is the integration work that replay took; `totals` what the
/// blocks hold of the row and memory budgets; `checksum` is the CRC-32 of `bytes[..<checksummed]`.
///
/// Memory: the log and state share their storage with the document's until it edits; then the
/// document holds its own copy of the log's arrays and of each note it changed, beside these.
struct VerifiedFile: Sendable {
    var bytes: [UInt8]
    var genesis: ChangeID
    var log: OpLog
    var state: DocState
    var workSpent: Int
    var totals: WireCodec.Totals
    /// The changes the file holds (its next block's first row).
    var rows: Int
    var checksum: UInt32
    var checksummed: Int

    /// Integration steps a file may ask for per op row its size admits (`workBudget`).
    static let workPerRow = 8

    /// The integration work (list scan steps, `ListCRDT.integrate`) a file of `fileSize` bytes
    /// may ask of its reader, and, separately, of a canonical replay: `workPerRow` steps for
    /// each op row the file's size admits (`WireCodec.Limits.maxRows`: 8 a byte + 65,536), that
    /// is 64 steps a byte + 524,288. Hostile files could otherwise ask for quadratic work (a
    /// crafted insert leaves a note to the element-by-element scan, then thousands of inserts
    /// at one place each scan the others); they are refused once they have taken it.
    ///
    /// Why per row, not per byte: an honest history takes a bounded number of steps per insert
    /// (the sibling index), but compresses without bound (80,000 characters typed backwards by
    /// 8 devices save in 1,813 bytes and take 149,994 steps, 83 a byte); its op rows are bounded
    /// by the row budget, which a writer pads files to meet, so whatever the library saves stays
    /// within this. Measured on 2026-11-26 (`AdversarialCorpusTests/honestWorkWithinBudget`,
    /// docs/ROBUSTNESS.md): the most steps per op row an honest history took was 1.875 (the
    /// fixtures, the editing traces, every family of the adversarial corpus), a margin of 4.3.
    static func workBudget(fileSize: Int) -> Int { workPerRow * Int(WireCodec.Limits().maxRows(fileSize: fileSize)) }
}

extension Document {
    /// What a reader holds after reading `bytes` when they are `verified`'s bytes with blocks
    /// appended, found by reading only those blocks from `verified`'s state: what `Document.load`
    /// does after the blocks before them, with the same checks, errors and limits. The blocks'
    /// rows come after the file's (`firstRow`), each block follows the bytes before it
    /// (`previousCRC`), the row and memory budgets are the file's, counted from what the earlier
    /// blocks used (`totals`), and the integration work is what the whole file's size allows
    /// less what the earlier blocks took (`workSpent`). Sound because `load` reads a file's blocks
    /// in order, each from the state the ones before it leave, and the earlier blocks' limits
    /// only grow with the file's size (a block that passed them in the shorter file passes them
    /// in the longer one, and reads the same).
    ///
    /// When the rows end out of canonical order, the changes are then applied again in that order
    /// as `load` applies them (`BlockReplayer.replayCanonically`, from the state before the first
    /// block out of it: `verified`'s rows are in it), and the verdict is `.loadsCanonically`:
    /// `load` keeps no record of such a file either. A merge in place of concurrent changes is
    /// checked so, not by reading its whole file again.
    ///
    /// Nil, with nothing decided, where `load` does more than this: `bytes` are not `verified`'s
    /// with blocks appended, an appended block has a state section (a writer writes one only in
    /// a base block; a reader refuses a second base block before it looks at that), or the
    /// canonical pass fails (the full read names the block). Throws `load`'s error when the
    /// appended blocks would not load.
    static func checkAppended(_ bytes: [UInt8], after verified: consuming VerifiedFile) throws(PeerNoteError) -> AppendedCheck? {
        let start = verified.bytes.count
        guard bytes.count >= start, Self.samePrefix(bytes, verified.bytes) else { return nil }
        if bytes.count == start { return .verified(verified) }
        let raws: [RawBlock]
        do { raws = try BlockCodec.decode(bytes, from: start) } catch { throw error.documentError }
        var totals = verified.totals
        let blocks: [WireBlock]
        do { blocks = try WireCodec.decodePayloads(raws, fileSize: bytes.count, totals: &totals) } catch { throw error.documentError }
        // Moved out of `verified`, not copied (a copy's first append would copy the whole log).
        var replayer = BlockReplayer(genesis: verified.genesis)
        replayer.keepsStateBeforeDisorder = true
        swap(&replayer.log, &verified.log)
        swap(&replayer.state, &verified.state)
        let budget = VerifiedFile.workBudget(fileSize: bytes.count) - verified.workSpent
        replayer.state.workBudget = budget
        var rows = verified.rows
        var crc = verified.checksum
        var crcEnd = verified.checksummed
        for block in blocks {
            // As `load` reads a block after the first (its unknown fields change nothing it checks).
            try Self.checkPlacement(of: block, in: bytes, crc: &crc, checksummed: &crcEnd, rows: rows)
            // A state section is checked against the history: that part of `load` is not repeated here.
            guard block.state == nil else { return nil }
            try replayer.replay(block)
            rows += block.changes.count
        }
        guard replayer.log.firstOutOfCanonicalOrder(from: verified.rows) == nil else {
            // `load` applies the changes again in the canonical order with a budget as large as
            // the first (the whole file's), from the state before the first block out of it.
            do throws(PeerNoteError) {
                try replayer.replayCanonically(workBudget: VerifiedFile.workBudget(fileSize: bytes.count)) { _ in 0 }
            } catch {
                return nil
            }
            return .loadsCanonically
        }
        let spent = verified.workSpent + (budget - replayer.state.workBudget)
        replayer.state.workBudget = .max
        return .verified(VerifiedFile(bytes: bytes, genesis: verified.genesis, log: replayer.log, state: replayer.state, workSpent: spent,
                                      totals: totals, rows: rows, checksum: crc, checksummed: crcEnd))
    }

    /// What `checkAppended` decided of a save that loads.
    enum AppendedCheck {
        /// The reader's record of the file, its rows in canonical order.
        case verified(VerifiedFile)
        /// The file loads; its rows are not in canonical order, so a reader keeps no record.
        case loadsCanonically

        /// The record, when there is one.
        var record: VerifiedFile? {
            if case .verified(let file) = self { return file }
            return nil
        }
    }

    /// Whether `bytes` begin with `prefix` (a memory comparison; no copy).
    fileprivate static func samePrefix(_ bytes: [UInt8], _ prefix: [UInt8]) -> Bool {
        guard bytes.count >= prefix.count else { return false }
        return bytes.withUnsafeBytes { b in
            prefix.withUnsafeBytes { p in
                guard let bp = b.baseAddress, let pp = p.baseAddress else { return p.isEmpty }
                return memcmp(bp, pp, p.count) == 0
            }
        }
    }
}
