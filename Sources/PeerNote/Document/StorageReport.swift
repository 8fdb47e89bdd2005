/// Where the bytes of a saved document go.
public struct StorageReport: Equatable, Sendable {
    public var fileSize: Int
    /// The newest format version among the file's blocks.
    public var formatVersion: UInt64
    /// Blocks in the file: 1 for a compact file, more after incremental saves.
    public var blockCount: Int
    /// Compressed bytes of the causal history (change metadata, op structure and ids).
    public var historyBytes: Int
    /// Compressed bytes of inserted text (including text deleted since; with a state section,
    /// the notes' visible text there and the deleted text in the columns).
    public var textBytes: Int
    /// Everything else: envelopes, checksums, replica and string tables, titles and tags.
    public var metadataBytes: Int
}

extension Document {
    /// Breaks a file's size down by part. Parts are compressed separately to
    /// measure them, so history + text + metadata is close to, not exactly, the file size.
    /// The bytes are loaded (verified) first: a report is only given for a valid file. The
    /// document is let go before the parts are measured.
    public static func storageReport(_ bytes: [UInt8]) throws(PeerNoteError) -> StorageReport {
        _ = try load(bytes)
        guard let report = storageReport(verified: bytes) else {
            throw .invalidDocument(offset: 0, message: "the file's blocks cannot be read again")
        }
        return report
    }

    /// `storageReport(_:)` of the bytes this document was loaded from or last saved as, without
    /// loading them again (they were verified when read, or are this document's own save); nil
    /// for a document that has neither. After a merge that keeps MINE's file, MINE's bytes.
    public var savedStorageReport: StorageReport? {
        persisted.flatMap { Self.storageReport(verified: $0.bytes) }
    }

    /// `storageReport(_:)` of bytes a load has verified, or verifies before the report is used,
    /// without loading them: the measuring does not add to a whole notebook's memory (its
    /// decoding is a load's first stage, with the same limits and memory budget). Nil when the
    /// blocks cannot be read (bytes a load refuses).
    /// - Complexity: O(bytes); each block decoded, and its parts compressed apart.
    package static func storageReport(verified bytes: [UInt8]) -> StorageReport? {
        guard let raws = try? BlockCodec.decode(bytes) else { return nil }
        var history = 0, text = 0
        for raw in raws {
            // Without placeholders: a block with a state section holds its text there, and a
            // placeholder a character would be four bytes of every character of the notebook.
            var totals = WireCodec.Totals()
            guard let block = try? WireCodec.decodePayload(raw, fileSize: bytes.count, totals: &totals, placeholders: false) else { return nil }
            // The text and the history are compressed apart, on two threads for a large block.
            let large = block.changeCount + block.ops.count + block.textCount + block.deadText.count >= WireCodec.concurrentEncodingThreshold
            let (t, h) = large ? Concurrently.run({ Self.textSize(block) }, alongside: { Self.historySize(block) })
                               : (Self.textSize(block), Self.historySize(block))
            text += t
            history += h
        }
        let metadata = max(0, bytes.count - history - text)
        return StorageReport(fileSize: bytes.count, formatVersion: raws.map(\.version).max() ?? Format.version, blockCount: raws.count,
                             historyBytes: history, textBytes: text, metadataBytes: metadata)
    }

    /// How many blocks `bytes` hold (1 for a compact file), from their envelopes alone: each
    /// block's magic, structure and CRC-32 are checked, its contents are not.
    public static func blockCount(_ bytes: [UInt8]) throws(PeerNoteError) -> Int {
        do { return try BlockCodec.decode(bytes).count } catch { throw .invalidDocument(offset: error.offset, message: error.message) }
    }

    /// The compressed size of a block's inserted text.
    private static func textSize(_ block: WireBlock) -> Int {
        var t: [UInt8] = []
        if let state = block.state {
            // Text stored in document order: the visible text (in the state section) and the deleted text.
            t.reserveCapacity(state.notes.indices.reduce(0) { $0 + state.bodyUTF8($1).count } + block.deadText.count)
            for k in state.notes.indices { t += state.bodyUTF8(k) }
            for s in block.deadText { UTF8.encode(s) { t.append($0) } }
        } else {
            for s in block.text { UTF8.encode(s) { t.append($0) } }
        }
        return t.isEmpty ? 0 : Deflate.compress(t).count
    }

    /// The compressed size of a block's history: its columns without text, titles, tags and
    /// strings, and the bodies' structures when its state section stores them.
    private static func historySize(_ block: WireBlock) -> Int {
        var stripped = block
        stripped.text = []
        stripped.placeholderCount = nil
        // A state section storing the structures stays (its inserts leave origins out of the
        // columns), without text: only the columns are measured, and the structures apart.
        var structureBytes = 0
        if let state = block.state, state.storesStructures {
            var bytes: [UInt8] = []
            for n in state.notes { StructureCodec.encode(n.structure ?? [], into: &bytes) }
            structureBytes = Deflate.compress(bytes[...]).count
        } else {
            stripped.state = nil
        }
        stripped.deadText = []
        stripped.ops = block.ops.map { op in
            var o = op
            switch op.body {
            case .insertText(let n, let l, let r, _): o.body = .insertText(note: n, originLeft: l, originRight: r, contentStart: 0); o.length = 0
            case .setNoteTitle(let n, _, let p): o.body = .setNoteTitle(note: n, "", preds: p)
            case .setNotebookTitle(_, let p): o.body = .setNotebookTitle("", preds: p)
            case .addTag(let n, _): o.body = .addTag(note: n, "")
            case .removeTag(let n, _, let r): o.body = .removeTag(note: n, "", removes: r)
            default: break
            }
            return o
        }
        stripped.changes.setAuthorsAndMessages(to: 0)
        return historyColumnsSize(stripped) + structureBytes
    }

    private static func historyColumnsSize(_ block: WireBlock) -> Int {
        // The compressed columns field of the re-encoded payload, without text, titles and strings.
        let payload = WireCodec.encodePayload(block)
        guard let item = try? CBORDecoder.decodeItem(payload), let cols = item.mapValue(forKey: BlockKey.columns.rawValue)?.bytesValue else { return 0 }
        return cols.count
    }
}
