extension Document {
    /// The places where the merge that returned `summary` met two copies' text edits (see
    /// `TextOverlap`), in note order, then body order. Call it right after that merge: it compares
    /// the edits this copy had made with those the merge brought in, on the body as it now is.
    public func textOverlaps(of summary: MergeSummary) -> [TextOverlap] {
        overlapSearch(of: summary).run()
    }

    /// `textOverlaps(of:)`, to run later or on another thread (while the document is saved, say):
    /// the search holds the document's history and state as they are now (shared, not copied,
    /// until the document changes). Take it right after the merge that returned `summary`.
    public func overlapSearch(of summary: MergeSummary) -> OverlapSearch {
        OverlapSearch(log: log, state: state, sides: summary.sides)
    }
}
