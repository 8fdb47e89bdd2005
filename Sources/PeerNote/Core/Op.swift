/// A note's priority.
public enum Priority: String, Sendable, Codable, CaseIterable, Comparable {
    case low, normal, high

    var rank: Int { switch self { case .low: 0; case .normal: 1; case .high: 2 } }
    public static func < (a: Priority, b: Priority) -> Bool { a.rank < b.rank }
}

/// The kinds of operation, with the numbers they carry on the wire.
/// Numbers never change meaning; new kinds get new numbers, and a reader keeps
/// kinds it does not know (see `OpBody.unknown`).
enum OpKind: UInt64, Sendable {
    case setNotebookTitle = 1
    case createNote = 2
    case setNoteTitle = 3
    case insertText = 4
    case deleteText = 5
    case addTag = 6
    case removeTag = 7
    case setPriority = 8
    case deleteNote = 9
    case restoreNote = 10
    case moveNote = 11
}

/// What one operation does. `note` is the `LocalID` of the note's `createNote` op.
///
/// Register writes (`setNotebookTitle`, `setNoteTitle`, `setPriority`,
/// `deleteNote`, `restoreNote`, `moveNote`) list in `preds` the values they
/// overwrite, i.e. the register's values the author saw; values written
/// concurrently survive side by side as a conflict.
enum OpBody: Sendable, Equatable {
    case setNotebookTitle(String, preds: [LocalID])
    /// Creates a note and inserts its first place in the order of notes (the
    /// place's id is the op's id). `created` is seconds since 1970.
    case createNote(originLeft: LocalID, originRight: LocalID, created: Int64)
    case setNoteTitle(note: LocalID, String, preds: [LocalID])
    /// Inserts `length` scalars, stored in the op log's text arena from `contentStart`.
    case insertText(note: LocalID, originLeft: LocalID, originRight: LocalID, contentStart: Int)
    /// Deletes `length` elements from `target` (counting down when `reversed`).
    case deleteText(note: LocalID, target: LocalID, reversed: Bool)
    case addTag(note: LocalID, String)
    /// Removes the tag adds in `removes` (the adds its author saw).
    case removeTag(note: LocalID, String, removes: [LocalID])
    case setPriority(note: LocalID, Priority, preds: [LocalID])
    case deleteNote(note: LocalID, preds: [LocalID])
    case restoreNote(note: LocalID, preds: [LocalID])
    /// Inserts a new place for the note (the op's id) after `originLeft` and makes it the note's position.
    case moveNote(note: LocalID, originLeft: LocalID, originRight: LocalID, preds: [LocalID])
    /// An op kind this version does not know: kept verbatim (its CBOR payload) and saved again unchanged.
    case unknown(kind: UInt64, payload: [UInt8])

    /// Whether two ops say the same thing, their titles and tags compared by their exact Unicode
    /// scalars (`hasSameScalars`): the synthesized `==` would compare them by canonical
    /// equivalence, and two changes that differ only in how a title is spelled are different.
    static func == (a: OpBody, b: OpBody) -> Bool {
        switch (a, b) {
        case let (.setNotebookTitle(x, p), .setNotebookTitle(y, q)): x.hasSameScalars(as: y) && p == q
        case let (.createNote(l1, r1, c1), .createNote(l2, r2, c2)): l1 == l2 && r1 == r2 && c1 == c2
        case let (.setNoteTitle(n1, x, p), .setNoteTitle(n2, y, q)): n1 == n2 && x.hasSameScalars(as: y) && p == q
        case let (.insertText(n1, l1, r1, s1), .insertText(n2, l2, r2, s2)): n1 == n2 && l1 == l2 && r1 == r2 && s1 == s2
        case let (.deleteText(n1, t1, r1), .deleteText(n2, t2, r2)): n1 == n2 && t1 == t2 && r1 == r2
        case let (.addTag(n1, x), .addTag(n2, y)): n1 == n2 && x.hasSameScalars(as: y)
        case let (.removeTag(n1, x, p), .removeTag(n2, y, q)): n1 == n2 && x.hasSameScalars(as: y) && p == q
        case let (.setPriority(n1, x, p), .setPriority(n2, y, q)): n1 == n2 && x == y && p == q
        case let (.deleteNote(n1, p), .deleteNote(n2, q)), let (.restoreNote(n1, p), .restoreNote(n2, q)): n1 == n2 && p == q
        case let (.moveNote(n1, l1, r1, p), .moveNote(n2, l2, r2, q)): n1 == n2 && l1 == l2 && r1 == r2 && p == q
        case let (.unknown(k1, x), .unknown(k2, y)): k1 == k2 && x == y
        default: false
        }
    }

    /// Whether the op kind lists predecessors (or, for removeTag, tag adds): not typing,
    /// deleting, creating a note, adding a tag, or an unknown kind.
    @inline(__always) var mayListPredecessors: Bool {
        switch self {
        case .insertText, .deleteText, .createNote, .addTag, .unknown: false
        case .setNotebookTitle, .setNoteTitle, .removeTag, .setPriority, .deleteNote, .restoreNote, .moveNote: true
        }
    }

    var kind: UInt64 {
        switch self {
        case .setNotebookTitle: OpKind.setNotebookTitle.rawValue
        case .createNote: OpKind.createNote.rawValue
        case .setNoteTitle: OpKind.setNoteTitle.rawValue
        case .insertText: OpKind.insertText.rawValue
        case .deleteText: OpKind.deleteText.rawValue
        case .addTag: OpKind.addTag.rawValue
        case .removeTag: OpKind.removeTag.rawValue
        case .setPriority: OpKind.setPriority.rawValue
        case .deleteNote: OpKind.deleteNote.rawValue
        case .restoreNote: OpKind.restoreNote.rawValue
        case .moveNote: OpKind.moveNote.rawValue
        case .unknown(let k, _): k
        }
    }

    /// The note an op edits, if any.
    var note: LocalID? {
        switch self {
        case .setNotebookTitle, .unknown: nil
        case .createNote: nil
        case .setNoteTitle(let n, _, _), .insertText(let n, _, _, _), .deleteText(let n, _, _), .addTag(let n, _),
             .removeTag(let n, _, _), .setPriority(let n, _, _), .deleteNote(let n, _), .restoreNote(let n, _),
             .moveNote(let n, _, _, _):
            n
        }
    }
}

/// One operation (or a run of them) in the op log: `length` op units with
/// local versions `lv ..< lv + length`. Only text inserts and deletes have
/// `length > 1`: consecutive typed characters and deletes of a contiguous
/// range are one `Op`.
///
/// Invariant: `length` is at most `Op.maxLength`. An op's units have consecutive counters of
/// one replica (ops are joined only so, across changes too), and counters are kept below 2^32
/// (replay, salvage and local edits check them); decoders refuse a longer op before making it.
/// Stored after the body in 32 bits, so that an op takes 48 bytes rather than 56 (a log holds
/// one an edit, and a merge two logs).
struct Op: Sendable, Equatable {
    var lv: Int
    var body: OpBody
    private var storedLength: UInt32

    /// The longest op there can be.
    static var maxLength: Int { Int(UInt32.max) }

    init(lv: Int, length: Int, body: OpBody) {
        self.lv = lv
        self.body = body
        storedLength = UInt32(length)
    }

    var length: Int {
        @inline(__always) get { Int(storedLength) }
        @inline(__always) set { storedLength = UInt32(newValue) }
    }
}
