#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A note as a reader sees it: a plain value, safe to bind to a UI.
public struct Note: Identifiable, Equatable, Hashable, Sendable, Codable {
    public var id: NoteID
    public var title: String
    public var body: String
    /// Sorted.
    public var tags: [String]
    public var priority: Priority
    public var created: Date
    /// Deleted notes appear only in `Document.deletedNotes`.
    public var isDeleted: Bool

    public init(id: NoteID, title: String, body: String, tags: [String], priority: Priority, created: Date, isDeleted: Bool = false) {
        self.id = id
        self.title = title
        self.body = body
        self.tags = tags
        self.priority = priority
        self.created = created
        self.isDeleted = isDeleted
    }
}

extension Note {
    /// The offset in Unicode scalars, as `Document.insertText(_:at:_:)` and
    /// `deleteText(_:range:)` count, of `utf16` UTF-16 code units into `body` (what `NSRange`,
    /// `UITextView` and `NSTextView` count). Nil when it is past the end or falls between the
    /// two halves of a surrogate pair (an emoji, say).
    public func scalarOffset(utf16 offset: Int) -> Int? {
        guard offset >= 0 else { return nil }
        var units = 0, scalars = 0
        for s in body.unicodeScalars {
            if units == offset { return scalars }
            units += UTF16.width(s)
            scalars += 1
            if units > offset { return nil }
        }
        return units == offset ? scalars : nil
    }

    /// The offset in UTF-16 code units of `scalars` Unicode scalars into `body` (the other way
    /// round: where an edit at that scalar offset is in a text view). Nil when it is past the end.
    public func utf16Offset(scalars offset: Int) -> Int? {
        guard offset >= 0 else { return nil }
        var units = 0, scalars = 0
        for s in body.unicodeScalars {
            if scalars == offset { return units }
            units += UTF16.width(s)
            scalars += 1
        }
        return scalars == offset ? units : nil
    }
}

/// The whole visible state of a document: a plain value. Codable (with `Note`, `Conflict` and
/// the ids), so that an app can keep or pass on a snapshot; see Model+Codable.swift.
public struct Notebook: Equatable, Sendable, Codable {
    public var id: UUID
    public var title: String
    /// The live notes, in document order.
    public var notes: [Note]
    public var conflicts: [Conflict]

    /// A notebook value made by hand (for previews and tests); documents make their own.
    public init(id: UUID, title: String, notes: [Note], conflicts: [Conflict] = []) {
        self.id = id
        self.title = title
        self.notes = notes
        self.conflicts = conflicts
    }
}

/// Who wrote something, and when.
public struct Attribution: Equatable, Hashable, Sendable, Codable {
    public var change: ChangeID
    public var author: String
    public var time: Date
}

/// One of several values written concurrently to a register.
public struct ConflictValue: Equatable, Hashable, Sendable, Codable {
    public var value: String
    public var by: Attribution
}

/// Something copies disagree on, kept visible until a later edit resolves it.
public enum Conflict: Equatable, Hashable, Sendable, Codable {
    /// Concurrent writes to the notebook title; `showing` is the value readers see.
    case notebookTitle(values: [ConflictValue], showing: String)
    /// Concurrent writes to a note's title.
    case noteTitle(note: NoteID, values: [ConflictValue], showing: String)
    /// Concurrent writes to a note's priority.
    case priority(note: NoteID, noteTitle: String, values: [ConflictValue], showing: String)
    /// Concurrent moves of one note; it shows at the winning place only.
    case position(note: NoteID, noteTitle: String, moves: [Attribution])
    /// A note was deleted on one copy while edited on another: it stays deleted,
    /// the edits are kept and come back with `Document.restoreNote`.
    case deletedWhileEdited(note: NoteID, noteTitle: String, deletedBy: [Attribution], editedBy: [Attribution])

    /// Whether the copies disagree: false for concurrent writes that all set one value. A move
    /// conflict cannot tell alone (its places are in the document): `Document.conflicts` leaves out
    /// concurrent moves that show the note at one place.
    public var isDisagreement: Bool {
        switch self {
        case .notebookTitle(let values, _), .noteTitle(_, let values, _), .priority(_, _, let values, _):
            Set(values.map { ExactString($0.value) }).count > 1
        case .position, .deletedWhileEdited: true
        }
    }

