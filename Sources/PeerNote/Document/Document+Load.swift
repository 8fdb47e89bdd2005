#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Document {
    // MARK: Loading

    /// The notebook a file holds, as `load(bytes).notebook` gives it. A compact save of a
    /// document without conflicts stores its state beside its history, and then this reads
    /// only that (checksummed, not yet checked against the history: `load` and
    /// `pnmerge validate` do that); other files are loaded in full.
    public static func readNotebook(_ bytes: [UInt8]) throws(PeerNoteError) -> Notebook {
        let raws: [RawBlock]
        do throws(FormatError) { raws = try BlockCodec.decode(bytes) } catch {
            throw error.documentError
        }
        guard raws.count == 1 else { return try load(bytes).notebook }
        let read: (documentID: UUID, replicas: [ReplicaID], state: WireState)?
        do throws(FormatError) { read = try WireCodec.decodeState(raws[0]) } catch {
            throw error.documentError
        }
        guard let (id, replicas, state) = read else { return try load(bytes).notebook }
        let notes = state.notes.indices.filter { !state.notes[$0].deleted }.map { k in
            let n = state.notes[k]
            return Note(id: NoteID(replica: replicas[n.replica], counter: n.counter), title: n.title, body: state.body(k), tags: n.tags,
                        priority: n.priority, created: Date(timeIntervalSince1970: TimeInterval(n.created)), isDeleted: false)
        }
        return Notebook(id: id, title: state.title, notes: notes, conflicts: [])
    }

    /// Reads and verifies several documents, each as `load` does, one after another (a large
    /// one on two threads, as `load` reads it). The results are in the order of `files`; each
    /// fails or not on its own.
    ///
    /// One at a time rather than one a thread each: two loads at once each allocate their notes'
    /// arrays and bodies at full pace and contend for the allocator, while the two halves of
    /// one large load do not (the second decodes the state section). Two 20,000-note copies
    /// read at once took longer than one after the other, whether the threads shared one malloc
    /// arena or had one each, and the process peaked higher (Benchmarks/HISTORY.md, 2026-11-27).
    public static func loadAll(_ files: [[UInt8]]) -> [Result<Document, PeerNoteError>] {
        files.map { bytes in Result { () throws(PeerNoteError) in try load(bytes) } }
    }

    /// Reads and verifies a document: checksums, structure, causal integrity (dependencies
    /// present, sequence numbers contiguous) and references (every op names something that exists).
    public static func load(_ bytes: [UInt8]) throws(PeerNoteError) -> Document {
        try load(bytes, concurrentFrom: WireCodec.concurrentEncodingThreshold)
    }

    /// `load(_:)`; a base block of `concurrentFrom` changes and ops or more is replayed on two
    /// threads (see `BlockReplayer.replayBase`; tests set it to compare the two ways).
    static func load(_ bytes: [UInt8], concurrentFrom: Int) throws(PeerNoteError) -> Document {
        var raws: [RawBlock]
        do { raws = try BlockCodec.decode(bytes) } catch {
            throw error.documentError
        }
        var blocks: [WireBlock] = []
        // Inflated on two threads when the base block is replayed on two (`concurrentFrom`).
        let inflatingFrom = concurrentFrom == .max ? Int.max : min(concurrentFrom, WireCodec.concurrentInflateThreshold)
        var totals = WireCodec.Totals()
        // Integration work a file may ask for, proportional to its size (hostile files could ask
        // for quadratic work: thousands of concurrent inserts at one place).
        let budget = VerifiedFile.workBudget(fileSize: bytes.count)
        // A large base block with a state section (a compact save, and what later saves appended
        // to) is read and replayed in one step on two threads (`BlockReplayer.replayBase(_:totals:)`);
        // the blocks after it are read then, and an error its replay met is thrown after theirs,
        // as when every block is read before any is replayed. No placeholder text for a block with
        // a state section: the log leaves that text unwritten, and `fillText` lets it read the
        // text in the notes' arenas (`buildBodies` writes it in, for a version 3 section).
        var replayed: BlockReplayer?
        var replayError: PeerNoteError?
        var prepared: WireCodec.PreparedPayload?
        do throws(FormatError) {
            if let raw = raws.first { prepared = try WireCodec.preparePayload(raw, fileSize: bytes.count, totals: totals) }
        } catch {
            throw error.documentError
        }
        let oneStepFrom = concurrentFrom == .max ? Int.max : min(concurrentFrom, BlockReplayer.oneStepFrom)
        if let prepared, let halves = WireCodec.PayloadHalves(prepared, concurrentFrom: oneStepFrom), prepared.block.kind == .base,
           let genesis = prepared.block.genesis {
            var replayer = BlockReplayer(genesis: genesis)
            replayer.keepsStateBeforeDisorder = true
            replayer.state.workBudget = budget
            replayer.state.bodiesFromStructures = halves.storesStructures
            if let (block, error) = try replayer.replayBase(halves, totals: &totals) {
                blocks = [block]
                replayed = replayer
                replayError = error
            }
        }
        do throws(FormatError) {
            if replayed == nil, let prepared {
                blocks = [try WireCodec.decodePayload(prepared, totals: &totals, concurrentFrom: inflatingFrom, placeholders: false)]
            }
            if raws.count > 1 {
                blocks += try WireCodec.decodePayloads(Array(raws.dropFirst()), fileSize: bytes.count, concurrentFrom: inflatingFrom,
                                                       totals: &totals, placeholders: false)
            }
        } catch {
            throw error.documentError
        }
        // The blocks as read (each a copy of its payload, the first's fields copies of its
        // compressed parts) are let go: what follows reads the decoded blocks, and they would
        // otherwise stay alive through the replay and the state section's checks.
        prepared = nil
        raws = []
        if let replayError { throw replayError }
        // The first block's fields are read where it lies: a copy of it would keep its ops, text
        // and state section for the whole load (the log's ops, which it shares, would then be
        // copied by the next block's replay).
        guard blocks.first?.kind == .base, let docID = blocks[0].documentID, let genesis = blocks[0].genesis else {
            throw .invalidDocument(offset: 0, message: "the first block is not a base block")
        }
        // Moved out of `replayed`: a second reference would make the fill below copy the notes.
        let baseReplayed = replayed != nil
        var replayer: BlockReplayer
        if let base = replayed.take() {
            replayer = base
        } else {
            replayer = BlockReplayer(genesis: genesis)
            replayer.keepsStateBeforeDisorder = true
            replayer.state.workBudget = budget
        }
        var unknownFields = blocks[0].unknownFields
        let firstHasState = blocks[0].state != nil, firstOffset = blocks[0].offset
        var rows = 0, opRows = 0, predecessors = 0
        var crc: UInt32 = 0
        var crcEnd = 0
        var blockStarts: [(offset: Int, rowsBefore: Int)] = []
        for index in blocks.indices {
            var block = blocks[index]
            // A block's text and ops are needed only to replay it (the log keeps its own copy):
            // released once the block is replayed, they no longer add to the memory the load
            // needs while the state section is checked.
            blocks[index].text = []
            blocks[index].ops = []
            opRows += block.ops.count
            predecessors += block.predecessorCount
            if block.offset > 0 {
                try Self.checkPlacement(of: block, in: bytes, crc: &crc, checksummed: &crcEnd, rows: rows)
                blockStarts.append((block.offset, rows))
                // A later block's value for a key replaces an earlier one's (a newer writer updated it).
                for f in block.unknownFields where !unknownFields.contains(f) {
                    let key = WireCodec.unknownFieldKey(f)
                    unknownFields.removeAll { WireCodec.unknownFieldKey($0) == key }
                    unknownFields.append(f)
                }
            }
            let structured = block.state?.storesStructures ?? false
            // A block storing its bodies' structures: the text ops are applied to the log alone,
            // then the bodies built from the structures.
            replayer.state.bodiesFromStructures = structured
            if block.offset == 0 && baseReplayed {
                // Replayed with its decoding above.
            } else if block.offset == 0 && block.changes.count + block.ops.count >= concurrentFrom {
                try replayer.replayBase(block)
            } else {
                try replayer.replay(block)
            }
            replayer.state.bodiesFromStructures = false
            block.text = []
            block.ops = []
            if let state = block.state {
                // A state section shows the state its block's changes give in their canonical
                // order, which a compact save writes them in: a block in another order is refused
                // (it could show one notebook to a reader of the section and another to one of
                // the history). Only a base block has one, and it is read first.
                if let bad = replayer.log.firstOutOfCanonicalOrder() {
                    throw .invalidDocument(offset: block.offset, message: "change at row \(bad): a block with a state section holds its changes in canonical order (by Lamport timestamp, then replica id), and this one comes before the change above it")
                }
                // The section (its inflated bytes and entries) is let go before the blocks after
                // it are replayed, which do not need it; for a version 2 section its entries as
                // soon as its checks are done (the bytes stay as long as bodies read their text
                // in them).
                blocks[index].state = nil
                block.state = nil
                if structured {
                    try replayer.buildBodies(state, dead: block.deadText, block: block)
                } else {
                    let placement = try replayer.checkText(consume state, dead: block.deadText, block: block)
                    try replayer.deferText(placement, block: block)
                }
            }
            rows += block.changes.count
        }
        // The state is the changes applied in the canonical order (`DocState.canonical`): a file
        // whose rows are in another order (appended blocks) is applied again in that order when
        // its rows are not (an honest history gives the same state both ways; a crafted one may
        // not, and then only the canonical order is the same in every copy). Within a budget of
        // its own, as large as the first: from the state before the first appended block out of
        // that order, the later changes are taken in as a merge takes them in, with what the rows
        // before that block left of it (`BlockReplayer.replayCanonically`).
        // What a save appending to these bytes is checked from (`VerifiedFile`): the state the
        // rows give in file order, which is the document's unless it was replayed canonically.
        var verified: VerifiedFile?
        if replayer.log.firstOutOfCanonicalOrder() != nil {
            try replayer.replayCanonically(workBudget: VerifiedFile.workBudget(fileSize: bytes.count)) { row in
                blocks.last { $0.firstRow <= row }?.offset ?? 0
            }
        } else {
            let spent = budget - replayer.state.workBudget
            var state = replayer.state
            state.workBudget = .max
            verified = VerifiedFile(bytes: bytes, genesis: genesis, log: replayer.log, state: state, workSpent: spent, totals: totals,
                                    rows: rows, checksum: crc, checksummed: crcEnd)
        }
        replayer.state.workBudget = .max
        let doc = Document(id: docID, genesis: genesis, log: replayer.log, state: replayer.state, replica: .random(), author: "")
        // A state section is written only without conflicts (`readNotebook` shows none); the
        // registers were checked with the text, which leaves notes deleted while edited.
        if blocks.count == 1, firstHasState, !doc.concurrentValues.isEmpty {
            throw .invalidDocument(offset: firstOffset, message: "the state section does not match the history: the history has conflicts")
        }
        doc.unknownFields = unknownFields
        doc.persisted = Persisted(bytes: bytes, rowOfChange: ChangeIndices(0 ..< rows), opRows: opRows,
                                  predecessors: predecessors, units: doc.log.lvCount, unknownFields: unknownFields,
                                  verified: verified, blockStarts: blockStarts)
        return doc
    }

}

extension Document {
    /// The checks that place an append block in its file: it is an append block, its
    /// `previousCRC` is the CRC-32 of the bytes before it (`crc` is that of
    /// `bytes[..<checksummed]`, carried forward here, so a file is checksummed once: linear in
    /// its size), and its `firstRow` is the number of changes before it (`rows`). Used by `load`
    /// for every block after the first and by `checkAppended`, so both refuse alike.
    static func checkPlacement(of block: WireBlock, in bytes: [UInt8], crc: inout UInt32, checksummed: inout Int,
                               rows: Int) throws(PeerNoteError) {
        guard block.kind == .append else { throw .invalidDocument(offset: block.offset, message: "a second base block") }
        crc = CRC32.checksum(bytes[checksummed ..< block.offset], initial: crc)
        checksummed = block.offset
        guard block.previousCRC == crc else {
            throw .invalidDocument(offset: block.offset, message: "appended block does not belong after the bytes before it (checksum of earlier blocks differs)")
        }
        guard block.firstRow == rows else {
            throw .invalidDocument(offset: block.offset, message: "appended block starts at change \(block.firstRow), the file holds \(rows) before it")
        }
    }
}
