/// A place in a merged note body where the two copies' text edits met, so that the merged text,
/// though every edit in it survives, may not read as either author meant.
///
/// Two kinds are found (others, such as both copies typing at one place, only put the two
/// texts one after the other, and are not reported):
/// - `sameText`: both copies put text at one place where at least one of them replaced text
///   (the same typo fixed on two devices; a word replaced on one and a word typed before it on
///   the other): both are kept, side by side ("teh" fixed twice reads "thehe"; "Monday"
///   replaced by "Friday" where "next " was typed before it may read "Frinext day");
/// - `insideDeleted`: text one copy added lies in text only the other copy deleted, or at its
///   edge and belonging with it (a clause added to a paragraph deleted elsewhere, "See: " typed
///   before it, a sentence added after a deleted one): it stays, without the text around it.
public struct TextOverlap: Equatable, Hashable, Sendable {
    public enum Kind: String, Sendable {
        case sameText, insideDeleted
    }

    public var note: NoteID
    public var noteTitle: String
    public var kind: Kind
    /// The line of the merged body (from 1) where the place starts.
    public var line: Int

    /// The note title compared by its exact Unicode scalars, as every string of a document is.
    public static func == (a: TextOverlap, b: TextOverlap) -> Bool {
        a.note == b.note && a.noteTitle.hasSameScalars(as: b.noteTitle) && a.kind == b.kind && a.line == b.line
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(note)
        hasher.combine(ExactString(noteTitle))
        hasher.combine(kind)
        hasher.combine(line)
    }
}
