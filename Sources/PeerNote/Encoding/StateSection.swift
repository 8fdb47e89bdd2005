#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One note as a block's state section records it: unverified. `replica` indexes the
/// block's replica table. Its body is not here but in the state's `bodies` (`WireState.body`):
/// a section's bodies are stretches of its bytes, and a slice of them a note would take 32
/// bytes of every entry a load holds.
///
/// Its stored properties are ordered so that the small ones share a word (72 bytes: a load
/// holds one entry a note at its peak).
struct WireNoteState: Sendable, Equatable {
    var replica: Int
    var title: String
    /// The first of the visible tags, sorted, and the others: most notes have one tag or none,
    /// which then need no array a note. Invariant: `otherTags` is empty when `firstTag` is nil.
    private(set) var firstTag: String?
    var priority: Priority
    var deleted: Bool
    var counter: UInt32
    private(set) var otherTags: [String]
    /// Seconds since 1970.
    var created: Int64
    /// The body's structure (format version 3): its elements in list order, tombstones
    /// included, as canonical runs (`StructureCodec`); nil in a version 2 section.
    var structure: [WireStructureRun]?

    /// Visible tags, sorted.
    var tags: [String] {
        get {
            guard let firstTag else { return [] }
            return otherTags.isEmpty ? [firstTag] : [firstTag] + otherTags
        }
        set {
            firstTag = newValue.first
            otherTags = Array(newValue.dropFirst())
        }
    }

    /// How many tags `tags` holds.
    var tagCount: Int { firstTag == nil ? 0 : 1 + otherTags.count }

    init(replica: Int, counter: UInt32, title: String, tags: [String], priority: Priority, created: Int64, deleted: Bool,
         structure: [WireStructureRun]? = nil) {
        self.init(replica: replica, counter: counter, title: title, firstTag: tags.first, otherTags: Array(tags.dropFirst()),
                  priority: priority, created: created, deleted: deleted, structure: structure)
    }

    /// The entry as the section's reader builds it, its tags held as they are (`otherTags` empty
    /// when `firstTag` is nil).
    fileprivate init(replica: Int, counter: UInt32, title: String, firstTag: String?, otherTags: [String], priority: Priority,
                     created: Int64, deleted: Bool, structure: [WireStructureRun]?) {
        self.replica = replica
        self.counter = counter
        self.title = title
        self.firstTag = firstTag
        self.otherTags = otherTags
        self.priority = priority
        self.created = created
        self.deleted = deleted
        self.structure = structure
    }
}

/// A block's state section (block field 12): what readers see after the block's changes,
/// stored so that reading a notebook needs no replay of its history. Unverified: loading a
/// document replays the history and refuses the file when the two disagree.
///
/// Notes are listed live ones first, in document order, then deleted ones, in document order.
/// A block with a state section stores in its text column only the text its ops inserted that
/// is now deleted (note by note in this order, each in document order); the visible text is the
/// notes' bodies here. Writers only write one for a document without conflicts.
///
/// Invariant: `bodies` holds a body for each of `notes` (`bodies.ranges.count == notes.count`).
struct WireState: Sendable, Equatable {
    var title: String
    /// The entries; their count is fixed once made (`append(_:body:)` adds one with its body).
    var notes: [WireNoteState] {
        didSet { precondition(notes.count == bodies.ranges.count, "a state's notes and bodies go together (append(_:body:))") }
    }
    /// The notes' bodies as UTF-8 (valid), note `k`'s at `bodies.ranges[k]`: for a state read
    /// from a section, the section's bytes, which a load reads every body from through one
    /// pointer (a slice taken a note at a time, on both of a load's threads, counts references
    /// to one buffer from both at once).
    private(set) var bodies: BodyText
    /// The bodies' scalars, as the section's reader counted them while checking their UTF-8;
    /// nil for a state made otherwise, or once a body is added.
    private var countedScalars: Int?

    /// Bytes that bodies are stretches of, and note `k`'s stretch, `ranges[k]`.
    struct BodyText: Sendable {
        let bytes: [UInt8]
        let ranges: [Range<Int>]

        /// The UTF-8 of `bodies`, one after the other.
        init<S: Sequence<String>>(_ bodies: S) {
            var bytes: [UInt8] = [], ranges: [Range<Int>] = []
            for b in bodies {
                let start = bytes.count
                bytes.append(contentsOf: b.utf8)
                ranges.append(start ..< bytes.count)
            }
            self.init(bytes: bytes, ranges: ranges)
        }

