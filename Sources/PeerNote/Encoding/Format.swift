/// Numbers that define the .peernote file format (man/peernote.5). None of
/// them may change meaning; new ones are only ever added.
enum Format {
    /// CBOR self-describe tag (RFC 8949 §3.4.6): a file starts `D9 D9 F7`.
    static let selfDescribeTag: UInt64 = 55_799
    /// The PeerNote block tag, ASCII "pnot": with the self-describe tag, every block starts
    /// with the eight magic bytes `D9 D9 F7 DA 70 6E 6F 74`.
    static let blockTag: UInt64 = 0x706E_6F74
    /// CBOR tag 37: a binary UUID (RFC 9562 in 16 bytes).
    static let uuidTag: UInt64 = 37
    static let magic: [UInt8] = [0xD9, 0xD9, 0xF7, 0xDA, 0x70, 0x6E, 0x6F, 0x74]
    /// The newest format version this library reads and writes; files with a larger version are
    /// refused. `FormatInfo.version` publishes it.
    static let version: UInt64 = 3
    /// The version a block is written with: 3 when it has a state section that stores each note
    /// body's structure (and column 49 says which inserts store their origins), 2 when it has one
    /// without (readers of version 1 would take its text column, which then holds only deleted
    /// text, for all inserted text), else 1.
    static func version(of block: WireBlock) -> UInt64 {
        guard let state = block.state else { return 1 }
        return state.storesStructures ? 3 : 2
    }
    /// The first version whose state section stores each note body's structure.
    static let structuresVersion: UInt64 = 3
    /// Upper bound on a block's inflated column bytes, relative to its compressed size
    /// (plus a constant), so a small file can never demand a large allocation.
    static let maxInflateRatio = 1_100
    static let maxInflateSlack = 1 << 16
}

/// What a block holds.
enum BlockKind: UInt64 {
    /// The first block: document identity plus changes.
    case base = 0
    /// More changes, appended to the file after earlier blocks.
    case append = 1
}

/// Keys of a block's payload map.
enum BlockKey: UInt64, CaseIterable {
    case kind = 0
    case documentID = 1
    case genesis = 2
    case replicas = 3
    case strings = 4
    case changeCount = 5
    case opUnitCount = 6
    case columns = 7
    case columnsSize = 8
    case previousCRC = 9
    case firstRow = 10
    /// Zero bytes a writer adds so that a very compressible file meets the reader's limits.
    case padding = 11
    /// The state section (version 2): the notebook as readers see it after the block, deflated
    /// (`StateCodec`), so that reading it needs no replay. Only in a base block.
    case state = 12
    /// The state section's inflated size in bytes (bounds its decompression).
    case stateSize = 13
}

/// Column ids inside a block's column set. Change columns have one row per
/// change; op columns one row per op (sparse columns only for the ops that use them).
enum ColumnID: UInt64, CaseIterable {
    // Changes
    case changeReplica = 10      // uint RLE: index into the block's replica table
    case changeSeq = 11          // delta
    case changeLength = 12       // uint RLE: op units
    case changeDepCount = 13     // uint RLE
    case changeDepDistance = 14  // uint RLE: row - dependency's row (>= 1), rows counted across blocks
    case changeTime = 15         // delta: seconds since 1970
    case changeAuthor = 16       // uint RLE: index into strings
    case changeMessage = 17      // uint RLE: 0 = none, else index into strings + 1
    case changeExtraLength = 18  // uint RLE: bytes of verbatim CBOR extra fields
    case changeExtra = 19        // raw bytes
    // Ops
    case opKind = 30             // uint RLE (OpKind raw values; others are kept verbatim)
    case opLength = 31           // uint RLE: op units
    case opNoteReplica = 32      // uint RLE: for ops on a note
    case opNoteCounter = 33      // delta
    case opRef1Replica = 34      // uint RLE: replica index + 1, 0 = none (left origin; delete target)
    case opRef1Counter = 35      // delta (only when present)
    case opRef2Replica = 36      // uint RLE: as ref1 (right origin)
    case opRef2Counter = 37      // delta
    case opReversed = 38         // bool: deletes counting down
    case opValueLength = 39      // uint RLE: UTF-8 bytes of a title or tag
    case opValue = 40            // raw UTF-8
    case opPredCount = 41        // uint RLE: for register writes and tag removes
    case opPredReplica = 42      // uint RLE
    case opPredCounter = 43      // delta
    case opPriority = 44         // uint RLE: 0 low, 1 normal, 2 high
    case opCreated = 45          // delta: seconds since 1970
    case opText = 46             // raw UTF-8 of inserted text (op length counts Unicode scalars); with a state section, only the deleted part

    case opPayloadLength = 47    // uint RLE: bytes of an unknown op kind's CBOR payload
    case opPayload = 48          // raw bytes
    /// Version 3, with a state section: one value per insertText op, in op order. True when the
    /// op's origins are stored in columns 34-37; false when they follow from its note's
    /// structure (then it has no entries there).
    case opOriginsStored = 49    // bool
}
