#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A note without its body: what a list of notes shows. A `Note` carries its whole body as a
/// string, which a list of many notes builds only to drop; a summary costs its title and tags.
public struct NoteSummary: Identifiable, Equatable, Hashable, Sendable {
    public var id: NoteID
    public var title: String
    /// Sorted.
    public var tags: [String]
    public var priority: Priority
    public var created: Date
    /// Deleted notes appear only in `Document.deletedNoteSummaries(matching:)`.
    public var isDeleted: Bool

    /// The note this summarizes, with `body` as its body (empty: a note without its body, for
    /// what reads only its place, title or tags).
    public func note(body: String = "") -> Note {
        Note(id: id, title: title, body: body, tags: tags, priority: priority, created: created, isDeleted: isDeleted)
    }

    public init(id: NoteID, title: String, tags: [String], priority: Priority, created: Date, isDeleted: Bool = false) {
        self.id = id
        self.title = title
        self.tags = tags
        self.priority = priority
        self.created = created
        self.isDeleted = isDeleted
    }

    /// The summary of `note`.
    public init(_ note: Note) {
        self.init(id: note.id, title: note.title, tags: note.tags, priority: note.priority, created: note.created, isDeleted: note.isDeleted)
    }
}

extension Document {
    /// The live notes in document order, without their bodies (`notes` with them).
    /// - Complexity: O(n) in notes, plus their titles and tags; no body is read.
    public var noteSummaries: [NoteSummary] { state.orderedNoteSlots.map { summary(state.noteStates[$0]) } }

    /// The notebook that lines telling `conflicts` (this document's) name places in: its id,
    /// title and `conflicts`, and its live notes in order, without their bodies, only when a
    /// conflict of concurrent moves is among them (its line says where the note shows, by its
    /// index among them); no note otherwise.
    /// - Complexity: O(c) for c conflicts without such a conflict; O(n) with one, no body made.
    public func notebook(forConflicts conflicts: [Conflict]) -> Notebook {
        let positioned = conflicts.contains { if case .position = $0 { true } else { false } }
        let notes = positioned ? noteSummaries.map { $0.note() } : []
        return Notebook(id: id, title: title, notes: notes, conflicts: conflicts)
    }

    /// The live notes `filter` keeps, each with its index among the live notes, in document
    /// order: `notes(matching:)` without the bodies.
    public func noteSummaries(matching filter: NoteFilter) -> [(index: Int, note: NoteSummary)] {
        withNoteRows(matching: filter) { rows in (0 ..< rows.count).map { r in (rows.index(r) ?? r, rows.summary(r)) } }
    }

    /// The deleted notes `filter` keeps, in document order: `deletedNotes(matching:)` without
    /// the bodies.
    public func deletedNoteSummaries(matching filter: NoteFilter) -> [NoteSummary] {
        withNoteRows(matching: filter, deleted: true) { rows in (0 ..< rows.count).map(rows.summary) }
    }

    /// Calls `body` with the notes `filter` keeps, read where they lie: the live notes, each
    /// with its index among them, or with `deleted` the deleted ones, in document order. What
    /// `noteSummaries(matching:)` and `deletedNoteSummaries(matching:)` give, without a summary
    /// made a note (a listing of many notes reads each cell as it writes it). The rows read the
    /// notes as they were when the call began; they are meant for the call alone.
    /// - Complexity: O(n) in notes to choose them; each row's cells read in O(1) plus its
    ///   title and tags.
    package func withNoteRows<T>(matching filter: NoteFilter, deleted: Bool = false, _ body: (NoteRows) throws -> T) rethrows -> T {
        let conflicted: Set<NoteID> = filter.conflicted ? Set(conflicts.compactMap(\.note)) : []
        let state = self.state
        return try state.noteStates.withNotePlaces { notes in
            func kept(_ slot: Int) -> Bool {
                filter.isEmpty || notes.read(slot) { keeps(noteID($0.id), $0.tags.visible, $0.priority.value ?? .normal, filter, conflicted) }
            }
            var slots: [Int] = []
            var indices: [Int]?
            if deleted {
                for slot in state.allNoteSlotsInOrder where notes.read(slot, { $0.isDeleted }) && kept(slot) { slots.append(slot) }
            } else {
                let live = state.orderedNoteSlots
                if filter.isEmpty {
                    slots = live
                } else {
                    var chosen: [Int] = []
                    for (i, slot) in live.enumerated() where kept(slot) {
                        slots.append(slot)
                        chosen.append(i)
                    }
                    indices = chosen
                }
            }
            return try body(NoteRows(document: self, table: state.noteStates, notes: notes, slots: slots, indices: indices, indexed: !deleted))
        }
    }

    /// How many live notes the notebook has (`notes.count` without making them).
    public var noteCount: Int { state.orderedNoteSlots.count }

    /// The index of live note `id` among the live notes (what `moveNote` and `addNote(at:)`
    /// count), or nil when it is deleted or not in this notebook.
    public func index(of id: NoteID) -> Int? {
        guard let local = localID(id) else { return nil }
        return state.orderedNoteSlots.firstIndex { state.noteStates[$0].id == local }
    }

    func summary(_ n: NoteState) -> NoteSummary {
        withUnsafePointer(to: n) { summary($0) }
    }

    /// The summary of the note `n` points at, read in place. (Its tags through `tags.visible`:
    /// a computed property of the note itself, `visibleTags`, read through the pointer copies
    /// the whole note first, retaining and releasing all it holds.)
    func summary(_ n: UnsafePointer<NoteState>) -> NoteSummary {
        NoteSummary(id: noteID(n.pointee.id), title: n.pointee.title.value ?? "", tags: n.pointee.tags.visible,
                    priority: n.pointee.priority.value ?? .normal,
                    created: Date(timeIntervalSince1970: TimeInterval(n.pointee.created)), isDeleted: n.pointee.isDeleted)
    }
}

/// The notes a listing shows, read where they lie (`Document.withNoteRows`): row `r`'s index
/// among the live notes, id, title, tags and priority, as `NoteSummary` has them.
///
/// Invariant: `notes` points into `table`, the note table the rows hold: a row read after the
/// call (or after the document changed) still reads the notes as they were when it began.
package struct NoteRows {
    fileprivate let document: Document
    fileprivate let table: NoteTable
    fileprivate let notes: NotePlaces
    fileprivate let slots: [Int]
    /// Each row's index among the live notes when a filter chose them (else the row's own).
    fileprivate let indices: [Int]?
    fileprivate let indexed: Bool

    package var count: Int { slots.count }

    /// Row `r`'s index among the live notes; nil for a deleted note.
    package func index(_ r: Int) -> Int? { indexed ? indices?[r] ?? r : nil }
    // Stored properties read through the pointer, as `Document.summary` reads them: a computed
    // property of the note itself would copy the whole note first. (Through `NotePlaces.read`,
    // a closure a cell, a 20,000-note listing took 4 ms more CPU.)
    package func id(_ r: Int) -> NoteID { document.noteID(notes[slots[r]].pointee.id) }
    package func title(_ r: Int) -> String { notes[slots[r]].pointee.title.value ?? "" }
    /// Sorted; made anew on each call.
    package func tags(_ r: Int) -> [String] { notes[slots[r]].pointee.tags.visible }
    package func priority(_ r: Int) -> Priority { notes[slots[r]].pointee.priority.value ?? .normal }
    /// Row `r`'s note as a summary.
    package func summary(_ r: Int) -> NoteSummary { document.summary(UnsafePointer(notes[slots[r]])) }
}