        init(bytes: [UInt8], ranges: [Range<Int>]) {
            self.bytes = bytes
            self.ranges = ranges
        }
    }

    /// A state whose note `k` has body `bodies[k]`.
    init(title: String, notes: [WireNoteState], bodies: [String]) {
        precondition(notes.count == bodies.count, "a body a note")
        self.init(title: title, notes: notes, bodies: BodyText(bodies))
    }

    /// A state whose note `k` has the body at `bodies.ranges[k]` (valid UTF-8).
    init(title: String, notes: [WireNoteState], bodies: BodyText) {
        precondition(notes.count == bodies.ranges.count, "a body a note")
        self.title = title
        self.bodies = bodies
        self.notes = notes
    }

    /// A state read from a section, whose bodies hold `scalars` scalars in all.
    fileprivate init(title: String, notes: [WireNoteState], scalars: Int, bodies: BodyText) {
        self.init(title: title, notes: notes, bodies: bodies)
        countedScalars = scalars
    }

    /// Note `k`'s body as UTF-8.
    func bodyUTF8(_ k: Int) -> ArraySlice<UInt8> { bodies.bytes[bodies.ranges[k]] }

    /// Note `k`'s body.
    func body(_ k: Int) -> String { String(decoding: bodyUTF8(k), as: UTF8.self) }

    /// Adds `note`, whose body is `body`. (Copies the bodies: for tests and small states.)
    mutating func append(_ note: WireNoteState, body: String) {
        var bytes = bodies.bytes, ranges = bodies.ranges
        let start = bytes.count
        bytes.append(contentsOf: body.utf8)
        ranges.append(start ..< bytes.count)
        bodies = BodyText(bytes: bytes, ranges: ranges)
        countedScalars = nil
        notes.append(note)
    }

    /// Note `k`'s body replaced by `body`. (Copies the bodies: for tests and small states, as
    /// the two below.)
    mutating func setBody(_ k: Int, _ body: String) {
        var all = notes.indices.map(self.body)
        all[k] = body
        bodies = BodyText(all)
        countedScalars = nil
    }

    /// Notes `i` and `j`, with their bodies, in each other's place.
    mutating func swapNotes(_ i: Int, _ j: Int) {
        var all = notes.indices.map(body)
        all.swapAt(i, j)
        bodies = BodyText(all)
        notes.swapAt(i, j)
    }

    /// The last note and its body left out.
    mutating func removeLastNote() {
        bodies = BodyText(notes.indices.dropLast().map(body))
        countedScalars = nil
        notes.removeLast()
    }

    /// The same title, and the same notes with the same bodies (wherever their bytes lie).
    static func == (a: WireState, b: WireState) -> Bool {
        a.title == b.title && a.notes == b.notes && a.notes.indices.allSatisfy { a.bodyUTF8($0).elementsEqual(b.bodyUTF8($0)) }
    }

    /// Whether the notes' entries hold their bodies' structures (format version 3). A section
    /// stores them for every note or for none.
    var storesStructures: Bool { notes.first?.structure != nil }

    /// Visible characters in all bodies: how many inserted characters the text column lacks.
    var liveScalarCount: Int {
        if let countedScalars { return countedScalars }
        var total = 0
        for k in notes.indices { total += String.scalarCount(utf8: bodyUTF8(k)) }
        return total
    }
}

/// Encodes and decodes the state section: a deflated CBOR array
/// `[title, [[replica, counter, title, [tags], priority, created, deleted, body], ...]]`, each
/// note's entry with a ninth item in format version 3: its body's structure, a byte string
/// (`StructureCodec`).
enum StateCodec {
    /// The section's uncompressed CBOR.
    static func encode(_ state: WireState) -> [UInt8] {
        var e = head(title: state.title, noteCount: state.notes.count)
        encodeNotes(state, into: &e)
        return e.bytes
    }

    /// The section's CBOR before its first note's entry, for a section of `noteCount` notes.
    /// `encode` is this followed by every note's entry (`encodeNotes`); the entries may be
    /// encoded in parts, each part's bytes following the one before.
    static func head(title: String, noteCount: Int) -> CBOREncoder {
        var e = CBOREncoder()
        e.arrayHeader(2)
        e.text(title)
        e.arrayHeader(noteCount)
        return e
    }

