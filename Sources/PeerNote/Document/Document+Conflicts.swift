#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Document {
    /// Every open conflict: concurrent writes of different values, concurrent moves to different
    /// places, and notes deleted on one copy while edited on another. Two copies that set the same
    /// value (both retitled a note "Groceries") agree, and that is not a conflict here; nor are
    /// concurrent moves that all show the note at one place (see `notesMovedToOnePlace`).
    public var conflicts: [Conflict] {
        let all = concurrentValues
        let moved = all.compactMap { if case .position(let note, _, _) = $0 { note } else { nil } }
        let agreeing = moved.isEmpty ? [] : notesMovedToOnePlace(moved)
        return all.filter { conflict in
            if case .position(let note, _, _) = conflict { return !agreeing.contains(note) }
            return conflict.isDisagreement
        }
    }

    /// Those of `notes` (live, each with concurrent moves) whose moves agree: wherever the note
    /// showed, at any of the places its position register holds, the live notes would read in the
    /// same order. That is so when, walking the order list, no place showing another live note
    /// lies between the first and the last of those places (two copies that moved a note to one
    /// index inserted adjacent places). A function of the merged state alone, so the same on
    /// every copy; a later move of another note in between makes it a conflict again.
    func notesMovedToOnePlace(_ notes: [NoteID]) -> Set<NoteID> {
        let state = self.state
        // Each note's places, and what the walk saw at each: the number of other live notes shown before it.
        var places: [LocalID: Set<LocalID>] = [:]
        for id in notes {
            guard let local = localID(id), let slot = state.slot(of: local) else { continue }
            places[local] = Set(state.noteStates[slot].position.ids)
        }
        var shownBefore: [LocalID: Int] = [:]
        var differ: Set<LocalID> = [], passedOwnPlace: Set<LocalID> = []
        var shown = 0
        state.order.forEachElement { place, note, _ in
            if let own = places[note], own.contains(place) {
                // The note's own shown place, when passed, is not another note's.
                let before = shown - (passedOwnPlace.contains(note) ? 1 : 0)
                if let first = shownBefore[note] {
                    if first != before { differ.insert(note) }
                } else {
                    shownBefore[note] = before
                }
            }
            guard let i = state.slot(of: note), !state.noteStates[i].isDeleted, state.noteStates[i].position.value == place else { return }
            shown += 1
            if places[note] != nil { passedOwnPlace.insert(note) }
        }
        return Set(places.keys.filter { !differ.contains($0) }.map(noteID))
    }

    /// Every register that holds concurrent values, whether or not they differ, plus concurrent
    /// moves and notes deleted while edited. The file format's state section is written and
    /// checked against this (a register holding two entries is shown from the history).
    /// Notes in document order of their current place.
    ///
    /// - Complexity: one pass over the notes' registers (no walk of the order of notes unless
    ///   two notes or more have something to report), plus `concurrentEdits` when notes are deleted.
    var concurrentValues: [Conflict] {
        var out: [Conflict] = []
        if state.title.isConflicted {
            out.append(.notebookTitle(values: values(state.title) { $0 }, showing: title))
        }
        let state = self.state
        // The notes with something to report, found in slot order; most have nothing, and are
        // looked at in place, without copying them.
        var deleted: [Int] = [], conflicted: [Int] = []
        state.noteStates.withNotePlaces { notes in
            for slot in 0 ..< notes.count {
                notes.read(slot) { note in
                    if note.isDeleted {
                        deleted.append(slot)
                    } else if note.title.isConflicted || note.priority.isConflicted || note.position.isConflicted {
                        conflicted.append(slot)
                    }
                }
            }
        }
        let editsByDeletedNote = concurrentEdits(of: deleted.map { state.noteStates[$0] })
        var reported = conflicted + deleted.filter { editsByDeletedNote[state.noteStates[$0].id] != nil }
        // In document order: the notes at their places in the order of notes (`allNoteSlotsInOrder`,
        // which holds every note once: the place its position register shows holds it). One note
        // needs no order, only that place.
        if reported.count > 1 {
            let shown = Set(reported)
            reported = state.allNoteSlotsInOrder.filter { shown.contains($0) }
        } else if let only = reported.first, !(state.noteStates[only].position.value.map { state.order.contains($0) } ?? false) {
            reported = []
        }
        for slot in reported {
            let n = state.noteStates[slot]
            let nid = noteID(n.id)
            let noteTitle = n.title.value ?? ""
            if n.isDeleted {
                if let edits = editsByDeletedNote[n.id], !edits.isEmpty {
                    let deleters = n.deleted.sortedEntries(replicas: log.replicas).filter(\.value).compactMap { attribution(of: $0.id) }
                    out.append(.deletedWhileEdited(note: nid, noteTitle: noteTitle, deletedBy: deleters, editedBy: edits))
                }
                continue
            }
            if n.title.isConflicted {
                out.append(.noteTitle(note: nid, values: values(n.title) { $0 }, showing: noteTitle))
            }
            if n.priority.isConflicted {
                out.append(.priority(note: nid, noteTitle: noteTitle, values: values(n.priority) { $0.rawValue },
                                     showing: (n.priority.value ?? .normal).rawValue))
            }
            if n.position.isConflicted {
                out.append(.position(note: nid, noteTitle: noteTitle, moves: n.position.sortedEntries(replicas: log.replicas).compactMap { attribution(of: $0.id) }))
            }
        }
        return out
    }

    private func values<V>(_ r: MVRegister<V>, _ show: (V) -> String) -> [ConflictValue] {
        r.sortedEntries(replicas: log.replicas).compactMap { e in attribution(of: e.id).map { ConflictValue(value: show(e.value), by: $0) } }
    }

    func attribution(of id: LocalID) -> Attribution? {
        guard let ci = log.changeIndex(containing: id) else { return nil }
        return attribution(change: ci)
    }

    func attribution(change ci: Int) -> Attribution {
        let c = log.changes[ci]
        return Attribution(change: log.changeID(ci), author: log.author(of: ci), time: Date(timeIntervalSince1970: TimeInterval(c.time)))
    }

    /// For each deleted note, the changes that edited it without having seen its deletion: those
    /// not in the causal past of every live delete of it.
    ///
    /// - Complexity: one pass over the ops, then `OpLog.pastContains` for the (edit, delete)
    ///   pairs that Lamport timestamps and log order leave open; memory linear in the log.
    private func concurrentEdits(of deleted: [NoteState]) -> [LocalID: [Attribution]] {
        guard !deleted.isEmpty else { return [:] }
        let log = self.log
        // The changes holding each deleted note's live deletes.
        var deletes: [LocalID: [Int]] = [:]
        for n in deleted {
            var dels = n.deleted.entries.filter(\.value).compactMap { log.changeIndex(containing: $0.id) }
            dels.sort()
            deletes[n.id] = dels.isEmpty ? nil : dels
        }
        // The changes that edited each of them (not deleting or restoring it), each once: ops
        // come in log order, so a change is the last one listed for its note or new.
        var edits: [LocalID: [Int]] = [:]
        guard !deletes.isEmpty else { return [:] }
        // A few deleted notes are compared directly: hashing every op's note cost more than the scan.
        let few = deletes.count <= 8 ? Array(deletes.keys) : nil
        var ci = 0
        // Ops read in place: a copy of each would retain and release its titles, tags and
        // overwritten ids, most of this pass's work on a large notebook.
        log.ops.withParts { adopted, appended in
            for ops in [adopted, appended] {
                for i in ops.indices {
                    guard let target = ops[i].body.note, few?.contains(target) ?? (deletes[target] != nil) else { continue }
                    switch ops[i].body {
                    case .deleteNote, .restoreNote: continue
                    default: break
                    }
                    // Each unit of the op may lie in a different change; take each change it spans.
                    let start = ops[i].lv, end = ops[i].lv + ops[i].length
                    var lv = start
                    while lv < end {
                        ci = log.changeIndex(containingLV: lv, from: ci)
                        if edits[target]?.last != ci { edits[target, default: []].append(ci) }
                        lv = min(log.changes.lvEnd(ci), end)
                    }
                }
            }
        }
        // An edit is seen by a delete when it is in the delete's causal past. Settled here when
        // log order or Lamport timestamps decide it (a change after the delete in a causal order,
        // or whose timestamp is not below the delete's, is not in its past); the rest are asked
        // together. `pending[e]`: the queries edit e's verdict waits on.
        var unseen: [LocalID: [Int]] = [:]
        var queries: [OpLog.PastQuery] = []
        var pending: [(note: LocalID, change: Int, queries: Range<Int>)] = []
        for (note, changes) in edits {
            guard let dels = deletes[note] else { continue }
            for c in changes {
                let first = queries.count
                var seen = true
                for d in dels {
                    if d == c { continue }
                    if c > d || log.changes.lamportEnd(c) >= log.changes.lamport(d) { seen = false; break }
                    queries.append(OpLog.PastQuery(root: d, agent: log.changes.agent(c), seq: log.changes.seq(c)))
                }
                if !seen {
                    queries.removeLast(queries.count - first)
                    unseen[note, default: []].append(c)
                } else if queries.count > first {
                    pending.append((note, c, first ..< queries.count))
                }
            }
        }
        let answers = log.pastContains(queries)
        for p in pending where !answers[p.queries].allSatisfy({ $0 }) {
            unseen[p.note, default: []].append(p.change)
        }
        // Deterministic order on every copy: causal (lamport), then replica id.
        return unseen.mapValues { changes in
            changes.sorted { (log.changes[$0].lamport, log.replicas[Int(log.changes[$0].agent)]) < (log.changes[$1].lamport, log.replicas[Int(log.changes[$1].agent)]) }
                .map { attribution(change: $0) }
        }
    }
}
