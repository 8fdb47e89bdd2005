#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A field of a note that can hold an open conflict, by the name a person gives it
/// (`peernote resolve FILE NOTE FIELD`): concurrent titles, priorities, moves, and a deletion
/// made while another copy edited the note.
public enum ConflictField: String, CaseIterable, Sendable {
    case title, priority, position, deleted
}

/// One of the outcomes a person can choose to close a conflict, numbered from 1 in a fixed order
/// (oldest first: by the time, then the change id, of the first write that made it), the same on
/// every copy that holds the same conflict.
///
/// `value` is the text of the outcome: a title; a priority (`low`, `normal`, `high`); for a move
/// conflict the 0-based index among the live notes where the note would show (`index`); for a
/// note deleted while edited `deleted` (it stays deleted) or `restored` (it comes back with the
/// edits). `by` lists who chose it, oldest first.
public struct ConflictChoice: Equatable, Sendable {
    public var number: Int
    public var value: String
    /// For a move conflict, the index the note would show at; nil for other conflicts.
    public var index: Int?
    public var by: [Attribution]
}

/// What `Document.resolve` did: the field whose conflict it closed and the value the note now has.
public struct ConflictResolution: Equatable, Sendable {
    public var note: NoteID
    public var field: ConflictField
    /// The value kept: a title, a priority, an index, `deleted` or `restored`.
    public var value: String
    /// The choice it was, when it was one of the conflict's (`--pick`, or `--value` naming one).
    public var choice: Int?
}

extension Conflict {
    /// The field of a note this conflict is on; nil for the notebook title.
    public var field: ConflictField? {
        switch self {
        case .notebookTitle: nil
        case .noteTitle: .title
        case .priority: .priority
        case .position: .position
        case .deletedWhileEdited: .deleted
        }
    }
}

extension Document {
    /// The open conflicts of one note (as `conflicts` lists them), title, priority, position and
    /// deletion, in that order.
    ///
    /// - Complexity: O(size of the note's registers) for a note without conflicts; a move
    ///   conflict walks the order of notes, and a deleted note the ops that touched it.
    public func conflicts(of id: NoteID) -> [Conflict] {
        guard let local = localID(id), let slot = state.slot(of: local) else { return [] }
        let n = state.noteStates[slot]
        let title = n.title.value ?? ""
        if n.isDeleted {
            // Whether edits were made without seeing the deletion needs the history: as `conflicts` finds it.
            return conflicts.filter { if case .deletedWhileEdited(let note, _, _, _) = $0 { note == id } else { false } }
        }
        var out: [Conflict] = []
        if n.title.isConflicted {
            let c = Conflict.noteTitle(note: id, values: conflictValues(n.title) { $0 }, showing: title)
            if c.isDisagreement { out.append(c) }
        }
        if n.priority.isConflicted {
            let c = Conflict.priority(note: id, noteTitle: title, values: conflictValues(n.priority) { $0.rawValue },
                                      showing: (n.priority.value ?? .normal).rawValue)
            if c.isDisagreement { out.append(c) }
        }
        if n.position.isConflicted, notesMovedToOnePlace([id]).isEmpty {
            out.append(.position(note: id, noteTitle: title, moves: n.position.sortedEntries(replicas: log.replicas).compactMap { attribution(of: $0.id) }))
        }
        return out
    }

    /// The open conflict on the notebook's title, if any.
    public var notebookTitleConflict: Conflict? {
        guard state.title.isConflicted else { return nil }
        let c = Conflict.notebookTitle(values: conflictValues(state.title) { $0 }, showing: title)
        return c.isDisagreement ? c : nil
    }

    private func conflictValues<V>(_ r: MVRegister<V>, _ show: (V) -> String) -> [ConflictValue] {
        r.sortedEntries(replicas: log.replicas).compactMap { e in attribution(of: e.id).map { ConflictValue(value: show(e.value), by: $0) } }
    }

    /// The numbered outcomes of `conflict` (see `ConflictChoice`): for a title or a priority each
    /// distinct value (the same scalars are one value, with every author who wrote it); for a
    /// move each distinct index the note would show at; for a note deleted while edited,
    /// 1 `deleted` (by its deleters) and 2 `restored` (by those who edited it).
    public func choices(for conflict: Conflict) -> [ConflictChoice] {
        func grouped(_ items: [(value: String, index: Int?, by: Attribution)]) -> [ConflictChoice] {
            let sorted = items.sorted { ($0.by.time, $0.by.change) < ($1.by.time, $1.by.change) }
            var out: [ConflictChoice] = []
            var seen: [ExactString: Int] = [:]
            for item in sorted {
                if let i = seen[ExactString(item.value)] { out[i].by.append(item.by); continue }
                seen[ExactString(item.value)] = out.count
                out.append(ConflictChoice(number: out.count + 1, value: item.value, index: item.index, by: [item.by]))
            }
            return out
        }
        switch conflict {
        case .notebookTitle(let values, _), .noteTitle(_, let values, _), .priority(_, _, let values, _):
            return grouped(values.map { ($0.value, nil, $0.by) })
        case .position(let note, _, _):
            return grouped(movePlaces(of: note).map { ("\($0.index)", $0.index, $0.by) })
        case .deletedWhileEdited(_, _, let deletedBy, let editedBy):
            let order: (Attribution, Attribution) -> Bool = { ($0.time, $0.change) < ($1.time, $1.change) }
            return [ConflictChoice(number: 1, value: "deleted", index: nil, by: deletedBy.sorted(by: order)),
                    ConflictChoice(number: 2, value: "restored", index: nil, by: editedBy.sorted(by: order))]
        }
    }

