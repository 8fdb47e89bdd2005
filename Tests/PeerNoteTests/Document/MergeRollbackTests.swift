import Foundation
import Testing
@testable import PeerNote

/// A merge that fails leaves the copy as it was. It keeps no copy of the whole op log to fall
/// back on, but rolls the log back to a checkpoint (`OpLog.rollBack(to:)`), so these hold the
/// rollback to the log as it stood, field by field, and to what a copy that never failed does next.
@Suite("A failed merge changes nothing")
struct MergeRollbackTests {
    /// Random edits by `doc`'s own replica: typing runs (which extend the last op and the last
    /// run of changes in place), backspaces, deletes, new notes, titles and tags, under a few
    /// authors and messages (new strings and change metadata).
    static func edit(_ doc: Document, _ rng: inout SeededRandom, steps: Int) throws {
        for _ in 0 ..< steps {
            let notes = doc.notes
            guard let note = notes.randomElement(using: &rng) else {
                doc.addNote(title: "first", body: "")
                continue
            }
            let count = note.body.unicodeScalars.count
            switch Int.random(in: 0 ..< 12, using: &rng) {
            case 0 ..< 5:
                // A burst of typing at one place: one change a keystroke.
                var at = Int.random(in: 0 ... count, using: &rng)
                for _ in 0 ..< Int.random(in: 1 ... 6, using: &rng) {
                    try doc.insertText(note.id, at: at, ["a", "é", "日", " "].randomElement(using: &rng) ?? "a")
                    at += 1
                }
            case 5, 6:
                if count > 0 {
                    let lo = Int.random(in: 0 ..< count, using: &rng)
                    try doc.deleteText(note.id, range: lo ..< min(count, lo + Int.random(in: 1 ... 3, using: &rng)))
                }
            case 7: doc.addNote(title: "n\(Int.random(in: 0 ..< 99, using: &rng))", body: "body")
            case 8: try doc.setNoteTitle(note.id, ["t", "T", "title"].randomElement(using: &rng) ?? "t")
            case 9: try doc.addTag(note.id, "tag\(Int.random(in: 0 ..< 3, using: &rng))")
            case 10: doc.author = ["alice", "bob", "carol \(Int.random(in: 0 ..< 9, using: &rng))"].randomElement(using: &rng) ?? "alice"
            default:
                try doc.transaction(message: "msg \(Int.random(in: 0 ..< 5, using: &rng))") {
                    try doc.insertText(note.id, at: 0, "m")
                }
            }
        }
    }

    /// Every stored field of a value, private ones included, dictionaries and sets in sorted
    /// order: two logs with the same description read, append and save alike.
    static func deepDescription(_ x: Any) -> String {
        let m = Mirror(reflecting: x)
        switch m.displayStyle {
        case .dictionary, .set:
            return "{" + m.children.map { deepDescription($0.value) }.sorted().joined(separator: ",") + "}"
        case .struct, .class, .tuple, .collection, .enum, .optional:
            if m.children.isEmpty { return "\(x)" }
            return "\(m.subjectType)(" + m.children.map { "\($0.label ?? ""):\(deepDescription($0.value))" }.joined(separator: ",") + ")"
        default:
            return "\(x)"
        }
    }

    /// Whether two logs hold the same, field by field (how many shared-history checks each took
    /// part in aside: a count that only picks how the next check compares).
    static func same(_ a: OpLog, _ b: OpLog) -> Bool {
        var a = a, b = b
        a.sharedHistoryChecks = 0
        b.sharedHistoryChecks = 0
        return deepDescription(a) == deepDescription(b)
    }

