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

    init(of document: Document) {
        id = document.id
        genesis = document.genesis
        log = document.log
        unknownFields = document.unknownFields
        transactionWasOpen = document.core.transactionDepth > 0
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

    /// How many changes the copy holds.
    public var changeCount: Int { log.changes.count }
}

extension Document {
    /// What a merge takes in from this copy (see `MergeSource`), its log shared, not copied.
    public var mergeSource: MergeSource { MergeSource(of: self) }
}
