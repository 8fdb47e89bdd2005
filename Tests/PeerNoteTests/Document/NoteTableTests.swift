import Testing
@testable import PeerNote

/// `NoteTable`, the chunked store of a state's notes, against a plain array of notes: the same
/// notes after random appends and writes, copies that stay apart when either is written, and
/// a write that copies only the chunk it touches.
@Suite("NoteTable: notes in chunks copied on write")
struct NoteTableTests {
    /// A note whose title and body name `tag` (a body integrated as a load or an edit does).
    static func note(_ counter: UInt32, _ tag: String) -> NoteState {
        var n = NoteState(id: LocalID(agent: 0, counter: counter), created: Int64(counter), lamport: UInt64(counter))
        n.title.write(id: LocalID(agent: 0, counter: counter + 1), lamport: UInt64(counter) + 1, replicas: [ReplicaID(high: 0, low: 1)],
                      value: tag, preds: [])
        setBody(&n, tag)
        return n
    }

    static func setBody(_ n: inout NoteState, _ text: String) {
        var body = ListCRDT<Unicode.Scalar>()
        var budget = Int.max
        try? body.integrate(id: LocalID(agent: 1, counter: n.id.counter), originLeft: .none, originRight: .none,
                            elements: Array(text.unicodeScalars), budget: &budget, replicaLess: { $0 < $1 })
        n.body = body
    }

    /// What a test compares of a note: its id, title and body text.
    static func view(_ n: NoteState) -> String {
        "\(n.id.counter)|\(n.title.value ?? "")|\(String(String.UnicodeScalarView(n.body.visibleElements)))"
    }

    @Test("Random appends and writes give what an array of notes gives, copies included", arguments: 0 ..< 3)
    func matchesArray(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        var table = NoteTable(), reference: [NoteState] = []
        var copies: [(NoteTable, [String])] = []
        for step in 0 ..< 2_000 {
            if reference.isEmpty || rng.next() % 3 == 0 {
                let n = Self.note(UInt32(reference.count), "n\(reference.count)")
                table.append(n)
                reference.append(n)
            } else {
                let slot = Int(rng.next() % UInt64(reference.count))
                let text = "s\(step)"
                Self.setBody(&table[slot], text)
                Self.setBody(&reference[slot], text)
            }
            // Now and then a copy is kept; later writes to `table` must not reach it.
            if rng.next() % 50 == 0 { copies.append((table, reference.map(Self.view))) }
        }
        #expect(table.count == reference.count)
        #expect(table.map(Self.view) == reference.map(Self.view))
        #expect(table.withNotePlaces { places in (0 ..< places.count).map { Self.view(places[$0].pointee) } } == reference.map(Self.view))
        for (copy, seen) in copies {
            #expect(copy.map(Self.view) == seen)
        }
    }

    @Test("A write to a copy copies the chunk it touches, and no other; the original keeps its note")
    func writeCopiesOneChunk() {
        var table = NoteTable()
        let count = 3 * NoteTable.chunkSize + 5
        for i in 0 ..< count { table.append(Self.note(UInt32(i), "n\(i)")) }
        var copy = table
        let slot = NoteTable.chunkSize + 7
        Self.setBody(&copy[slot], "changed")
        #expect(Self.view(copy[slot]).hasSuffix("|changed"))
        #expect(Self.view(table[slot]).hasSuffix("|n\(slot)"))
        // The other chunks are still shared: the same notes at the same places.
        table.withNotePlaces { original in
            copy.withNotePlaces { copied in
                for i in stride(from: 0, to: count, by: NoteTable.chunkSize / 2) {
                    let sameChunk = i >> NoteTable.chunkShift == slot >> NoteTable.chunkShift
                    #expect((original[i] == copied[i]) == !sameChunk, "slot \(i)")
                }
            }
        }
        // A copy's appends do not reach the original either (its last chunk is not full).
        copy.append(Self.note(UInt32(count), "added"))
        #expect(table.count == count && copy.count == count + 1)
        #expect(Self.view(copy[count]).hasSuffix("|added"))
    }

    @Test("withUniqueNotes writes through places into this table's own chunks only")
    func uniqueNotes() {
        var table = NoteTable()
        for i in 0 ..< NoteTable.chunkSize + 3 { table.append(Self.note(UInt32(i), "n\(i)")) }
        let original = table
        table.withUniqueNotes { places in
            for slot in 0 ..< places.count { Self.setBody(&places[slot].pointee, "w\(slot)") }
        }
        #expect(table.map(Self.view) == (0 ..< table.count).map { "\($0)|n\($0)|w\($0)" })
        #expect(original.map(Self.view) == (0 ..< original.count).map { "\($0)|n\($0)|n\($0)" })
    }
}
