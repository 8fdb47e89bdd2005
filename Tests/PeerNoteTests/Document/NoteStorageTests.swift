import Testing
@testable import PeerNote

/// The stores a note's state keeps (`TagAdds`, `NoteSlotIndex`, and `MVRegister`) against the
/// plain structures they replaced or the rule they keep, on random operations; the reading of a
/// state section's bodies into one reused buffer (`String.appendScalars`); and the refusal of a
/// section that lists a note twice, which the check by slots keeps as it was.
@Suite("Note storage against plain references")
struct NoteStorageTests {
    /// A few tags, two of them canonically equivalent but spelled differently (two tags).
    static let tagNames = ["work", "home", "caf\u{E9}", "cafe\u{301}", "z"]

    @Test("A note's priority, deleted and position registers, boxed until written, read as plain registers; a copy's box is its own", arguments: 0 ..< 3)
    func rareRegisters(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        let replicas = [ReplicaID(high: 1, low: 1), ReplicaID(high: 2, low: 2)]
        var moved = 0
        for _ in 0 ..< 200 {
            // A note created by op 0@1 at Lamport timestamp 1 (agent 1 or 0: either side of a tie).
            let noteID = LocalID(agent: UInt32(rng.next() % 2), counter: 0)
            var note = NoteState(id: noteID, created: 0, lamport: 1)
            var priority = MVRegister<Priority>(), deleted = MVRegister<Bool>(), position = MVRegister<LocalID>()
            position.write(id: noteID, lamport: 1, replicas: replicas, value: noteID, preds: [])
            #expect(note.priority.value == nil && !note.isDeleted)
            #expect(note.position.value == noteID && note.position.ids == [noteID] && !note.position.isConflicted)
            var copies: [(NoteState, MVRegister<Priority>, MVRegister<Bool>, MVRegister<LocalID>)] = []
            for lamport in 1 ... UInt64(rng.next() % 10 + 1) {
                let id = LocalID(agent: UInt32(rng.next() % 2), counter: UInt32(lamport))
                switch rng.next() % 3 {
                case 0:
                    let value = [Priority.low, .normal, .high][Int(rng.next() % 3)]
                    let preds = rng.next() % 3 == 0 ? [] : priority.ids
                    note.writePriority(value, id: id, lamport: lamport, replicas: replicas, preds: preds)
                    priority.write(id: id, lamport: lamport, replicas: replicas, value: value, preds: preds)
                case 1:
                    let value = rng.next() % 3 != 0
                    let preds = rng.next() % 3 == 0 ? [] : deleted.ids
                    note.writeDeleted(value, id: id, lamport: lamport, replicas: replicas, preds: preds)
                    deleted.write(id: id, lamport: lamport, replicas: replicas, value: value, preds: preds)
                default:
                    // A move, concurrent with the creation's value (no preds, same timestamp: a
                    // tie the replicas break) or after what the register shows.
                    let preds = rng.next() % 3 == 0 ? [] : position.ids
                    note.writePosition(id: id, lamport: lamport, replicas: replicas, preds: preds)
                    position.write(id: id, lamport: lamport, replicas: replicas, value: id, preds: preds)
                    moved += 1
                }
                if rng.next() % 3 == 0 { copies.append((note, priority, deleted, position)) }
            }
            for (n, p, d, m) in copies + [(note, priority, deleted, position)] {
                #expect(n.priority.value == p.value && n.priority.ids == p.ids && n.priority.isConflicted == p.isConflicted)
                #expect(n.deleted.ids == d.ids && n.isDeleted == d.entries.contains { $0.value })
                #expect(n.position.value == m.value && n.position.ids == m.ids && n.position.isConflicted == m.isConflicted)
                #expect(n.position.sortedEntries(replicas: replicas).map(\.lamport) == m.sortedEntries(replicas: replicas).map(\.lamport))
            }
        }
        #expect(moved > 100)
        #expect(MemoryLayout<NoteState>.stride == 248, "a note's state: 248 bytes, one a note in the note table")
    }

