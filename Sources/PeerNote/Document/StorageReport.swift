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
    public static func storageReport(_ bytes: [UInt8]) throws(PeerNoteError) -> StorageReport {
        _ = try load(bytes)   // the report is only given for valid files
        let raws: [RawBlock]
        do { raws = try BlockCodec.decode(bytes) } catch { throw .invalidDocument(offset: error.offset, message: error.message) }
        var history = 0, text = 0
        for raw in raws {
            guard let block = try? WireCodec.decodePayload(raw, fileSize: bytes.count) else { continue }
            var t: [UInt8] = []
            if let state = block.state {
                // Text stored in document order: the visible text (in the state section) and the deleted text.
                for n in state.notes { t += Array(n.body.utf8) }
                for s in block.deadText { UTF8.encode(s) { t.append($0) } }
            } else {
                for s in block.text { UTF8.encode(s) { t.append($0) } }
            }
            text += t.isEmpty ? 0 : Deflate.compress(t).count
            var stripped = block
            stripped.text = []
            stripped.state = nil
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
            history += historyColumnsSize(stripped)
        }
        let metadata = max(0, bytes.count - history - text)
        return StorageReport(fileSize: bytes.count, formatVersion: raws.map(\.version).max() ?? Format.version, blockCount: raws.count,
                             historyBytes: history, textBytes: text, metadataBytes: metadata)
    }

    private static func historyColumnsSize(_ block: WireBlock) -> Int {
        // The compressed columns field of the re-encoded payload, without text, titles and strings.
        let payload = WireCodec.encodePayload(block)
        guard let item = try? CBORDecoder.decodeItem(payload), let cols = item.mapValue(forKey: BlockKey.columns.rawValue)?.bytesValue else { return 0 }
        return cols.count
    }
}
