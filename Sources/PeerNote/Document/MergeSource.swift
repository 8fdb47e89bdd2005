#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A copy of a notebook reduced to what a merge takes in from it: the document's identity, its
/// op log and the payload fields a newer version wrote. It holds no notebook (no note, title,
/// body or tag is materialized), so a copy that is only merged in costs its history's memory,
/// not a notebook's: `pnmerge merge` reads each THEIRS as one (but a THEIRS it may build its
/// result from).
///
/// Invariants: its parts are those of one `Document` (`Document.mergeSource`), taken when it was
/// made: a document that `Document.load` verified in full (`load(_:)`), or one this library's
/// edits and merges built. Merging it (`Document.merge(_:)`) takes in what merging that document
/// then would, with the same summary and the same refusals: one taken while a transaction was
/// open on the document is refused for good (its open change was still growing).
public final class MergeSource {
    /// The document's identity, shared by every copy.
    public let id: UUID
    /// The document's first change.
    public let genesis: ChangeID
    /// The copy's history (shared with the document it was taken from until either changes).
    /// `var` for the shared-history checks' count (`OpLog.sharedHistoryChecks`) and for holding
    /// its text itself (`keepingHistory(of:)`), never its changes.
    var log: OpLog
    /// Block fields a newer version wrote, as the document held them.
    let unknownFields: [[UInt8]]
    /// Whether a transaction was open on the document when this was taken.
    let transactionWasOpen: Bool
    /// Set when the log holds its first changes without their content
    /// (`keepingHistory(of:sharingFileWith:)`): the file they were read from, which a copy it
    /// is merged into must have been read from too, up to them.
    let sharedFile: SharedFile?

    /// The first `length` bytes of `bytes` (the file a source was read from, shared, not
    /// copied): whole blocks, which hold the source's first `changes` changes.
    struct SharedFile: Sendable {
        let bytes: [UInt8]
        let length: Int
        let changes: Int
    }

    init(of document: Document, sharedFile: SharedFile? = nil) {
        id = document.id
        genesis = document.genesis
        log = document.log
        unknownFields = document.unknownFields
        transactionWasOpen = document.core.transactionDepth > 0
        self.sharedFile = sharedFile
    }

    /// Reads and verifies `bytes` as `Document.load` does (every check, the same errors), and
    /// keeps only what a merge takes in: the notebook it built is let go before this returns.
    /// - Complexity: that of `Document.load(bytes)`, and the freeing of its notebook.
    public static func load(_ bytes: [UInt8]) throws(PeerNoteError) -> MergeSource {
        keepingHistory(of: try Document.load(bytes))
    }

    /// What a merge takes in from `document`, for a caller that lets the document go next: the
    /// log holds its text itself (a loaded log reads it in the notes' arenas, which would
    /// otherwise stay alive with it, scattered among the freed notebook), so that the notebook's
    /// memory goes with the document; unless every arena reads its text in the state section's
    /// bytes, which the log then keeps reading (one block, no copy). `document.mergeSource`
    /// shares the arenas instead, for a document that stays.
    /// - Complexity: O(text) when the log's text is read in arenas of the notes' own; O(notes)
    ///   when in a state section's bytes; O(1) otherwise.
    public static func keepingHistory(of document: Document) -> MergeSource {
        let source = MergeSource(of: document)
        source.log.settleTextOutsideSection()
        return source
    }

    /// `keepingHistory(of:)` for a merge into the copy read from `otherFile` (its bytes), before
    /// that copy is read: the blocks both files start with, byte for byte, hold the same first
    /// changes in both, so the log lets go of their ops and text (`OpLog.dropContent`) and keeps
    /// only what that copy may lack, with every change's entry. Two copies that one file was
    /// edited into by appending saves (a sync, git, a copy on a stick) share all of that file's
    /// blocks: a merge then holds the changes made since, not a second copy of the history.
    /// Merged into any other copy, the source is refused (`Document.merge(_:)` throws
    /// `invalidArgument`), as its content cannot be compared with that copy's.
    /// Used only for a document read by `Document.load` from its bytes and not changed since
    /// (else it is `keepingHistory(of:)`).
    /// - Complexity: O(common bytes) to compare the files, and O(ops and text kept).
    package static func keepingHistory(of document: Document, sharingFileWith otherFile: [UInt8]) -> MergeSource {
        guard let p = document.persisted, p.notInFile.isEmpty, p.rowOfChange.count == document.log.changes.count,
              p.units == document.log.lvCount, document.core.transactionDepth == 0,
              let shared = sharedBlocks(p, otherFile) else { return keepingHistory(of: document) }
        let source = MergeSource(of: document, sharedFile: SharedFile(bytes: p.bytes, length: shared.length, changes: shared.changes))
        source.log.dropContent(ofChangesBelow: shared.changes)
        return source
    }

    /// This source as `keepingHistory(of:)` would have made it, its content whole, when it was
    /// trimmed (`keepingHistory(of:sharingFileWith:)`) and `document` does not hold what it let
    /// go (a copy read again, changed by another writer in between): its file is read again and
    /// verified in full. Else this source itself.
    package func takenWhole(for document: Document) throws(PeerNoteError) -> MergeSource {
        guard let shared = sharedFile, !document.holdsAsRead(shared) else { return self }
        return try MergeSource.load(shared.bytes)
    }

    /// The whole blocks `p`'s file and `other` start with, byte for byte: their length and the
    /// changes they hold (nil when they do not share the first block whole).
    private static func sharedBlocks(_ p: Persisted, _ other: [UInt8]) -> (length: Int, changes: Int)? {
        let common = commonPrefixLength(p.bytes, other)
        // A block of the file starts where the one before it ends; the file's end ends the last.
        let ends = p.blockStarts.map { (offset: $0.offset, changes: $0.rowsBefore) } + [(offset: p.bytes.count, changes: p.fileChangeCount)]
        guard let last = ends.last(where: { $0.offset <= common }), last.changes > 0 else { return nil }
        return (last.offset, last.changes)
    }

    /// How many bytes `a` and `b` start with alike: eight at a time, then one at a time.
    static func commonPrefixLength(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                let n = Swift.min(a.count, b.count)
                guard n > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return 0 }
                var i = 0
                while i + 8 <= n,
                      UnsafeRawPointer(pa + i).loadUnaligned(as: UInt64.self) == UnsafeRawPointer(pb + i).loadUnaligned(as: UInt64.self) { i += 8 }
                while i < n && pa[i] == pb[i] { i += 1 }
                return i
            }
        }
    }

    /// How many changes the copy holds.
    public var changeCount: Int { log.changes.count }
}

extension Document {
    /// What a merge takes in from this copy (see `MergeSource`), its log shared, not copied.
    public var mergeSource: MergeSource { MergeSource(of: self) }
}