    @Test("rollBack(to:) takes a log back to its checkpoint, whatever was appended since (its own typing on, other copies' changes)")
    func logRollsBack() throws {
        for seed in 0 ..< 25 as Range<UInt64> {
            var rng = SeededRandom(state: seed)
            let doc = Document(title: "rollback", author: "alice")
            try Self.edit(doc, &rng, steps: 30)
            let other = doc.fork(author: "dave")
            try Self.edit(other, &rng, steps: 20)
            // The last op: typing, or a delete, that the next keystrokes continue.
            let note = try #require(doc.notes.first).id
            let at = Int.random(in: 0 ... (doc.note(note)?.body.unicodeScalars.count ?? 0), using: &rng)
            let typing = seed % 2 == 0
            if typing { try doc.insertText(note, at: at, "abc") } else { try doc.insertText(note, at: at, "xyzw"); try doc.deleteText(note, range: at ..< at + 1) }
            let saved = doc.log, savedState = doc.state
            let checkpoint = doc.log.checkpoint()
            // The same replica goes on (its last op and run of changes grow in place), then
            // another copy's changes come in (new replicas, strings, runs and dependencies).
            if typing { try doc.insertText(note, at: at + 3, "d") } else { try doc.deleteText(note, range: at ..< at + 1) }
            #expect(doc.log.ops.count == saved.ops.count, "seed \(seed): the last op grew in place")
            try Self.edit(doc, &rng, steps: Int.random(in: 0 ... 25, using: &rng))
            try doc.merge(other)
            var log = doc.log
            // And a change with extra fields (a newer version's), which the log keeps aside.
            let newer = log.agent(for: ReplicaID(high: 9, low: seed))
            _ = log.beginChange(agent: newer, time: 2, author: "newer", message: "", extra: [0x18, 0x2A, 0x01])
            log.rollBack(to: checkpoint)
            let rolledBack = Self.same(log, saved)
            #expect(rolledBack, "seed \(seed)")
            // And it takes the same appends again as the log it was.
            var again = saved
            let replica = ReplicaID(high: 7, low: seed)
            for l in [0, 1] {
                var target = l == 0 ? log : again
                let agent = target.agent(for: replica)
                _ = target.beginChange(agent: agent, time: 1, author: "zed", message: "again")
                if l == 0 { log = target } else { again = target }
            }
            let appended = Self.same(log, again)
            #expect(appended, "seed \(seed): appending after the rollback")
            // The replica types on where its last op ended, in the rolled-back log and in the log
            // as it was: the op grows (or not) alike.
            let copies = [log, again].map { Document(id: doc.id, genesis: doc.genesis, log: $0, state: savedState, replica: doc.replica, author: "alice") }
            // One time for both: typing on continues the last change only within its second, and
            // the second may turn between the two copies' keystrokes.
            let now = Date()
            for copy in copies {
                copy.clock = { now }
                if typing { try copy.insertText(note, at: at + 3, "q") } else { try copy.deleteText(note, range: at ..< at + 1) }
            }
            let typedOn = Self.same(copies[0].log, copies[1].log)
            #expect(typedOn, "seed \(seed): typing on after the rollback")
        }
    }

    @Test("A loaded log rolls back to its checkpoint: its ops as they were, the ones its load adopted still shared, typing on alike")
    func loadedLogRollsBack() throws {
        for seed in 0 ..< 15 as Range<UInt64> {
            var rng = SeededRandom(state: 50 + seed)
            let doc = Document(title: "loaded", author: "alice")
            let now = Date()
            doc.clock = { now }
            try Self.edit(doc, &rng, steps: 30)
            let note = try #require(doc.notes.first).id
            let at = Int.random(in: 0 ... (doc.note(note)?.body.unicodeScalars.count ?? 0), using: &rng)
            try doc.insertText(note, at: at, "abc")
            let other = doc.fork(author: "dave")
            try Self.edit(other, &rng, steps: 10)
            // Loaded, and edited by the same replica: its typing continues the last op, which the
            // load adopted (the log moves it out of the adopted array first).
            let loaded = try Document.load(doc.save(.compact))
            let copy = Document(id: loaded.id, genesis: loaded.genesis, log: loaded.log, state: loaded.state, replica: doc.replica, author: "alice")
            copy.clock = { now }
            let saved = copy.log, savedState = copy.state
            func adopted(_ log: OpLog) -> (address: UInt, count: Int) {
                log.ops.withParts { a, _ in (UInt(bitPattern: a.baseAddress), a.count) }
            }
            let shared = adopted(saved)
            #expect(shared.count == saved.ops.count, "seed \(seed): a load adopts its ops")
            let checkpoint = copy.log.checkpoint()
            try copy.insertText(note, at: at + 3, "d")
            #expect(copy.log.ops.count == saved.ops.count, "seed \(seed): the last op grew in place")
            try Self.edit(copy, &rng, steps: Int.random(in: 0 ... 15, using: &rng))
            try copy.merge(other)
            var log = copy.log
            log.rollBack(to: checkpoint)
            #expect(log.ops.array == saved.ops.array && log.changes.count == saved.changes.count, "seed \(seed)")
            #expect(adopted(log).address == shared.address, "seed \(seed): the adopted ops were copied")
            // Saved and typed on, the rolled-back log and the log as it was do alike.
            let copies = [log, saved].map { Document(id: doc.id, genesis: doc.genesis, log: $0, state: savedState, replica: doc.replica, author: "alice") }
            #expect(copies[0].save(.compact) == copies[1].save(.compact), "seed \(seed)")
            for c in copies {
                c.clock = { now }
                try c.insertText(note, at: at + 3, "q")
            }
            #expect(copies[0].log.ops.array == copies[1].log.ops.array, "seed \(seed): typing on after the rollback")
            #expect(copies[0].save(.compact) == copies[1].save(.compact), "seed \(seed): typing on after the rollback")
        }
    }