    /// For each place a move conflict of `note` holds, who moved it there and the 0-based index
    /// among the live notes where the note shows when that place wins.
    private func movePlaces(of note: NoteID) -> [(index: Int, by: Attribution)] {
        guard let local = localID(note), let slot = state.slot(of: local) else { return [] }
        let state = self.state
        let entries = state.noteStates[slot].position.sortedEntries(replicas: log.replicas)
        let places = Set(entries.map(\.value))
        var before: [LocalID: Int] = [:]
        var shown = 0
        state.order.forEachElement { place, other, _ in
            if places.contains(place) { before[place] = shown }
            guard other != local, let i = state.slot(of: other), !state.noteStates[i].isDeleted,
                  state.noteStates[i].position.value == place else { return }
            shown += 1
        }
        return entries.compactMap { e in
            guard let index = before[e.value], let by = attribution(of: e.id) else { return nil }
            return (index, by)
        }
    }

    /// Closes the open conflict on `field` of note `id` by choice `pick` of `choices(for:)`
    /// (1-based), recorded as one change that overwrites every value the conflict holds, so that
    /// it closes on every copy it merges into. Throws `invalidArgument` when the note has no open
    /// conflict on that field or `pick` is out of range; records nothing then.
    @discardableResult
    public func resolve(_ id: NoteID, field: ConflictField, pick: Int, message: String? = nil) throws(PeerNoteError) -> ConflictResolution {
        let conflict = try openConflict(id, field: field)
        let choices = choices(for: conflict)
        guard pick >= 1, pick <= choices.count else {
            throw .invalidArgument("pick \(pick) is out of range: the \(field.rawValue) conflict of note \(id.short) has \(choices.count) values, 1 to \(choices.count)")
        }
        return try apply(choices[pick - 1].value, choice: pick, to: id, field: field, message: message)
    }

    /// Closes the open conflict on `field` of note `id` by setting `value`, which need not be one
    /// of the conflict's: a title; `low`, `normal` or `high`; an index among the live notes
    /// (0-based, as `moveNote` takes it); `deleted`/`true`/`yes` or `restored`/`false`/`no`.
    /// Recorded as one change; throws `invalidArgument` (recording nothing) when the note has no
    /// open conflict on that field or the value does not fit it.
    @discardableResult
    public func resolve(_ id: NoteID, field: ConflictField, value: String, message: String? = nil) throws(PeerNoteError) -> ConflictResolution {
        let conflict = try openConflict(id, field: field)
        var value = value
        switch field {
        case .title: break
        case .priority:
            guard Priority(rawValue: value) != nil else { throw .invalidArgument("\"\(value.clippedForMessage())\" is not a priority: low, normal or high") }
        case .position:
            guard let index = Int(value), index >= 0, index < notes.count else {
                throw .invalidArgument("\"\(value.clippedForMessage())\" is not an index among the notes: 0 to \(notes.count - 1)")
            }
            value = String(index)
        case .deleted:
            switch value.lowercased() {
            case "deleted", "true", "yes": value = "deleted"
            case "restored", "false", "no": value = "restored"
            default: throw .invalidArgument("\"\(value.clippedForMessage())\" is not a choice for a deleted note: deleted (true) or restored (false)")
            }
        }
        let choice = choices(for: conflict).first { $0.value.hasSameScalars(as: value) }?.number
        return try apply(value, choice: choice, to: id, field: field, message: message)
    }

    /// The open conflict on `field` of note `id`, or the error saying which the note has.
    private func openConflict(_ id: NoteID, field: ConflictField) throws(PeerNoteError) -> Conflict {
        guard note(id) != nil else { throw .noSuchNote(id.description) }
        let open = conflicts(of: id)
        if let conflict = open.first(where: { $0.field == field }) { return conflict }
        let others = open.compactMap(\.field?.rawValue)
        throw .invalidArgument("note \(id.short) has no open \(field.rawValue) conflict"
            + (others.isEmpty ? "; it has no open conflicts" : "; its open conflicts: \(others.joined(separator: ", "))"))
    }

    private func apply(_ value: String, choice: Int?, to id: NoteID, field: ConflictField, message: String?) throws(PeerNoteError) -> ConflictResolution {
        let title = note(id)?.title ?? ""
        try transaction(message: message ?? "Resolve the \(field.rawValue) conflict of \"\(title)\"") { () throws(PeerNoteError) in
            switch field {
            case .title: try setNoteTitle(id, value)
            case .priority: if let p = Priority(rawValue: value) { try setPriority(id, p) }
            case .position: if let i = Int(value) { try moveNote(id, to: i) }
            case .deleted: if value == "deleted" { try deleteNote(id) } else { try restoreNote(id) }
            }
        }
        return ConflictResolution(note: id, field: field, value: value, choice: choice)
    }
}
