#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One stretch of a damaged file, as `Document.salvage(_:)` saw it.
public struct SalvageRegion: Sendable, Equatable {
    /// What the bytes of a region are.
    public enum Kind: String, Sendable {
        /// An intact block holding the document's identity and first changes.
        case baseBlock = "base block"
        /// An intact block appended by an incremental save.
        case appendBlock = "append block"
        /// Bytes that are not an intact block: damaged, truncated, or not a block at all.
        case damaged
    }

    /// Offset of the region's first byte in the file.
    public var offset: Int
    public var length: Int
    public var kind: Kind
    /// The changes the block holds: nil for damaged bytes, whose contents are not known, except 0
    /// for damaged bytes that cannot have held a change (see `SalvageRegion.holdsNoChange`), and the
    /// rows of an earlier copy of the notebook at the start of the file that the next block shows
    /// they held (then `alreadyRecovered` too).
    public var changeCount: Int?
    /// The changes of the block that were recovered.
    public var keptChanges: Int
    /// Why the region, or some of its changes, could not be used (nil when all of it was kept).
    public var problem: String?
    /// The changes of the block dropped because their history is incomplete (listed in
    /// `SalvageResult.droppedChanges`).
    public var droppedChanges: Int = 0
    /// The changes of a block left out whole (see `SalvageLeftOut`) that the recovered document
    /// holds anyway, because another copy of them was kept.
    public var alreadyRecovered: Int = 0

    /// The half-open byte range `offset ..< offset + length`.
    public var range: Range<Int> { offset ..< offset + length }

    /// The fewest bytes a block that holds a change takes: the 8 magic bytes, the heads of the
    /// envelope's array, version, payload and checksum (at least 5 bytes, the payload's head 2
    /// since the payload is longer than 23 bytes), and a payload of at least 36 bytes (the map's
    /// head and the 9 fields every block requires, each at least a 1-byte key and a 1-byte value,
    /// one of them the replica table, which holds a 16-byte replica id once the block has a change).
    public static let smallestBlockWithAChange = 49

    /// Whether damaged bytes cannot have held any change: fewer than `smallestBlockWithAChange`,
    /// and no byte of them starts the block magic (a whole one, or as much of it as there is
    /// before their end). A block that is cut short keeps its first bytes, magic included, and a
    /// block whose magic is hit keeps its length, so such bytes are neither; only two separate
    /// damages to the same block (its magic hit and the block cut to under 49 bytes) escape this.
    public static func holdsNoChange(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count < smallestBlockWithAChange else { return false }
        for start in bytes.indices {
            let n = min(Format.magic.count, bytes.endIndex - start)
            if bytes[start ..< start + n].elementsEqual(Format.magic[..<n]) { return false }
        }
        return true
    }

    /// `; its change is already in the output`, for one block or, with `blocks` above 1, for a run of blocks reported together.
    public static func alreadyText(_ already: Int, of n: Int, blocks: Int = 1) -> String {
        let whose = blocks == 1 ? "its" : "their"
        if already == n {
            if n == 1 { return "; \(whose) change is already in the output" }
            return blocks == 1 ? "; all \(n) of its changes are already in the output" : "; their \(n) changes are already in the output"
        }
        return "; \(already) of \(whose) \(n) \(n == 1 ? "change" : "changes") \(already == 1 ? "is" : "are") already in the output"
    }

    /// `2 of its 3 changes were dropped (their history is incomplete)`, for one block or, with
    /// `blocks` above 1, for a run of blocks reported together.
    public static func droppedProblem(_ dropped: Int, of total: Int, blocks: Int = 1) -> String {
        let whose = blocks == 1 ? "its" : "their"
        return "\(dropped) of \(whose) \(total) \(total == 1 ? "change" : "changes") \(dropped == 1 ? "was" : "were") dropped "
            + "(\(dropped == 1 ? "its" : "their") history is incomplete)"
    }
}

/// Intact blocks that `Document.salvage(_:)` left out whole, because they are not part of the
/// recovered document's history: another notebook glued on after it, a second copy of it, or
/// append blocks that fit nowhere in it. Their changes are not in the output unless
/// `alreadyRecovered` says the output holds them anyway.
public struct SalvageLeftOut: Sendable, Equatable {
    /// What the blocks are.
    public enum Kind: String, Sendable {
        /// A base block of another document and the blocks after it.
        case otherDocument = "other notebook"
        /// A base block of the recovered document (a second copy of it) and the blocks after it.
        case copy = "copy"
        /// Append blocks before the first intact base block: the document they belong to is not known.
        case orphanAppends = "append blocks without a base block"
        /// Append blocks after the recovered document's base block whose rows do not follow the blocks before them.
        case unplacedAppends = "append blocks that fit nowhere"
    }

    /// One intact change of the blocks.
    public struct Change: Sendable, Equatable {
        public var id: ChangeID
        public var author: String
        /// Whether the recovered document holds this change anyway (only for `copy` and `unplacedAppends`).
        public var alreadyRecovered: Bool
    }

    public var kind: Kind
    /// For `otherDocument` and `copy`: from the base block to where the next left-out base block
    /// starts or the file ends, damaged bytes included, so that these bytes cut out of the file
    /// are that notebook on its own. Otherwise from the first of the blocks to the end of the last.
    public var range: Range<Int>
    /// The id in the base block (nil for append blocks without one).
    public var documentID: UUID?
    /// The intact changes of the blocks, in file order.
    public var changes: [Change]
    /// What `Document.salvage` gives back from `range` on its own (only for `otherDocument` and
    /// `copy`; nil when nothing can be recovered from it).
    public var onItsOwn: OnItsOwn?

