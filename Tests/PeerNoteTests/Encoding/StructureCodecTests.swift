import Testing
@_spi(Diagnostics) @testable import PeerNote

/// The encoding of a list's structure in format version 3 (peernote(5), "State section"):
/// it round-trips, has one canonical form, and refuses what does not add up without trapping.
@Suite("List structure encoding")
struct StructureCodecTests {
    static func encoded(_ runs: [WireStructureRun]) -> [UInt8] {
        var out: [UInt8] = []
        StructureCodec.encode(runs, into: &out)
        return out
    }

    /// Random canonical runs over `replicas` replicas: each replica's counters climb as typing
    /// does, with now and then a jump back to text typed earlier.
    static func randomRuns(_ rng: inout SeededRandom, replicas: Int, count: Int) -> [WireStructureRun] {
        var next = [Int](repeating: 0, count: replicas)
        var runs: [WireStructureRun] = []
        for _ in 0 ..< count {
            let r = Int.random(in: 0 ..< replicas, using: &rng)
            let back = Bool.random(using: &rng) && next[r] > 0
            let counter = back ? Int.random(in: 0 ..< next[r], using: &rng) : next[r] + Int.random(in: 0 ... 3, using: &rng)
            let length = [1, 1, 2, 5, 40, 1_000].randomElement(using: &rng) ?? 1
            runs.append(WireStructureRun(replica: r, counter: UInt32(counter), length: length, deleted: Bool.random(using: &rng)))
            next[r] = max(next[r], counter + length)
        }
        return StructureCodec.joined(runs)
    }

    @Test("Runs round-trip, and joining gives the canonical form", arguments: [1, 2, 3, 4])
    func roundTrip(seed: UInt64) throws {
        var rng = SeededRandom(state: seed)
        for _ in 0 ..< 50 {
            let replicas = Int.random(in: 1 ... 5, using: &rng)
            let runs = Self.randomRuns(&rng, replicas: replicas, count: Int.random(in: 0 ... 60, using: &rng))
            let total = runs.reduce(0) { $0 + $1.length }
            let bytes = Self.encoded(runs)
            #expect(try StructureCodec.decode(bytes[...], replicaCount: replicas, maxElements: total) == runs)
            // One element fewer than the runs hold is refused.
            if total > 0 {
                #expect(throws: FormatError.self) { try StructureCodec.decode(bytes[...], replicaCount: replicas, maxElements: total - 1) }
            }
            // A run cut in two where nothing differs joins back into one.
            if let k = runs.indices.first(where: { runs[$0].length > 1 }) {
                var cut = runs
                let run = runs[k]
                cut[k].length = 1
                cut.insert(WireStructureRun(replica: run.replica, counter: run.counter + 1, length: run.length - 1, deleted: run.deleted), at: k + 1)
                #expect(StructureCodec.joined(cut) == runs)
                #expect(throws: FormatError.self) { try StructureCodec.decode(Self.encoded(cut)[...], replicaCount: replicas, maxElements: total) }
            }
        }
    }

    @Test("A document's bodies round-trip: the runs its lists hold, joined, with the log's replica table")
    func documentBodies() throws {
        var rng = SeededRandom(state: 9)
        let origin = Document(title: "Shared", author: "a")
        let copies = (0 ..< 3).map { origin.fork(author: "r\($0)") }
        let id = origin.addNote(title: "n", body: "start")
        for copy in copies { try copy.merge(origin) }
        for round in 0 ..< 30 {
            let copy = copies[round % copies.count]
            let body = try #require(copy.note(id)).body.unicodeScalars.count
            if Bool.random(using: &rng) || body == 0 {
                try copy.insertText(id, at: Int.random(in: 0 ... body, using: &rng), "word \(round) ")
            } else {
                let lo = Int.random(in: 0 ..< body, using: &rng)
                try copy.deleteText(id, range: lo ..< min(body, lo + 3))
            }
            if round % 4 == 3 { try copy.merge(copies[(round + 1) % copies.count]) }
        }
        for copy in copies.dropFirst() { try copies[0].merge(copy) }
        let doc = copies[0]
        let replicas = doc.log.replicas.count
        var checked = 0
        for (runs, elements) in doc.bodyStructures().lists {
            let wire = StructureCodec.joined(runs.map { WireStructureRun(replica: Int($0.id.agent), counter: $0.id.counter, length: $0.length, deleted: $0.deleted) })
            #expect(wire.reduce(0) { $0 + $1.length } == elements.count)
            #expect(try StructureCodec.decode(Self.encoded(wire)[...], replicaCount: replicas, maxElements: elements.count) == wire)
            checked += elements.count
        }
        #expect(checked > 100)
    }

    @Test("Damaged bytes are refused or decode to what encodes to them again (one encoding per list); never a trap")
    func damagedBytes() throws {
        var rng = SeededRandom(state: 77)
        let runs = Self.randomRuns(&rng, replicas: 3, count: 40)
        let total = runs.reduce(0) { $0 + $1.length }
        let bytes = Self.encoded(runs)
        for end in 0 ..< bytes.count {
            #expect(throws: FormatError.self, "cut at \(end)") { try StructureCodec.decode(bytes[..<end], replicaCount: 3, maxElements: total) }
        }
        #expect(throws: FormatError.self) { try StructureCodec.decode((bytes + [0])[...], replicaCount: 3, maxElements: total) }
        var accepted = 0
        for at in bytes.indices {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF, bytes[at] ^ 0x04] {
                var damaged = bytes
                damaged[at] = value
                guard let decoded = try? StructureCodec.decode(damaged[...], replicaCount: 3, maxElements: .max) else { continue }
                #expect(Self.encoded(decoded) == damaged, "byte \(at) set to \(value)")
                accepted += 1
            }
        }
        #expect(accepted > 0, "some damage still reads as a list (the reader's checks against the history catch it)")
    }

    @Test("What does not add up is refused with the offset of the run at fault")
    func refusals() throws {
        func refusal(_ bytes: [UInt8], replicas: Int = 2, max: Int = 1_000) -> String? {
            do { _ = try StructureCodec.decode(bytes[...], replicaCount: replicas, maxElements: max); return nil } catch { return error.description }
        }
        // One run: replica 0, counter 0, 3 visible elements.
        #expect(refusal([1, 0, 0, 6]) == nil)
        #expect(refusal([1, 2, 0, 6]) == "offset 1: list structure: replica 2 of a table of 2")
        #expect(refusal([1, 0, 0, 0]) == "offset 1: list structure: an empty run")
        #expect(refusal([1, 0, 0x7F, 6]) == "offset 1: list structure: a counter outside 32 bits")
        #expect(refusal([1, 0, 0, 6], max: 2) == "offset 1: list structure: more than 2 elements")
        #expect(refusal([2, 0, 0, 6, 0, 0, 6]) == "offset 4: list structure: a run that continues the one before it (not canonical)")
        #expect(refusal([2, 0, 0, 6, 0, 0, 7]) == nil, "a deleted run after a visible one")
        #expect(refusal([9, 0, 0, 6]) == "offset 0: list structure: 9 runs claimed in 4 bytes")
        #expect(refusal([1, 0, 0, 6, 0]) == "offset 4: list structure: 1 bytes after the last run")
        // Counter 2^32 - 1 (a signed delta of five bytes) holds one element, not two.
        #expect(refusal([1, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 2]) == nil)
        #expect(refusal([1, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 4]) == "offset 1: list structure: a run past counter 2^32")
        #expect(refusal([1, 0, 0x80, 0x00, 2])?.contains("non-minimal") == true)
    }
}