    /// The entries of `state`'s notes, as `encode` writes them, appended to `e` (its title is
    /// not written: `head` writes the section's).
    static func encodeNotes(_ state: WireState, into e: inout CBOREncoder) {
        var structure: [UInt8] = []
        for (k, n) in state.notes.enumerated() {
            e.arrayHeader(n.structure == nil ? 8 : 9)
            e.unsigned(UInt64(n.replica))
            e.unsigned(UInt64(n.counter))
            e.text(n.title)
            e.arrayHeader(n.tagCount)
            if let first = n.firstTag { e.text(first) }
            for t in n.otherTags { e.text(t) }
            e.unsigned(UInt64(n.priority.rank))
            e.int(n.created)
            e.bool(n.deleted)
            e.text(utf8: state.bodyUTF8(k))
            if let runs = n.structure {
                structure.removeAll(keepingCapacity: true)
                StructureCodec.encode(runs, into: &structure)
                e.bytes(structure)
            }
        }
    }

    /// The bytes `encodeNotes` writes for `state`'s notes, exactly: a buffer of this size holds
    /// their entries without growing (a section's entries are most of a large save's memory).
    static func encodedSize(_ state: WireState) -> Int {
        var total = 0
        var structure: [UInt8] = []
        for (k, n) in state.notes.enumerated() {
            total += encodedSize(of: n, bodyUTF8Count: state.bodies.ranges[k].count)
            if let runs = n.structure {
                structure.removeAll(keepingCapacity: true)
                StructureCodec.encode(runs, into: &structure)
                total += CBOREncoder.textSize(utf8Count: structure.count)
            }
        }
        return total
    }

    /// The bytes `encodeNotes` writes for `n` with a body of `bodyUTF8Count` bytes of UTF-8,
    /// its structure left out.
    static func encodedSize(of n: WireNoteState, bodyUTF8Count: Int) -> Int {
        var tagsSize = 0
        if let first = n.firstTag { tagsSize += CBOREncoder.textSize(utf8Count: first.utf8.count) }
        for t in n.otherTags { tagsSize += CBOREncoder.textSize(utf8Count: t.utf8.count) }
        return entrySize(replica: n.replica, counter: n.counter, titleUTF8Count: n.title.utf8.count, tagCount: n.tagCount, tagsSize: tagsSize,
                         priority: n.priority, created: n.created, bodyUTF8Count: bodyUTF8Count)
    }

    /// The bytes `encodeNotes` writes for an entry of these fields, its structure left out:
    /// `tagsSize` is the sum of `CBOREncoder.textSize` over the tags; the other sizes are in
    /// bytes of UTF-8. (For a writer that has the fields and no entry.)
    static func entrySize(replica: Int, counter: UInt32, titleUTF8Count: Int, tagCount: Int, tagsSize: Int,
                          priority: Priority, created: Int64, bodyUTF8Count: Int) -> Int {
        var total = 1 // the entry's array head: 8 or 9 items
        total += CBOREncoder.headSize(UInt64(replica)) + CBOREncoder.headSize(UInt64(counter))
        total += CBOREncoder.textSize(utf8Count: titleUTF8Count)
        total += CBOREncoder.headSize(UInt64(tagCount)) + tagsSize
        total += CBOREncoder.headSize(UInt64(priority.rank)) + CBOREncoder.intSize(created) + 1
        return total + CBOREncoder.textSize(utf8Count: bodyUTF8Count)
    }

    /// Why a state section is unreadable; `offset` is inside the inflated section when set.
    struct ReadError: Error { var message: String }

