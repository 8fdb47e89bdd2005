#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One note as a block's state section records it: unverified. `replica` indexes the
/// block's replica table; `body` is the note body's visible text.
struct WireNoteState: Sendable, Equatable {
    var replica: Int
    var counter: UInt32
    var title: String
    /// Visible tags, sorted.
    var tags: [String]
    var priority: Priority
    /// Seconds since 1970.
    var created: Int64
    var deleted: Bool
    var body: String
}

/// A block's state section (block field 12): what readers see after the block's changes,
/// stored so that reading a notebook needs no replay of its history. Unverified: loading a
/// document replays the history and refuses the file when the two disagree.
///
/// Notes are listed live ones first, in document order, then deleted ones, in document order.
/// A block with a state section stores in its text column only the text its ops inserted that
/// is now deleted (note by note in this order, each in document order); the visible text is the
/// notes' bodies here. Writers only write one for a document without conflicts.
struct WireState: Sendable, Equatable {
    var title: String
    var notes: [WireNoteState]

    /// Visible characters in all bodies: how many inserted characters the text column lacks.
    var liveScalarCount: Int { notes.reduce(0) { $0 + $1.body.scalarCount } }
}

/// Encodes and decodes the state section: a deflated CBOR array
/// `[title, [[replica, counter, title, [tags], priority, created, deleted, body], ...]]`.
enum StateCodec {
    /// The section's uncompressed CBOR.
    static func encode(_ state: WireState) -> [UInt8] {
        var e = CBOREncoder()
        e.arrayHeader(2)
        e.text(state.title)
        e.arrayHeader(state.notes.count)
        for n in state.notes {
            e.arrayHeader(8)
            e.unsigned(UInt64(n.replica))
            e.unsigned(UInt64(n.counter))
            e.text(n.title)
            e.arrayHeader(n.tags.count)
            for t in n.tags { e.text(t) }
            e.unsigned(UInt64(n.priority.rank))
            e.int(n.created)
            e.bool(n.deleted)
            e.text(n.body)
        }
        return e.bytes
    }

    /// Why a state section is unreadable; `offset` is inside the inflated section when set.
    struct ReadError: Error { var message: String }

    /// Reads the uncompressed section (`replicas` entries in the block's table).
    static func decode(_ bytes: [UInt8], replicas: Int) throws(ReadError) -> WireState {
        let item: CBORItem
        do throws(CBORDecodeError) {
            item = try CBORDecoder.decodeItem(bytes, at: 0, limits: CBORLimits(maxDepth: 4, maxItems: bytes.count + 16))
        } catch {
            throw ReadError(message: "state section: \(error.message) (at byte \(error.offset) of the inflated section)")
        }
        guard item.end == bytes.count else { throw ReadError(message: "state section: extra bytes after its array") }
        guard let top = item.array, top.count == 2, let title = top[0].textValue, let list = top[1].array else {
            throw ReadError(message: "state section is not [title, notes]")
        }
        var notes: [WireNoteState] = []
        notes.reserveCapacity(list.count)
        for (k, entry) in list.enumerated() {
            guard let f = entry.array, f.count == 8 else { throw ReadError(message: "state section: note \(k) is not an array of 8 fields") }
            guard let r = f[0].uint, r < UInt64(replicas) else { throw ReadError(message: "state section: note \(k) names a replica outside the block's table") }
            guard let c = f[1].uint, c < UInt64(UInt32.max) else { throw ReadError(message: "state section: note \(k) has an invalid counter") }
            guard let t = f[2].textValue else { throw ReadError(message: "state section: note \(k) has no title text") }
            guard let tagItems = f[3].array else { throw ReadError(message: "state section: note \(k) has no tag list") }
            var tags: [String] = []
            for tag in tagItems {
                guard let s = tag.textValue else { throw ReadError(message: "state section: note \(k) has a tag that is not text") }
                tags.append(s)
            }
            guard let rank = f[4].uint, let p = Priority.allCases.first(where: { UInt64($0.rank) == rank }) else {
                throw ReadError(message: "state section: note \(k) has an unknown priority")
            }
            guard let created = f[5].int, created.magnitude <= WireCodec.maxTime.magnitude else { throw ReadError(message: "state section: note \(k) has an invalid creation time") }
            guard let deleted = f[6].boolValue else { throw ReadError(message: "state section: note \(k) has no deleted flag") }
            guard let body = f[7].textValue else { throw ReadError(message: "state section: note \(k) has no body text") }
            notes.append(WireNoteState(replica: Int(r), counter: UInt32(c), title: t, tags: tags, priority: p,
                                       created: created, deleted: deleted, body: body))
        }
        return WireState(title: title, notes: notes)
    }
}
