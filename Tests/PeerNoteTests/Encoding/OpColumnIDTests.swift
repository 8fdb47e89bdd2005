import Testing
@testable import PeerNote

/// The ids the op columns name (a text op's note, an insert's origins, a delete's target) are
/// checked as each row is read: a replica index past the file's replica table is refused, named
/// as the kind of reference it is, and references that name nothing are read as none.
@Suite("Reading the op columns' ids")
struct OpColumnIDTests {
    static let id = ConcurrentLoadTests.id
    static let changes = [ConcurrentLoadTests.Change(replica: 0, seq: 1, length: 1, deps: []),
                          ConcurrentLoadTests.Change(replica: 0, seq: 2, length: 2, deps: [0]),
                          ConcurrentLoadTests.Change(replica: 0, seq: 3, length: 1, deps: [1])]

    /// A note, two characters typed into it, and one of them deleted, with `insert` and `delete` as given.
    static func file(insert: OpBody, delete: OpBody) -> [UInt8] {
        ConcurrentLoadTests.file(changes, [(.createNote(originLeft: .none, originRight: .none, created: 0), 1), (insert, 2), (delete, 1)], text: "hi")
    }

    static func message(_ bytes: [UInt8]) -> String? {
        do { _ = try Document.load(bytes); return nil } catch { return "\(error)" }
    }

    @Test("A well-formed file reads, its references to nothing read as none")
    func wellFormed() throws {
        let id = Self.id
        let bytes = Self.file(insert: .insertText(note: id(0, 0), originLeft: .none, originRight: .none, contentStart: 0),
                              delete: .deleteText(note: id(0, 0), target: id(0, 2), reversed: false))
        let doc = try Document.load(bytes)
        #expect(doc.notebook.notes.map(\.body) == ["h"])
    }

    @Test("A note reference, an origin and a delete's target naming a replica past the table are refused, each named")
    func replicaPastTheTable() {
        let id = Self.id
        let insert = OpBody.insertText(note: id(0, 0), originLeft: .none, originRight: .none, contentStart: 0)
        let delete = OpBody.deleteText(note: id(0, 0), target: id(0, 2), reversed: false)
        let badNote = Self.message(Self.file(insert: .insertText(note: id(5, 0), originLeft: .none, originRight: .none, contentStart: 0), delete: delete))
        #expect(badNote?.contains("note reference names replica 5, the table has 2") == true, "\(badNote ?? "read")")
        let badOrigin = Self.message(Self.file(insert: .insertText(note: id(0, 0), originLeft: .none, originRight: id(7, 0), contentStart: 0), delete: delete))
        #expect(badOrigin?.contains("reference names replica 7, the table has 2") == true, "\(badOrigin ?? "read")")
        #expect(badOrigin?.contains("note reference") == false, "\(badOrigin ?? "read")")
        let badTarget = Self.message(Self.file(insert: insert, delete: .deleteText(note: id(0, 0), target: id(3, 1), reversed: false)))
        #expect(badTarget?.contains("reference names replica 3, the table has 2") == true, "\(badTarget ?? "read")")
    }
}
