import CThreads
import Dispatch
import Foundation
import Testing
@testable import PeerNote

/// (That a save writes the bytes it wrote before it took a second thread is also `FixtureTests`'
/// check that every committed fixture re-saves identically.)
@Suite("Work done on two threads")
struct ConcurrencyTests {
    /// Runs two halves with `Concurrently.run`, each of which signals, then waits for the other:
    /// true only when they ran at the same time (one after the other, each would wait its full
    /// timeout for the other).
    static func halvesMeet() -> Bool {
        let firstStarted = DispatchSemaphore(value: 0), secondStarted = DispatchSemaphore(value: 0)
        let (a, b) = Concurrently.run({ () -> Bool in
            firstStarted.signal()
            return secondStarted.wait(timeout: .now() + 20) == .success
        }, alongside: { () -> Bool in
            secondStarted.signal()
            return firstStarted.wait(timeout: .now() + 20) == .success
        })
        return a && b
    }

    @Test("Concurrently.run runs its halves at the same time: each waits for the other to start")
    func runsAtOnce() {
        #expect(Self.halvesMeet())
    }

    @Test("Work started while the helper thread is busy, or from it, runs at once on a thread of its own")
    func nestedAndBusy() {
        // The outer second half holds the helper thread and starts a pair from it; the outer
        // first half starts one while the helper is busy. Each inner pair must still run at
        // the same time (each half waits for the other).
        let (outer, inner) = Concurrently.run({ Self.halvesMeet() }, alongside: { Self.halvesMeet() })
        #expect(outer)
        #expect(inner)
        // And the helper is free again for the next job.
        #expect(Concurrently.run({ 1 }, alongside: { 2 }) == (1, 2))
    }