    /// What salvaging the bytes of a left-out notebook on their own gives.
    public struct OnItsOwn: Sendable, Equatable {
        public var title: String
        public var changes: Int
        /// True when the bytes are a valid document as they are.
        public var intact: Bool
    }

    /// The changes the output does not hold.
    public var missing: [Change] { changes.filter { !$0.alreadyRecovered } }
}

/// Why the changes held by damaged bytes cannot all be counted (`SalvageResult.uncounted`).
public enum SalvageUncounted: String, Sendable, Equatable {
    /// The file ends inside damaged bytes (a truncated file): nothing after them numbers their rows.
    case truncated = "the file ends inside damaged bytes"
    /// Damaged bytes after the recovered notebook's last block are followed only by blocks that are
    /// not this notebook's continuation (left out, or another notebook): none numbers their rows.
    case noLaterBlock = "no later block of this notebook follows damaged bytes"
    /// Damaged bytes come before the recovered notebook's base block: they held the start of a
    /// notebook (or junk), and only append blocks after them, if any, tell how many rows it had at least.
    case beforeBase = "damaged bytes come before the base block"
}

/// What a file starts with when its first bytes are not the recovered notebook's base block.
public enum SalvageStart: String, Sendable, Equatable {
    /// An earlier copy of the recovered notebook whose base block was lost: append blocks after it
    /// continue bytes identical to the recovered blocks, so it is the same notebook.
    case earlierCopy = "earlier copy"
    /// A notebook whose base block was lost, and nothing tells which one it was: it may be another
    /// notebook than the one recovered.
    case unknownNotebook = "unknown notebook"
}

/// An intact change that salvage had to leave out because its causal history is incomplete.
public struct DroppedChange: Sendable, Equatable {
    public var id: ChangeID
    public var author: String
    public var time: Date
    public var message: String
    /// Why it was dropped, e.g. `depends on change 7@1a2b3c4d, which was dropped`.
    public var reason: String
}

/// What `Document.salvage(_:)` recovered from a damaged file, and exactly what it could not.
public struct SalvageResult {
    /// The recovered document (fully verified).
    public let document: Document
    /// The recovered file: the input unchanged when it was intact; its longest intact prefix of
    /// blocks when everything recovered lies there; otherwise the recovered changes saved compact.
    public let bytes: [UInt8]
    /// True when the input was a valid document: nothing was lost and `bytes` is the input.
    public let isIntact: Bool
    /// Every stretch of the input, in file order, covering it completely.
    public let regions: [SalvageRegion]
    /// Intact changes left out because their causal history is incomplete, in file order.
    public let droppedChanges: [DroppedChange]
    /// Changes that were in damaged bytes, as far as the row numbers of later intact blocks tell.
    public let unreadableChanges: Int
    /// Why damaged bytes may have held more changes than `unreadableChanges` counts (empty when
    /// the count is exact). Damaged bytes that cannot have held a change
    /// (`SalvageRegion.holdsNoChange`), and damaged bytes inside a left-out notebook or copy
    /// (which are its loss, not the output's), never add a reason.
    public let uncounted: [SalvageUncounted]
    /// False when damaged bytes may have held more changes than `unreadableChanges` counts (see `uncounted`).
    public var unreadableChangesExact: Bool { uncounted.isEmpty }
    /// What the file starts with when that is not the recovered notebook's base block (nil when it
    /// is, or when only bytes that cannot hold a change come before it).
    public let start: SalvageStart?
    /// Offset of the recovered notebook's base block.
    public let baseOffset: Int
    /// Intact blocks left out whole (another notebook glued on, a second copy, blocks that fit
    /// nowhere), in file order.
    public let leftOut: [SalvageLeftOut]

    /// Bytes of the input in damaged regions.
    public var damagedBytes: Int { regions.filter { $0.kind == .damaged }.reduce(0) { $0 + $1.length } }
    /// Bytes of the input in damaged regions inside a left-out notebook or copy that could have held
    /// a change (part of `damagedBytes`): that notebook's loss, not the output's.
    public var damagedBytesOfLeftOut: Int {
        let ranges = leftOut.filter { $0.kind == .otherDocument || $0.kind == .copy }.map(\.range)
        return regions.filter { r in r.kind == .damaged && r.changeCount != 0 && ranges.contains { $0.contains(r.offset) } }.reduce(0) { $0 + $1.length }
    }
    /// Bytes of the input in damaged regions whose changes the output holds anyway (an earlier copy
    /// of this notebook at the start of the file; part of `damagedBytes`).
    public var damagedBytesAlreadyRecovered: Int {
        regions.filter { $0.kind == .damaged && $0.alreadyRecovered > 0 && $0.alreadyRecovered == $0.changeCount }.reduce(0) { $0 + $1.length }
    }
    /// Bytes of the input in damaged regions that cannot have held a change (part of `damagedBytes`).
    public var bytesWithoutChanges: Int { regions.filter { $0.kind == .damaged && $0.changeCount == 0 }.reduce(0) { $0 + $1.length } }
    /// Intact changes of left-out blocks that the output does not hold.
    public var leftOutChanges: Int { leftOut.reduce(0) { $0 + $1.missing.count } }
    /// Whether anything at all was lost.
    public var lostAnything: Bool { !isIntact }
}