    @Test("TagAdds keeps, shows and forgets what a dictionary of sets does", arguments: 0 ..< 4)
    func tagAdds(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        var compared = 0, multiple = 0
        for round in 0 ..< 300 {
            var tags = TagAdds()
            var reference: [ExactString: Set<LocalID>] = [:]
            for _ in 0 ..< Int(rng.next() % 12) {
                let tag = Self.tagNames[Int(rng.next() % UInt64(round % 3 == 0 ? 1 : Self.tagNames.count))]
                let id = LocalID(agent: UInt32(rng.next() % 2), counter: UInt32(rng.next() % 4))
                if rng.next() % 3 == 0 {
                    // A remove naming some of the adds seen (possibly none, possibly another tag's).
                    let removes = (reference[ExactString(tag)].map(Array.init) ?? []).filter { _ in rng.next() % 2 == 0 } + [id]
                    tags.remove(tag, removes: removes)
                    if var ids = reference.removeValue(forKey: ExactString(tag)) {
                        for r in removes { ids.remove(r) }
                        reference[ExactString(tag)] = ids
                    }
                } else {
                    tags.insert(tag, id: id)
                    reference[ExactString(tag), default: []].insert(id)
                }
                let visible = reference.compactMap { $0.value.isEmpty ? nil : $0.key }.sorted().map(\.string)
                #expect(tags.visible.map { Array($0.unicodeScalars) } == visible.map { Array($0.unicodeScalars) }, "seed \(seed) round \(round)")
                #expect(tags.visibleEqual(visible))
                #expect(!tags.visibleEqual(visible + ["other"]))
                if !visible.isEmpty { #expect(!tags.visibleEqual(Array(visible.dropFirst()))) }
                for name in Self.tagNames {
                    #expect(Set(tags.adds(of: name)) == reference[ExactString(name)] ?? [], "seed \(seed) round \(round) tag \(name)")
                }
                if reference.values.reduce(0, { $0 + $1.count }) > 1 { multiple += 1 }
                compared += 1
            }
        }
        // Both the one-add form and the table were exercised.
        #expect(compared > 1_000 && multiple > 300, "\(compared) states compared, \(multiple) with several adds")
    }

    /// The register as it was kept before: a plain array, winner first (highest Lamport
    /// timestamp, then replica), the others in any order.
    struct ReferenceRegister {
        var entries: [(id: LocalID, lamport: UInt64, replica: ReplicaID, value: Int)] = []

        mutating func write(id: LocalID, lamport: UInt64, replica: ReplicaID, value: Int, preds: [LocalID]) -> [Int] {
            var removed: [Int] = []
            entries.removeAll { e in
                guard preds.contains(e.id) else { return false }
                removed.append(e.value)
                return true
            }
            entries.append((id, lamport, replica, value))
            return removed
        }

        var winner: Int? { entries.max { ($0.lamport, $0.replica) < ($1.lamport, $1.replica) }?.value }
        var sorted: [LocalID] { entries.sorted { ($0.lamport, $0.replica) > ($1.lamport, $1.replica) }.map(\.id) }
    }

    @Test("A register keeps the values and the winner a plain list of entries keeps, with one value and with many", arguments: 0 ..< 4)
    func registerEntries(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        // The replica table an entry's agent indexes, not in the replicas' order: agent 0's
        // replica id is above agent 1's.
        let replicas = [ReplicaID(high: 0, low: 2), ReplicaID(high: 0, low: 1), ReplicaID(high: 7, low: 0)]
        var writes = 0, many = 0, emptied = 0, ties = 0
        for round in 0 ..< 200 {
            var register = MVRegister<Int>()
            var reference = ReferenceRegister()
            var counter: UInt32 = 0
            var taken: Set<[UInt64]> = []
            // Copies taken along the way, with what they held: writes to the register must not
            // reach them (its values beside the winner are shared with its copies until written).
            var copies: [(register: MVRegister<Int>, held: [LocalID])] = []
            // Some rounds grow past the register's index threshold (16 live values).
            let steps = Int(rng.next() % (round % 4 == 0 ? 60 : 12))
            for _ in 0 ..< steps {
                counter += 1
                // Unique (timestamp, replica) pairs, in any order, often the same timestamp as
                // another replica's: the replica ids break the tie.
                var agent = Int(rng.next() % 3), lamport = rng.next() % 24
                while taken.contains([lamport, UInt64(agent)]) { agent = Int(rng.next() % 3); lamport = rng.next() % 24 }
                taken.insert([lamport, UInt64(agent)])
                if reference.entries.contains(where: { $0.lamport == lamport }) { ties += 1 }
                let id = LocalID(agent: UInt32(agent), counter: counter)
                let replica = replicas[agent]
                let live = reference.entries.map(\.id)
                // Sees all, some or none of the live values (a concurrent write sees none): mostly
                // none in a quarter of the rounds, which then hold many values.
                let preds: [LocalID]
                switch round % 4 {
                case 0: preds = rng.next() % 10 == 0 ? live : []
                case 1: preds = live
                default: preds = live.filter { _ in rng.next() % 4 != 0 }
                }
                let value = Int(rng.next() % 1000)
                var removed: [Int] = []
                register.write(id: id, lamport: lamport, replicas: replicas, value: value, preds: preds) { removed.append($0) }
                let expected = reference.write(id: id, lamport: lamport, replica: replica, value: value, preds: preds)
                #expect(removed.sorted() == expected.sorted(), "seed \(seed) round \(round)")
                #expect(register.value == reference.winner, "seed \(seed) round \(round)")
                #expect(register.winner?.value == reference.winner)
                #expect(register.sortedEntries(replicas: replicas).map(\.id) == reference.sorted)
                #expect(Set(register.ids) == Set(reference.entries.map(\.id)))
                #expect(register.entries.count == reference.entries.count)
                #expect(register.entries.first?.id == register.winner?.id, "the winner comes first")
                #expect(register.isConflicted == (reference.entries.count > 1))
                writes += 1
                if reference.entries.count > 16 { many += 1 }
                if reference.entries.count == 1 && !preds.isEmpty { emptied += 1 }
                if rng.next() % 3 == 0 { copies.append((register, reference.sorted)) }
            }
            for (copy, held) in copies {
                #expect(copy.sortedEntries(replicas: replicas).map(\.id) == held, "seed \(seed) round \(round): a copy changed with the register")
                #expect(copy.isConflicted == (held.count > 1))
            }
        }
        #expect(writes > 1_000 && many > 20 && emptied > 50 && ties > 100,
                "\(writes) writes, \(many) with many values, \(emptied) overwriting all, \(ties) tied with a live value's timestamp")
    }