    public var note: NoteID? {
        switch self {
        case .notebookTitle: nil
        case .noteTitle(let n, _, _), .priority(let n, _, _, _), .position(let n, _, _), .deletedWhileEdited(let n, _, _, _): n
        }
    }
}

/// One change in a document's history.
public struct HistoryEntry: Equatable, Sendable {
    public var id: ChangeID
    public var author: String
    public var time: Date
    public var message: String
    /// The heads the author saw.
    public var dependencies: [ChangeID]
    /// Number of op units (one per character typed or deleted, one per other edit).
    public var operationCount: Int
    /// A one-line account of what the change did, in note terms.
    public var summary: String
    /// `summary` in its parts (joined by "; " they are `summary`): one per note the change
    /// touched, in the order it touched them, after the notebook's title when it set that.
    public var summaryParts: [SummaryPart] = []
    /// The notes the change touched (created, retitled, typed in, tagged, prioritized, moved,
    /// deleted or restored), in the order it first touched them: the `note` of each part that has one.
    public var notes: [NoteID] { summaryParts.compactMap(\.note) }
}

/// One part of a change's summary: what the change did to the notebook's title or to one note.
public struct SummaryPart: Equatable, Sendable {
    /// What the part tells of.
    public enum Kind: Equatable, Sendable {
        /// The notebook's title was set.
        case notebookTitle
        /// A note was added.
        case added
        /// A note was deleted.
        case deleted
        /// A note was edited otherwise (retitled, text, tags, priority, moved, restored).
        case changed
        /// Ops of a newer format version (counted, not described).
        case newerFormat
    }

    public var kind: Kind
    public var text: String
    /// The note the part tells of (nil for the notebook's title and for a newer version's ops).
    public var note: NoteID?

    public init(kind: Kind, text: String, note: NoteID? = nil) {
        self.kind = kind
        self.text = text
        self.note = note
    }
}

/// How two copies relate.
public enum HistoryRelation: Equatable, Sendable {
    /// Same document, same origin, and every change id they both hold has the same content.
    case shared
    case differentDocuments(UUID, UUID)
    case differentOrigin(document: UUID, ChangeID, ChangeID)
    case conflictingChange(ChangeID)
}

/// What a merge brought in.
public struct MergeSummary: Equatable, Sendable {
    /// Changes added, per author (authors in first-seen order).
    public var changesByAuthor: [(author: String, count: Int)]
    /// What each copy held before the merge (for `Document.textOverlaps(of:)`).
    var sides: MergeSides?
    /// Payload fields a newer version wrote that the other copy had and this one lacked (kept,
    /// and written with the next save; see peernote(5), FORWARD COMPATIBILITY).
    public var fieldsAdded: Int = 0
    public var changeCount: Int { changesByAuthor.reduce(0) { $0 + $1.count } }
    /// Whether the merge brought nothing: no change, and no field a newer version wrote.
    public var isUpToDate: Bool { changeCount == 0 && fieldsAdded == 0 }

    public static func == (a: MergeSummary, b: MergeSummary) -> Bool {
        a.changesByAuthor.map { ExactString($0.author) } == b.changesByAuthor.map { ExactString($0.author) }
            && a.changesByAuthor.map(\.count) == b.changesByAuthor.map(\.count)
    }
}