    #if os(Linux)
    @Test("The other thread leaves the signals a fault raises open (a trap there still gets its backtrace), and blocks the rest")
    func helperSignalMask() {
        let (_, mask) = Concurrently.run({ 0 }, alongside: { () -> [Int32: Bool] in
            var current = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &current)
            var blocked: [Int32: Bool] = [:]
            for signal in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGINT, SIGTERM, SIGHUP] {
                blocked[signal] = sigismember(&current, signal) == 1
            }
            return blocked
        })
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT] { #expect(mask[signal] == false, "signal \(signal)") }
        for signal in [SIGINT, SIGTERM, SIGHUP] { #expect(mask[signal] == true, "signal \(signal)") }
    }
    #endif

    @Test("A relayed value reaches the other half while both run; a half that sends nothing ends the other's wait with nil")
    func relay() {
        // The receiver waits for the value, then meets the sender half-way: both ran at once.
        let received = DispatchSemaphore(value: 0)
        let (met, got) = Concurrently.run(relaying: [Int].self, { (relay: Relay<[Int]>) -> Bool in
            relay.send(Array(0 ..< 1000))
            relay.send([7])
            return received.wait(timeout: .now() + 20) == .success
        }, alongside: { (relay: Relay<[Int]>) -> [Int]? in
            let value = relay.receive()
            received.signal()
            return value
        })
        #expect(met)
        #expect(got == Array(0 ..< 1000), "the first value sent, whole")
        // Nothing sent: the receiver's wait ends when the sending half returns.
        let (done, nothing) = Concurrently.run(relaying: Int.self, { (_: Relay<Int>) -> Bool in
            Thread.sleep(forTimeInterval: 0.05)
            return true
        }, alongside: { (relay: Relay<Int>) -> Int? in relay.receive() })
        #expect(done)
        #expect(nothing == nil)
        // A receiver that starts after the value was sent gets it at once.
        let (_, late) = Concurrently.run(relaying: String.self, { (relay: Relay<String>) -> Int in
            relay.send("sent")
            return 0
        }, alongside: { (relay: Relay<String>) -> String? in
            Thread.sleep(forTimeInterval: 0.05)
            return relay.receive()
        })
        #expect(late == "sent")
    }

    @Test("A StopFlag raised on one thread is seen on the other")
    func stopFlag() {
        let flag = StopFlag()
        #expect(!flag.isRaised)
        let (seen, _) = Concurrently.run({ () -> Bool in
            let deadline = ContinuousClock.now + .seconds(20)
            while !flag.isRaised {
                if ContinuousClock.now > deadline { return false }
            }
            return true
        }, alongside: { flag.raise() })
        #expect(seen)
        #expect(flag.isRaised)
    }

    @Test("A Claim is taken by exactly one of the threads that ask, on any number of rounds")
    func claim() {
        for _ in 0 ..< 200 {
            let claim = Claim()
            let (here, there) = Concurrently.run({ (0 ..< 3).map { _ in claim.take() } }, alongside: { (0 ..< 3).map { _ in claim.take() } })
            #expect((here + there).filter { $0 }.count == 1)
        }
        let late = Claim()
        #expect(late.take())
        #expect(!late.take())
    }

    @Test("loadAll gives what load gives, in order, and a damaged input fails alone")
    func loadAll() throws {
        let one = try sampleDocument().save()
        let other = try sampleDocument(replica: ReplicaID(high: 3, low: 4))
        other.addNote(title: "Second", body: "from another replica")
        let two = other.save()
        let damaged = Array(one.dropLast(2))
        let expectedError: PeerNoteError
        do { _ = try Document.load(damaged); Issue.record("a truncated file loaded"); return } catch { expectedError = error }

        let results = Document.loadAll([one, damaged, two, one])
        try #require(results.count == 4)
        for (result, bytes) in [(results[0], one), (results[2], two), (results[3], one)] {
            let loaded = try result.get()
            let alone = try Document.load(bytes)
            #expect(loaded.notebook == alone.notebook)
            #expect(loaded.changeCount == alone.changeCount)
            #expect(loaded.save() == bytes, "the same canonical bytes again")
        }
        #expect(throws: expectedError) { try results[1].get() }
        #expect(Document.loadAll([]).isEmpty)
    }

    @Test("A block's payload is the same encoded on one thread or two (change columns and state section beside the op columns)")
    func payloadOnTwoThreads() throws {
        // A long history (typing, backspacing, two notes, a deletion), and the fixtures' small ones.
        let doc = try sampleDocument()
        let a = doc.addNote(title: "Long", body: "")
        let b = doc.addNote(title: "Other", body: "x")
        for i in 0 ..< 6_000 {
            let note = i % 7 == 0 ? b : a
            try doc.insertText(note, at: 0, "w\(i % 10) ")
            if i % 5 == 0 { try doc.deleteText(note, range: 0 ..< 1) }
        }
        try doc.deleteNote(b)
        var files = [doc.save()]
        for name in ["meeting.peernote", "meeting-appended.peernote", "hi.peernote"] { files.append(try FixtureCatalog.bytes(name)) }
        var sawLarge = false
        for bytes in files {
            let blocks = try WireCodec.decodePayloads(BlockCodec.decode(bytes), fileSize: bytes.count)
            for block in blocks {
                let one = WireCodec.encodePayload(block, concurrentFrom: .max)
                let two = WireCodec.encodePayload(block, concurrentFrom: 0)
                #expect(one == two)
                sawLarge = sawLarge || block.changeCount + block.ops.count + block.text.count >= WireCodec.concurrentEncodingThreshold
            }
        }
        #expect(sawLarge, "one block is large enough for a save to take two threads")
    }

    @Test("A compact save is the same bytes with its state section made on another thread")
    func stateSectionOnAnotherThread() throws {
        let doc = Document(title: "Long", author: "a")
        let note = doc.addNote(title: "n", body: "")
        var rng = SeededRandom(state: 3)
        let words = ["plan the day, ", "milk and eggs ", "日本語 ", "a longer line of text\n"]
        for i in 0 ..< 2_000 {
            let count = doc.notes[0].body.unicodeScalars.count
            try doc.insertText(note, at: Int.random(in: 0 ... count, using: &rng), String(repeating: words[i % words.count], count: 3))
            if i % 4 == 0 && count > 10 {
                let lo = Int.random(in: 0 ..< count - 10, using: &rng)
                try doc.deleteText(note, range: lo ..< lo + 10)
            }
        }
        try Self.expectSameSaveBothWays(doc)
    }

    @Test("A compact save of many notes is the same bytes with its state section made a batch of notes at a time on two threads")
    func stateSectionOfManyNotesInBatches() throws {
        let doc = Document(title: "Many", author: "a")
        var rng = SeededRandom(state: 11)
        let bodies = ["", "plain ascii", "café, naïve: Latin-1", "日本語 and 😀 wide", "line one\nline two\n"]
        var ids: [NoteID] = []
        // Several batches on each thread, the last of each short.
        for i in 0 ..< 3 * Document.stateSectionBatch + 77 {
            ids.append(doc.addNote(title: i % 7 == 0 ? "Tïtle \(i) with a title longer than fifteen bytes" : "T\(i)",
                                   body: bodies[i % bodies.count] + String(repeating: "x", count: Int.random(in: 0 ..< 40, using: &rng)),
                                   tags: i % 3 == 0 ? ["a", "b\(i % 5)"] : i % 3 == 1 ? ["é"] : []))
        }
        for k in stride(from: 4, to: ids.count, by: 13) { try doc.deleteText(ids[k], range: 0 ..< Swift.min(3, doc.note(ids[k])?.body.unicodeScalars.count ?? 0)) }
        for k in stride(from: 0, to: ids.count, by: 9) { try doc.deleteNote(ids[k]) }
        // Ops that list predecessors, which the save counts as it encodes them.
        let deleted = Set(doc.deletedNotes.map(\.id))
        for k in stride(from: 2, to: ids.count, by: 11) where !deleted.contains(ids[k]) {
            try doc.setPriority(ids[k], .high)
            try doc.setNoteTitle(ids[k], "retitled \(k)")
            if k % 3 == 0 { try doc.removeTag(ids[k], "a") }
        }
        for k in stride(from: 5, to: ids.count, by: 17) where !deleted.contains(ids[k]) { try doc.moveNote(ids[k], to: 0) }
        try Self.expectSameSaveBothWays(doc)
        #expect((doc.persisted?.predecessors ?? 0) > 0)
    }

    /// `doc`'s compact save is the same bytes made on one thread and on two, has a state
    /// section, and loads as `doc`, saving again to the same bytes.
    static func expectSameSaveBothWays(_ doc: Document) throws {
        let one = doc.save(.compact, writeStructures: false, concurrentFrom: .max)
        let counted = doc.persisted.map { [$0.opRows, $0.predecessors] }
        let two = doc.save(.compact, writeStructures: false, concurrentFrom: 1)
        #expect(one == two)
        // The rows and predecessors a later appending save counts on, the same both ways.
        #expect(doc.persisted.map { [$0.opRows, $0.predecessors] } == counted)
        let (_, block) = try StateSectionTests.onlyBlock(two)
        #expect(block.state != nil, "the save has a state section")
        let loaded = try Document.load(two)
        #expect(loaded.notebook == doc.notebook)
        #expect(loaded.save(.compact, writeStructures: false, concurrentFrom: 1) == one)
        #expect(loaded.save(.compact, writeStructures: false, concurrentFrom: .max) == one)
    }

    @Test("A notebook of many notes made in a few changes saves its state section on another thread, as it loads")
    func fewChangesManyOps() throws {
        // An import of 20,000 notes is one change of some 100,000 ops: the ops decide, as they do
        // for a load (`Document.load` replays a base block on two threads from the same count).
        #expect(Document.makesStateSectionAlongside(changes: 5, ops: 100_000, concurrentFrom: Document.stateSectionAlongsideFrom))
        #expect(!Document.makesStateSectionAlongside(changes: 5, ops: 400, concurrentFrom: Document.stateSectionAlongsideFrom))
        // A notebook of 2,000 notes (some 8,000 ops) too: its section is most of its save.
        #expect(Document.makesStateSectionAlongside(changes: 5, ops: 8_000, concurrentFrom: Document.stateSectionAlongsideFrom))
        let doc = Document(title: "Imported", author: "a")
        doc.transaction(message: "import") {
            for i in 0 ..< 300 {
                doc.addNote(title: "Note \(i)", body: String(repeating: "Line of text for note \(i). ", count: 4), tags: ["t\(i % 7)"])
            }
        }
        #expect(doc.log.changes.count < 5 && doc.log.ops.count > 600)
        try Self.expectSameSaveBothWays(doc)
    }
}
