import Foundation
import Testing
@testable import PeerNote

/// `../shared/traces` beside the package root (this file is `<root>/Tests/PeerNoteTests/TraceTests.swift`).
let tracesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("shared/traces")

/// Whether both editing traces are there (CI clones the repository beside `shared/`; other checkouts may not).
let tracesAvailable = ["friendsforever.json.gz", "automerge-paper.json.gz"].allSatisfy {
    FileManager.default.fileExists(atPath: tracesDirectory.appendingPathComponent($0).path)
}

/// A published editing trace (the `editing-traces` data set format), as the tests read it.
struct EditingTrace: Decodable {
    /// Delete `deleteCount` code points at `position`, then insert `text` there.
    struct Patch: Decodable {
        var position: Int
        var deleteCount: Int
        var text: String

        init(from decoder: any Decoder) throws {
            var c = try decoder.unkeyedContainer()
            position = try c.decode(Int.self)
            deleteCount = try c.decode(Int.self)
            text = try c.decode(String.self)
        }
    }

    /// One transaction; `parents` and `agent` only in concurrent traces.
    struct Txn: Decodable {
        var parents: [Int]?
        var agent: Int?
        var patches: [Patch]
    }

    var startContent: String?
    var endContent: String
    var txns: [Txn]

    static func load(_ name: String) throws -> EditingTrace {
        let compressed = try [UInt8](Data(contentsOf: tracesDirectory.appendingPathComponent(name)))
        let json = try Gzip.decompress(compressed, maxOutput: 1 << 28)
        return try JSONDecoder().decode(EditingTrace.self, from: Data(json))
    }
}

extension Document {
    /// Applies one trace transaction to `note` as one change: each patch deletes, then inserts.
    func apply(_ txn: EditingTrace.Txn, to note: NoteID) throws {
        try transaction {
            for p in txn.patches {
                if p.deleteCount > 0 { try deleteText(note, range: p.position ..< p.position + p.deleteCount) }
                if !p.text.isEmpty { try insertText(note, at: p.position, p.text) }
            }
        }
    }
}

/// The outcome of replaying a concurrent trace.
struct ConcurrentReplay {
    var final: Document
    var note: NoteID
    var forks = 0
    var merges = 0
}

extension EditingTrace {
    /// Replays a concurrent trace through forks and merges, as its parents say: no parents → a
    /// fork of a base holding one empty note; one parent → that parent's document (forked while
    /// other children still need it, taken over by the last one); several → the first parent's
    /// document merged with the others'. Each transaction is one change by its agent.
    func replayConcurrently(merge: (Document, Document) throws -> Void) throws -> ConcurrentReplay {
        let base = Document(title: "friendsforever", author: "trace")
        let note = base.addNote(title: "friendsforever", body: startContent ?? "")
        var pendingChildren = [Int](repeating: 0, count: txns.count)
        for txn in txns { for p in txn.parents ?? [] { pendingChildren[p] += 1 } }
        var docs = [Document?](repeating: nil, count: txns.count)
        var forks = 0, merges = 0
        for (t, txn) in txns.enumerated() {
            let agent = try #require(txn.agent, "transaction \(t) has no agent")
            let author = "agent \(agent)"
            let parents = txn.parents ?? []
            let doc: Document
            if let first = parents.first {
                let parentDoc = try #require(docs[first], "transaction \(t): parent \(first) is gone")
                pendingChildren[first] -= 1
                if pendingChildren[first] == 0 {
                    doc = parentDoc
                    doc.author = author
                    docs[first] = nil
                } else {
                    doc = parentDoc.fork(author: author)
                    forks += 1
                }
                for p in parents.dropFirst() {
                    let other = try #require(docs[p], "transaction \(t): parent \(p) is gone")
                    try merge(doc, other)
                    merges += 1
                    pendingChildren[p] -= 1
                    if pendingChildren[p] == 0 { docs[p] = nil }
                }
            } else {
                doc = base.fork(author: author)
            }
            try doc.apply(txn, to: note)
            docs[t] = doc
        }
        let heads = docs.compactMap { $0 }
        var final = try #require(heads.first)
        if heads.count > 1 {
            final = final.fork(author: "trace")
            for h in heads.dropFirst() { try merge(final, h) }
        }
        return ConcurrentReplay(final: final, note: note, forks: forks, merges: merges)
    }
}

@Suite("Editing traces")
struct TraceTests {
    @Test("friendsforever (concurrent): replayed through forks and Document.merge, ends with exactly its endContent",
          .enabled(if: tracesAvailable, "../shared/traces not found beside the package: trace tests skipped"))
    func concurrentTrace() throws {
        let trace = try EditingTrace.load("friendsforever.json.gz")
        let r = try trace.replayConcurrently { doc, other in try doc.merge(other) }
        #expect(r.forks > 0 && r.merges > 0, "the trace's branches must really be forked and merged")
        #expect(r.final.note(r.note)?.body == trace.endContent)
        // The merged document, with its many replicas, survives a save and load.
        let loaded = try Document.load(r.final.save())
        #expect(loaded.note(r.note)?.body == trace.endContent)
    }

    /// Found by the friendsforever trace: a one-character delete must read the same on every
    /// copy, whether or not it was later joined with the next backspace into one run.
    @Test("Two backspaces made as two changes, with a fork between them, merge")
    func backspacesAcrossChangesMerge() throws {
        let a = Document(title: "t", author: "a")
        let n = a.addNote(title: "n", body: "abcdef")
        try a.deleteText(n, range: 5 ..< 6)
        let b = a.fork(author: "b")
        try a.deleteText(n, range: 4 ..< 5)
        try b.insertText(n, at: 0, "X")
        try b.merge(a)
        #expect(b.note(n)?.body == "Xabcd")
        try a.merge(b)
        #expect(a.notebook == b.notebook)
    }

    static let sequentialPrefix = 20_000

    @Test("automerge-paper (sequential): the first 20,000 transactions give the text a plain replay gives, and survive save and load",
          .enabled(if: tracesAvailable, "../shared/traces not found beside the package: trace tests skipped"))
    func sequentialTracePrefix() throws {
        let trace = try EditingTrace.load("automerge-paper.json.gz")
        let txns = trace.txns.prefix(Self.sequentialPrefix)
        #expect(txns.count == Self.sequentialPrefix)
        let doc = Document(title: "automerge-paper", author: "trace")
        let note = doc.addNote(title: "paper", body: trace.startContent ?? "")
        var reference = Array((trace.startContent ?? "").unicodeScalars)
        for txn in txns {
            try doc.apply(txn, to: note)
            for p in txn.patches {
                reference.replaceSubrange(p.position ..< p.position + p.deleteCount, with: p.text.unicodeScalars)
            }
        }
        let expected = String(String.UnicodeScalarView(reference))
        #expect(!expected.isEmpty)
        #expect(doc.note(note)?.body == expected)
        #expect(doc.changeCount == Self.sequentialPrefix + 2, "one change per transaction, after the genesis and the note's creation")

        let bytes = doc.save(.compact)
        let loaded = try Document.load(bytes)
        #expect(loaded.note(note)?.body == expected)
        #expect(loaded.changeCount == doc.changeCount)
        #expect(loaded.save(.compact) == bytes)
    }
}