    @Test("A merge that fails while its changes are applied leaves the copy as it was; it then merges as a copy that never failed")
    func failedMergeChangesNothing() throws {
        var failures = 0
        for seed in 0 ..< 25 as Range<UInt64> {
            var rng = SeededRandom(state: 100 + seed)
            let base = Document(title: "base", author: "base")
            let note = base.addNote(title: "n", body: "shared text")
            try Self.edit(base, &rng, steps: 10)
            let mine = base.fork(author: "alice"), theirs = base.fork(author: "bob"), third = base.fork(author: "carol")
            try Self.edit(mine, &rng, steps: 15)
            try Self.edit(theirs, &rng, steps: 15)
            try Self.edit(third, &rng, steps: 10)
            // Both type at the very start: integrating the other's text there scans what this
            // copy typed, which costs work.
            try mine.insertText(note, at: 0, "mine ")
            try theirs.insertText(note, at: 0, "theirs ")
            // A copy that takes the same merges and never fails, to compare with.
            let control = mine.fork(author: "alice")
            // Checked by fingerprints from the third check on: fingerprint the logs now.
            for _ in 0 ..< 3 { #expect(mine.relation(to: theirs) == .shared) }
            let before = mine.save(.compact), notebook = mine.notebook, changeCount = mine.changeCount
            let logBefore = mine.log

            // No integration work allowed: the merge fails once the log has taken the changes in.
            mine.state.workBudget = 0
            do {
                try mine.merge(theirs)
                Issue.record("seed \(seed): the merge did not fail")
            } catch {
                failures += 1
            }
            mine.state.workBudget = .max
            let asItWas = Self.same(mine.log, logBefore)
            #expect(asItWas, "seed \(seed): the log as it was")
            #expect(mine.save(.compact) == before, "seed \(seed)")
            #expect(mine.notebook == notebook)
            #expect(mine.changeCount == changeCount)

            // Then it merges as the copy that never failed: first a third copy (whose replicas and
            // strings take the indices the failed merge had used), then the other again.
            // (The same changes again at once take the same strings and metadata as before: a
            // lookup the rollback forgot would name what is gone.)
            for other in seed % 2 == 0 ? [third, theirs] : [theirs, third] {
                let a = try mine.merge(other), b = try control.merge(other)
                #expect(a.changesByAuthor.map(\.count) == b.changesByAuthor.map(\.count))
            }
            #expect(mine.save(.compact) == control.save(.compact), "seed \(seed): the same merged document")
            #expect(mine.notebook == control.notebook)
            for _ in 0 ..< 3 { #expect(mine.relation(to: control) == .shared, "seed \(seed): the same fingerprints") }
            try mine.insertText(note, at: 0, "later ")
            #expect(try Document.load(mine.save(.compact)).notebook == mine.notebook)
        }
        #expect(failures == 25)
    }
}