/// Errors from the library, each with a message a user can act on.
public enum PeerNoteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not a valid .peernote document; `offset` is where the problem is, when known.
    case invalidDocument(offset: Int?, message: String)
    /// A .peernote written by a newer, incompatible format version.
    case unsupportedVersion(UInt64)
    /// The two copies do not share history; nothing was changed.
    case unrelated(HistoryRelation)
    case noSuchNote(String)
    case ambiguousNote(String, candidates: [String])
    case noSuchChange(String)
    /// A change named by a replica prefix that more than one replica's change of that number matches.
    case ambiguousChange(String, candidates: [String])
    case invalidArgument(String)
    /// The note is deleted: edit it only once it is restored (`restoreNote`). An app shows this
    /// when another device's deletion arrived while the note was open.
    case noteDeleted(NoteID)
    /// Both copies carry a payload field a newer version wrote (`key`), with different values:
    /// this version cannot know which to keep, so it does not merge them.
    case fieldConflict(key: UInt64)
    /// Reading the document would need more memory (`needed` bytes, estimated before anything
    /// large is made) than this process can use (`available`): a file whose text compresses a
    /// thousandfold, on a machine or under a limit too small for it. Not damage; nothing was read.
    case needsMoreMemory(needed: UInt64, available: UInt64)

    public var description: String {
        switch self {
        case .invalidDocument(let offset?, let m): "offset \(offset): \(m)"
        case .invalidDocument(nil, let m): m
        case .unsupportedVersion(let v): "format version \(v) is newer than this tool understands (it reads version \(FormatInfo.version)); a newer version of the PeerNote tools reads it"
        case .unrelated(let r):
            switch r {
            case .shared: "the copies share history"
            case .differentDocuments(let a, let b): "different documents: \(a.uuidString.lowercased()) and \(b.uuidString.lowercased()); they share no history"
            case .differentOrigin(let d, let a, let b): "same document id \(d.uuidString.lowercased()) but a different origin (first change \(a.fullDescription) vs \(b.fullDescription)); they share no history"
            case .conflictingChange(let c): "both copies hold change \(c.fullDescription) with different content; refusing to merge"
            }
        case .needsMoreMemory(let need, let can): "reading it needs about \(MemoryBudget.megabytes(need)) of memory, more than the \(MemoryBudget.megabytes(can)) this process can use; nothing was read (read it where more memory is available)"
        case .fieldConflict(let k): "both copies carry field \(k), written by a newer version of PeerNote, with different values; this version cannot tell which to keep, so it does not merge them"
        case .noSuchNote(let n): "no note matches \"\(n.clippedForMessage())\""
        case .ambiguousNote(let n, let c): "\"\(n)\" matches several notes: \(c.joined(separator: ", "))"
        case .noSuchChange(let c): "no change \(c) in this document" + (c.contains("@") ? "" : " (a change is named SEQ@REPLICA, as log shows it: 3@a11ce001)")
        case .ambiguousChange(let c, let m): "\"\(c)\" matches several changes: \(m.joined(separator: ", ")); give more of the replica id"
        case .invalidArgument(let m): m
        case .noteDeleted(let id): "note \(id) is deleted; restore it (restoreNote) before editing it"
        }
    }
}

/// Format constants shared by the encoder and the documentation.
public enum FormatInfo {
    /// The newest format version this library reads and writes (it writes version 1 for
    /// blocks without a state section, so that older readers still read them; version 3 for a
    /// base block with one, which stores each note body's structure: peernote(5)).
    public static let version: UInt64 = Format.version
    /// The version compact saves give a block with a state section: 2, or 3 when the environment
    /// variable `PEERNOTE_WRITE_FORMAT` is `3` (version 3 does not pay yet: docs/FORMAT-V3.md).
    public static var writtenVersion: UInt64 { Document.writesStructures ? 3 : 2 }
    /// What `--version` says of the format: `reads versions 1-3, writes 2`.
    public static var summary: String { "reads versions 1-\(version), writes \(writtenVersion)" }

    /// Whether `bytes` start as a .peernote file does (its first block's magic bytes), so that a
    /// command expecting other input (Markdown, JSON) can say what it was given.
    public static func startsLikeDocument(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: Format.magic)
    }
}

extension String {
    /// The string of `scalars`, built from their UTF-8 in one pass (appending scalars one by one
    /// to a `String.UnicodeScalarView` costs hundreds of instructions each).
    init(scalars: some Collection<Unicode.Scalar>) {
        if let made = scalars.withContiguousStorageIfAvailable({ Self.fromScalars($0) }) {
            self = made
            return
        }
        var utf8: [UInt8] = []
        utf8.reserveCapacity(scalars.count)
        for s in scalars {
            if s.isASCII { utf8.append(UInt8(truncatingIfNeeded: s.value)) } else { UTF8.encode(s) { utf8.append($0) } }
        }
        self.init(decoding: utf8, as: UTF8.self)
    }