    /// Reads the uncompressed section (`replicas` entries in the block's table), head by head
    /// (a notebook of many notes has a dozen items a note). With `structures` (a version 3
    /// block), each entry has nine items, its structure holding at most `maxElements` elements
    /// with the others' (the block's op units); else eight.
    /// Without `readingStructures`, the structures are only checked to be byte strings, and
    /// given as empty (what reading the notebook alone needs).
    static func decode(_ bytes: [UInt8], replicas: Int, structures: Bool = false, maxElements: Int = 0,
                       readingStructures: Bool = true) throws(ReadError) -> WireState {
        var reader = CBORReader(bytes)
        func failed(_ error: CBORDecodeError) -> ReadError {
            ReadError(message: "state section: \(error.message) (at byte \(error.offset) of the inflated section)")
        }
        // Each item read as the kind the layout expects (nil for a head of another kind).
        func unsigned() throws(ReadError) -> UInt64? {
            do throws(CBORDecodeError) { return try reader.nextUnsigned() } catch { throw failed(error) }
        }
        func arrayCount() throws(ReadError) -> Int? {
            do throws(CBORDecodeError) { return try reader.nextArrayCount() } catch { throw failed(error) }
        }
        func string() throws(ReadError) -> String? {
            do throws(CBORDecodeError) { return try reader.nextString() } catch { throw failed(error) }
        }
        func next() throws(ReadError) -> CBORToken {
            do throws(CBORDecodeError) { return try reader.next().token } catch { throw failed(error) }
        }
        guard try arrayCount() == 2, let title = try string(), let count = try arrayCount() else {
            throw ReadError(message: "state section is not [title, notes]")
        }
        var notes: [WireNoteState] = []
        notes.reserveCapacity(count)   // at most one a byte: the reader checked the count against them
        var bodyRanges: [Range<Int>] = []
        bodyRanges.reserveCapacity(count)
        let fields = structures ? 9 : 8
        var elementsLeft = maxElements
        var scalars = 0
        for k in 0 ..< count {
            guard try arrayCount() == fields else { throw ReadError(message: "state section: note \(k) is not an array of \(fields) fields") }
            guard let r = try unsigned(), r < UInt64(replicas) else { throw ReadError(message: "state section: note \(k) names a replica outside the block's table") }
            guard let c = try unsigned(), c < UInt64(UInt32.max) else { throw ReadError(message: "state section: note \(k) has an invalid counter") }
            guard let t = try string() else { throw ReadError(message: "state section: note \(k) has no title text") }
            guard let tagCount = try arrayCount() else { throw ReadError(message: "state section: note \(k) has no tag list") }
            var tags: [String] = []
            var firstTag: String?
            for i in 0 ..< tagCount {
                guard let s = try string() else { throw ReadError(message: "state section: note \(k) has a tag that is not text") }
                // The first tag apart, so that a note with one tag gets no array.
                if i == 0 { firstTag = s } else { tags.append(s) }
            }
            guard let rank = try unsigned(), let p = Priority.allCases.first(where: { UInt64($0.rank) == rank }) else {
                throw ReadError(message: "state section: note \(k) has an unknown priority")
            }
            let createdValue: Int64?
            do throws(CBORDecodeError) { createdValue = try reader.nextInt() } catch { throw failed(error) }
            guard let created = createdValue, created.magnitude <= WireCodec.maxTime.magnitude else { throw ReadError(message: "state section: note \(k) has an invalid creation time") }
            let deletedValue: Bool?
            do throws(CBORDecodeError) { deletedValue = try reader.nextBool() } catch { throw failed(error) }
            guard let deleted = deletedValue else { throw ReadError(message: "state section: note \(k) has no deleted flag") }
            // The body's UTF-8 as it stands in the section (no string made of it).
            let bodyText: ArraySlice<UInt8>?
            do throws(CBORDecodeError) { bodyText = try reader.nextText(countingScalarsInto: &scalars) } catch { throw failed(error) }
            guard let body = bodyText else { throw ReadError(message: "state section: note \(k) has no body text") }
            bodyRanges.append(body.startIndex ..< body.endIndex)
            var structure: [WireStructureRun]?
            if structures {
                guard let encoded = try next().bytesValue else { throw ReadError(message: "state section: note \(k) has no structure (a byte string)") }
                if !readingStructures {
                    structure = []
                } else {
                    do throws(FormatError) {
                        let runs = try StructureCodec.decode(encoded, replicaCount: replicas, maxElements: elementsLeft, base: encoded.startIndex)
                        elementsLeft -= runs.reduce(0) { $0 + $1.length }
                        structure = runs
                    } catch {
                        throw ReadError(message: "state section: note \(k)'s \(error.message)" + (error.offset.map { " (at byte \($0) of the inflated section)" } ?? ""))
                    }
                }
            }
            // The fields moved into the entry (not copied, then released here).
            notes.append(WireNoteState(replica: Int(r), counter: UInt32(c), title: consume t, firstTag: consume firstTag, otherTags: consume tags,
                                       priority: p, created: created, deleted: deleted, structure: consume structure))
        }
        guard reader.offset == bytes.count else { throw ReadError(message: "state section: extra bytes after its array") }
        return WireState(title: title, notes: notes, scalars: scalars, bodies: WireState.BodyText(bytes: bytes, ranges: bodyRanges))
    }
}