    @Test("A register's other values are copied only when a copy shares them: written in place otherwise")
    func registerBoxCopiedOnlyWhenShared() {
        let replicas = [ReplicaID(high: 0, low: 1), ReplicaID(high: 0, low: 2)]
        var register = MVRegister<Int>()
        register.write(id: LocalID(agent: 0, counter: 1), lamport: 1, replicas: replicas, value: 1, preds: [])
        #expect(register.othersBox == nil, "one value needs no box")
        register.write(id: LocalID(agent: 1, counter: 1), lamport: 1, replicas: replicas, value: 2, preds: [])
        let box = register.othersBox
        #expect(box != nil)
        // Many concurrent values, past the index threshold: the same box all along.
        for k in 2 ... 40 {
            register.write(id: LocalID(agent: UInt32(k % 2), counter: UInt32(k)), lamport: UInt64(k), replicas: replicas, value: k, preds: [])
            #expect(register.othersBox == box, "write \(k) copied a box nothing else holds")
        }
        // A copy shares it; the next write to the original copies it, and the copy keeps the old one.
        let copy = register
        #expect(copy.othersBox == box)
        register.write(id: LocalID(agent: 0, counter: 41), lamport: 41, replicas: replicas, value: 41, preds: [])
        #expect(register.othersBox != box && copy.othersBox == box)
        #expect(copy.entries.count == 41 && register.entries.count == 42)
    }

    @Test("NoteSlotIndex finds what a dictionary finds, ids added in ascending order and in any order", arguments: 0 ..< 4)
    func noteSlotIndex(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        for round in 0 ..< 50 {
            var index = NoteSlotIndex()
            var reference: [LocalID: Int] = [:]
            var next = [UInt32](repeating: 0, count: 4)
            for slot in 0 ..< Int(rng.next() % 200) {
                let agent = Int(rng.next() % 4)
                let id: LocalID
                if round % 2 == 0 {
                    next[agent] += 1 + UInt32(rng.next() % 3)
                    id = LocalID(agent: UInt32(agent), counter: next[agent])
                } else {
                    id = LocalID(agent: UInt32(agent), counter: UInt32(rng.next() % 500))
                }
                guard reference[id] == nil else { continue }
                index.insert(id, slot: slot)
                reference[id] = slot
            }
            for agent in 0 ..< 6 {
                for counter in 0 ..< 520 {
                    let id = LocalID(agent: UInt32(agent), counter: UInt32(counter))
                    #expect(index[id] == reference[id], "seed \(seed) round \(round) \(id)")
                }
            }
            #expect(index[.none] == nil)
        }
    }

    @Test("Bodies appended to one buffer decode as each string's own scalars")
    func appendScalars() {
        var rng = SeededRandom(state: 3)
        let pieces = ["", "a", "plain ASCII text\n", "é", "ü\u{308}", "日本語", "€", "😀", "\u{7F}", "\u{80}", "\u{10FFFF}", "\r\n"]
        var buffer: [Unicode.Scalar] = ["x"]
        var expected: [Unicode.Scalar] = ["x"]
        for round in 0 ..< 300 {
            let s = (0 ..< Int.random(in: 0 ... 24, using: &rng)).map { _ in pieces[Int.random(in: 0 ..< pieces.count, using: &rng)] }.joined()
            s.appendScalars(to: &buffer)
            expected += Array(s.unicodeScalars)
            #expect(buffer == expected, "round \(round): \(s.debugDescription)")
            if round % 10 == 0 {
                buffer.removeAll(keepingCapacity: true)
                expected.removeAll()
            }
        }
    }

    @Test("A state section listing one note twice, as many notes as the history has, is refused as listing other notes")
    func noteListedTwice() throws {
        let d = try sampleDocument()
        let (_, block) = try StateSectionTests.onlyBlock(d.save())
        var state = try #require(block.state)
        try #require(state.notes.count == 3)
        // The second entry names the first note (its body stays, so the text still adds up).
        state.notes[1].replica = state.notes[0].replica
        state.notes[1].counter = state.notes[0].counter
        var b = block
        b.state = state
        #expect {
            _ = try Document.load(StateSectionTests.file(b))
        } throws: { error in
            guard let e = error as? PeerNoteError, case .invalidDocument(_, let m) = e else { return false }
            return m.contains("it lists 3 notes, the history has 3")
        }
    }
}