    /// The string of the scalars in `buffer`, their UTF-8 written straight into the string's
    /// storage, measured first so that it takes no more room than it needs. ASCII, the common
    /// case, goes eight scalars at a time: measured by one test of their OR-ed words and written
    /// as one 8-byte store.
    private static func fromScalars(_ buffer: UnsafeBufferPointer<Unicode.Scalar>) -> String {
        guard let scalars = UnsafeRawPointer(buffer.baseAddress) else { return "" }
        let count = buffer.count
        /// Whether scalars `i ..< i + 8` are all ASCII (four 8-byte loads, two scalars each).
        @inline(__always) func asciiOctet(_ i: Int) -> Bool {
            let w = scalars.loadUnaligned(fromByteOffset: 4 * i, as: UInt64.self)
                | scalars.loadUnaligned(fromByteOffset: 4 * i + 8, as: UInt64.self)
                | scalars.loadUnaligned(fromByteOffset: 4 * i + 16, as: UInt64.self)
                | scalars.loadUnaligned(fromByteOffset: 4 * i + 24, as: UInt64.self)
            return w & 0xFFFF_FF80_FFFF_FF80 == 0
        }
        // One byte a scalar, and one more past each of 0x7F, 0x7FF and 0xFFFF.
        var length = count
        var i = 0
        while i < count {
            if i + 8 <= count && asciiOctet(i) { i += 8; continue }
            let v = buffer[i].value
            length += (v > 0x7F ? 1 : 0) + (v > 0x7FF ? 1 : 0) + (v > 0xFFFF ? 1 : 0)
            i += 1
        }
        return String(unsafeUninitializedCapacity: length) { out in
            guard let base = out.baseAddress else { return 0 }
            var o = 0
            var i = 0
            while i < count {
                if i + 8 <= count && asciiOctet(i) {
                    // Scalar k's byte goes to bits 8k ..< 8k + 8 (stored little-endian). A word
                    // holds two ASCII scalars, a | b << 32; `w | w >> 24` puts b next to a.
                    var packed: UInt64 = 0
                    #if _endian(little)
                    for k in 0 ..< 4 {
                        let w = scalars.loadUnaligned(fromByteOffset: 4 * i + 8 * k, as: UInt64.self)
                        packed |= ((w | w >> 24) & 0xFFFF) << UInt64(16 * k)
                    }
                    #else
                    for k in 0 ..< 8 { packed |= UInt64(buffer[i + k].value) << UInt64(8 * k) }
                    #endif
                    UnsafeMutableRawPointer(base + o).storeBytes(of: packed.littleEndian, as: UInt64.self)
                    o += 8
                    i += 8
                    continue
                }
                let v = buffer[i].value
                if v < 0x80 {
                    base[o] = UInt8(truncatingIfNeeded: v)
                    o += 1
                } else if v < 0x800 {
                    base[o] = UInt8(truncatingIfNeeded: 0xC0 | v >> 6)
                    base[o + 1] = UInt8(truncatingIfNeeded: 0x80 | v & 0x3F)
                    o += 2
                } else if v < 0x1_0000 {
                    base[o] = UInt8(truncatingIfNeeded: 0xE0 | v >> 12)
                    base[o + 1] = UInt8(truncatingIfNeeded: 0x80 | v >> 6 & 0x3F)
                    base[o + 2] = UInt8(truncatingIfNeeded: 0x80 | v & 0x3F)
                    o += 3
                } else {
                    base[o] = UInt8(truncatingIfNeeded: 0xF0 | v >> 18)
                    base[o + 1] = UInt8(truncatingIfNeeded: 0x80 | v >> 12 & 0x3F)
                    base[o + 2] = UInt8(truncatingIfNeeded: 0x80 | v >> 6 & 0x3F)
                    base[o + 3] = UInt8(truncatingIfNeeded: 0x80 | v & 0x3F)
                    o += 4
                }
                i += 1
            }
            return o
        }
    }

    /// The string's Unicode scalars, decoded from its UTF-8 in one pass (what
    /// `Array(unicodeScalars)` gives, for a fraction of its cost: written straight into the
    /// array's storage, which has room for one scalar a byte).
    var scalarArray: [Unicode.Scalar] {
        var copy = self
        return copy.withUTF8 { bytes in
            // Unicode.Scalar is a trivial type: its uninitialized storage may be assigned to.
            [Unicode.Scalar](unsafeUninitializedCapacity: bytes.count) { out, written in
                written = Self.decodeUTF8(bytes, into: out)
            }
        }
    }

