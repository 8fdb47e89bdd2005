import Foundation
import Testing
@testable import PeerNote

/// Whatever the library saves, it loads: runs of identical edits compress so well that, unpadded,
/// their file would hold more changes per byte than a reader accepts (a guard against small
/// hostile files), so a writer pads such files (block field 11, see peernote(5)).
@Suite("Padding: very compressible documents stay loadable")
struct PaddingTests {
    /// A note typed one identical keystroke per change, all in the same second.
    static func keyRepeat(_ n: Int) throws -> (Document, NoteID) {
        let d = Document(title: "k", author: "me", time: Date(timeIntervalSince1970: 1_000_000))
        d.clock = { Date(timeIntervalSince1970: 1_000_000) }
        let note = d.addNote(title: "held key")
        for i in 0 ..< n { try d.insertText(note, at: i, "a") }
        return (d, note)
    }

    @Test("100,000 identical keystrokes save to a padded file that loads, compact and appended")
    func keyRepeatLoads() throws {
        let (d, note) = try Self.keyRepeat(100_000)
        let bytes = d.save(.compact)
        let limits = WireCodec.Limits()
        // Unpadded, these changes compress to a few hundred bytes; the file must be big enough to hold them.
        #expect(UInt64(d.changeCount) <= limits.maxRows(fileSize: bytes.count))
        #expect(bytes.count >= (d.changeCount - limits.slack) / limits.rowsPerByte)
        let loaded = try Document.load(bytes)
        #expect(loaded.note(note)?.body.count == 100_000)
        #expect(loaded.save(.compact) == bytes, "padding is part of the canonical form: a re-save gives the same bytes")

        // 50,000 more appended to that file: the appended block pads the file again as needed.
        for i in 0 ..< 50_000 { try loaded.insertText(note, at: 100_000 + i, "a") }
        let appended = loaded.save(.incremental)
        #expect(appended.starts(with: bytes))
        let again = try Document.load(appended)
        #expect(again.note(note)?.body.count == 150_000)
        #expect(again.changeCount == loaded.changeCount)
    }

    @Test("An ordinary document carries no padding")
    func noPaddingWhenNotNeeded() throws {
        let (d, _) = try Self.keyRepeat(1_000)
        let payload = try #require(BlockCodec.decode(d.save()).first?.payload)
        let map = try CBORDecoder.decodeItem(payload)
        #expect(map.mapValue(forKey: BlockKey.padding.rawValue) == nil)
    }

    @Test("Padding that is not a byte string is refused with its offset")
    func paddingMustBeBytes() throws {
        var block = WireBlock()
        block.kind = .base
        block.documentID = UUID()
        let replica = ReplicaID(high: 1, low: 2)
        block.genesis = ChangeID(replica: replica, seq: 1)
        block.replicas = [replica]
        block.appendChange(replica: 0, seq: 1, length: 1, deps: [], time: 0, author: "", message: "")
        block.ops = [Op(lv: 0, length: 1, body: .setNotebookTitle("t", preds: []))]
        var payload = WireCodec.encodePayload(block)
        // Append key 11 with an unsigned value and bump the map's entry count (a small map header).
        #expect(payload[0] >= 0xA0 && payload[0] < 0xB7)
        payload[0] += 1
        payload += [0x0B, 0x05]
        do {
            _ = try Document.load(BlockCodec.encode(payload: payload))
            Issue.record("loaded")
        } catch {
            #expect("\(error)".contains("padding (field 11) is not a byte string"), "\(error)")
        }
    }
}