    /// Appends the string's Unicode scalars to `out` (as `scalarArray` decodes them), into the
    /// room `out` already has when it has enough: loading decodes every note's body into one
    /// buffer this way, with no array a note.
    func appendScalars(to out: inout [Unicode.Scalar]) {
        var copy = self
        copy.withUTF8 { Self.appendScalars(utf8: $0, to: &out) }
    }

    /// `appendScalars(to:)` for the UTF-8 of a string: `utf8` must be valid UTF-8 (a state
    /// section's text is checked when read).
    static func appendScalars(utf8: ArraySlice<UInt8>, to out: inout [Unicode.Scalar]) {
        utf8.withUnsafeBufferPointer { appendScalars(utf8: $0, to: &out) }
    }

    static func appendScalars(utf8 bytes: UnsafeBufferPointer<UInt8>, to out: inout [Unicode.Scalar]) {
        let old = out.count
        out.reserveCapacity(old + bytes.count)
        // Grown by the most it can need (a scalar a byte), then cut to what was written.
        out.append(contentsOf: repeatElement(Unicode.Scalar(0), count: bytes.count))
        let n = out.withUnsafeMutableBufferPointer { buffer in
            decodeUTF8(bytes, into: UnsafeMutableBufferPointer(rebasing: buffer[old...]))
        }
        out.removeLast(bytes.count - n)
    }

    /// Decodes valid UTF-8 (a String's) into `out`, which has room for one scalar a byte;
    /// returns how many scalars it wrote.
    private static func decodeUTF8(_ bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<Unicode.Scalar>) -> Int {
        var i = 0, n = 0
        let raw = UnsafeRawPointer(bytes.baseAddress)
        let target = out.baseAddress
        while i < bytes.count {
            // Sixteen ASCII bytes at once, the common case, each widened to its scalar (a fixed
            // loop of plain stores through pointers, which the compiler turns into vector code).
            if i + 16 <= bytes.count, n + 16 <= out.count, let raw, let target,
               (raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) | raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)) & 0x8080_8080_8080_8080 == 0 {
                for j in 0 ..< 16 { target[n + j] = Unicode.Scalar(raw.load(fromByteOffset: i + j, as: UInt8.self)) }
                i += 16
                n += 16
                continue
            }
            let b = bytes[i]
            if b < 0x80 {
                out[n] = Unicode.Scalar(b)
                i += 1
            } else {
                // A String's UTF-8 is valid: a lead byte and its 1 to 3 continuation bytes.
                let k = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
                var v = UInt32(b) & (0x7F >> k)
                for j in 1 ..< k { v = v << 6 | UInt32(bytes[i + j] & 0x3F) }
                out[n] = Unicode.Scalar(v) ?? "\u{FFFD}"
                i += k
            }
            n += 1
        }
        return n
    }

    /// How many Unicode scalars the string has (`unicodeScalars.count`, counted on its UTF-8:
    /// the bytes that are not continuation bytes, eight bytes at a time).
    var scalarCount: Int {
        var copy = self
        return copy.withUTF8 { Self.scalarCount(utf8: $0) }
    }

    /// `scalarCount` of the string whose UTF-8 is `utf8` (valid UTF-8).
    static func scalarCount(utf8: ArraySlice<UInt8>) -> Int {
        utf8.withUnsafeBufferPointer { scalarCount(utf8: $0) }
    }

    private static func scalarCount(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var continuations = 0
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= bytes.count {
                // A continuation byte is 10xxxxxx: its top bit set and the next one clear. Counted
                // only in a word that has one (ASCII text has none, and a bit count is a dozen
                // instructions on a processor without a popcount instruction).
                let w = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let marks = w & ~(w << 1) & 0x8080_8080_8080_8080
                if marks != 0 { continuations += marks.nonzeroBitCount }
                i += 8
            }
        }
        while i < bytes.count {
            if bytes[i] & 0xC0 == 0x80 { continuations += 1 }
            i += 1
        }
        return bytes.count - continuations
    }
}

// The errors' messages, for `localizedDescription` (what Foundation, SwiftUI and AppKit show).
extension PeerNoteError: LocalizedError {
    public var errorDescription: String? { description }
}

// Equality of the value types above compares their strings by their exact Unicode scalars
// (`hasSameScalars`, peernote(5) CONVENTIONS), as the document does: a note retitled from
// "café" (U+00E9) to "cafe" + U+0301 is a different note value, though `String ==`, which the
// synthesized conformances would use, calls the two titles equal. Hashes agree with equality.

extension Note {
    public static func == (a: Note, b: Note) -> Bool {
        a.id == b.id && a.title.hasSameScalars(as: b.title) && a.body.hasSameScalars(as: b.body)
            && a.tags.map(ExactString.init) == b.tags.map(ExactString.init)
            && a.priority == b.priority && a.created == b.created && a.isDeleted == b.isDeleted
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(ExactString(title))
        hasher.combine(ExactString(body))
        hasher.combine(tags.map(ExactString.init))
        hasher.combine(priority)
        hasher.combine(created)
        hasher.combine(isDeleted)
    }
}

extension Notebook {
    public static func == (a: Notebook, b: Notebook) -> Bool {
        a.id == b.id && a.title.hasSameScalars(as: b.title) && a.notes == b.notes && a.conflicts == b.conflicts
    }
}

extension Attribution {
    public static func == (a: Attribution, b: Attribution) -> Bool {
        a.change == b.change && a.author.hasSameScalars(as: b.author) && a.time == b.time
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(change)
        hasher.combine(ExactString(author))
        hasher.combine(time)
    }
}

extension ConflictValue {
    public static func == (a: ConflictValue, b: ConflictValue) -> Bool {
        a.value.hasSameScalars(as: b.value) && a.by == b.by
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactString(value))
        hasher.combine(by)
    }
}

extension Conflict {
    public static func == (a: Conflict, b: Conflict) -> Bool {
        switch (a, b) {
        case let (.notebookTitle(v1, s1), .notebookTitle(v2, s2)):
            v1 == v2 && s1.hasSameScalars(as: s2)
        case let (.noteTitle(n1, v1, s1), .noteTitle(n2, v2, s2)):
            n1 == n2 && v1 == v2 && s1.hasSameScalars(as: s2)
        case let (.priority(n1, t1, v1, s1), .priority(n2, t2, v2, s2)):
            n1 == n2 && t1.hasSameScalars(as: t2) && v1 == v2 && s1.hasSameScalars(as: s2)
        case let (.position(n1, t1, m1), .position(n2, t2, m2)):
            n1 == n2 && t1.hasSameScalars(as: t2) && m1 == m2
        case let (.deletedWhileEdited(n1, t1, d1, e1), .deletedWhileEdited(n2, t2, d2, e2)):
            n1 == n2 && t1.hasSameScalars(as: t2) && d1 == d2 && e1 == e2
        default:
            false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .notebookTitle(let v, let s):
            hasher.combine(0); hasher.combine(v); hasher.combine(ExactString(s))
        case .noteTitle(let n, let v, let s):
            hasher.combine(1); hasher.combine(n); hasher.combine(v); hasher.combine(ExactString(s))
        case .priority(let n, let t, let v, let s):
            hasher.combine(2); hasher.combine(n); hasher.combine(ExactString(t)); hasher.combine(v); hasher.combine(ExactString(s))
        case .position(let n, let t, let m):
            hasher.combine(3); hasher.combine(n); hasher.combine(ExactString(t)); hasher.combine(m)
        case .deletedWhileEdited(let n, let t, let d, let e):
            hasher.combine(4); hasher.combine(n); hasher.combine(ExactString(t)); hasher.combine(d); hasher.combine(e)
        }
    }
}

extension HistoryEntry {
    public static func == (a: HistoryEntry, b: HistoryEntry) -> Bool {
        a.id == b.id && a.author.hasSameScalars(as: b.author) && a.time == b.time && a.message.hasSameScalars(as: b.message)
            && a.dependencies == b.dependencies && a.operationCount == b.operationCount && a.summary.hasSameScalars(as: b.summary)
    }
}
