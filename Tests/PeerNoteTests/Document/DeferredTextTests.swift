import Foundation
import Testing
@testable import PeerNote

/// A load whose base block has a state section leaves the log's copy of the inserted text with
/// the notes (`OpLog.deferText(to:)`, `DeferredText`): the log reads it there, and holds what is
/// appended after it itself (`LogTextView`). Whatever reads the text, its hashes and the saves
/// are those of a log that holds all of it (a load of a version 3 file, whose bodies are built
/// from their structures, holds it).
@Suite("A loaded log's text stays with the notes until it is read")
struct DeferredTextTests {
    /// A notebook of `count` notes with deletions, insertions inside bodies, a wide scalar, a
    /// deleted note and a rewritten body: every kind of text a state section and its dead text hold.
    static func notebook(count: Int = 40) throws -> (doc: Document, ids: [NoteID]) {
        let doc = Document(title: "T")
        var ids: [NoteID] = []
        for k in 0 ..< count { ids.append(doc.addNote(title: "N\(k)", body: String(repeating: "typed \(k) ", count: 5))) }
        try doc.deleteText(ids[2], range: 3 ..< 20)
        try doc.insertText(ids[4], at: 5, "inserted")
        try doc.insertText(ids[5], at: 0, "wide \u{1F600} é")
        try doc.setBody(ids[6], "rewritten")
        try doc.deleteNote(ids[9])
        // Typing at the end of the last note: the log's last op is an insert.
        try doc.insertText(ids[count - 1], at: try #require(doc.notes.last?.body.count), " and on")
        return (doc, ids)
    }

    /// The same bytes loaded with the log holding its text: as version 3, whose bodies are built
    /// from their structures and write the log's text in.
    static func holdingText(_ doc: Document) throws -> Document {
        let loaded = try Document.load(doc.save(.compact, writeStructures: true, concurrentFrom: .max))
        #expect(!loaded.log.textIsDeferred)
        return loaded
    }

    @Test("A compact save: the loaded log leaves its text with the notes, and reads, hashes and saves it as its own", arguments: [0, Int.max])
    func compactSave(concurrentFrom: Int) throws {
        let (doc, _) = try Self.notebook()
        let bytes = doc.save(.compact)
        let loaded = try Document.load(bytes, concurrentFrom: concurrentFrom)
        #expect(loaded.log.textIsDeferred)
        // Reading the notebook does not write the log's text.
        #expect(loaded.notebook == doc.notebook)
        #expect(loaded.log.textIsDeferred)
        #expect(loaded.log.textCount == doc.log.textCount)
        #expect(loaded.log.text == doc.log.text)
        #expect(loaded.relation(to: doc) == .shared)
        #expect(doc.relation(to: loaded) == .shared)
        #expect(loaded.save(.compact) == bytes)
        #expect(try Self.holdingText(doc).log.text == loaded.log.text)
    }

    @Test("Blocks appended to a compact save, one continuing its last insert: the log reads across the notes' text and its own", arguments: [0, Int.max])
    func appendedBlocks(concurrentFrom: Int) throws {
        let (doc, ids) = try Self.notebook()
        _ = doc.save(.compact)
        // The same replica types on at the end of the last note: the appended block's insert
        // continues the base block's last op, which the load joins into one.
        let last = ids[ids.count - 1]
        try doc.insertText(last, at: try #require(doc.notes.last?.body.count), " still")
        try doc.insertText(ids[3], at: 2, "mid")
        _ = doc.save(.incremental)
        try doc.deleteText(ids[4], range: 0 ..< 4)
        let bytes = doc.save(.incremental)
        #expect(try BlockCodec.decode(bytes).count == 3)
        let loaded = try Document.load(bytes, concurrentFrom: concurrentFrom)
        #expect(loaded.log.textIsDeferred)
        #expect(loaded.notebook == doc.notebook)
        #expect(loaded.log.text == doc.log.text)
        #expect(loaded.relation(to: doc) == .shared)
        #expect(doc.relation(to: loaded) == .shared)
        #expect(loaded.save(.compact) == doc.save(.compact))
        // The ops across both parts read as one stretch.
        let view = loaded.log.textView
        #expect(Array(view[0 ..< view.count]) == Array(doc.log.text[0 ..< doc.log.textCount]))
    }

    @Test("Edits, incremental saves and merges after such a load give what they give on a log holding its text")
    func editsAndMerges() throws {
        let (doc, ids) = try Self.notebook()
        let bytes = doc.save(.compact)
        let x = try Document.load(bytes, concurrentFrom: 0), y = try Document.load(bytes, concurrentFrom: 0)
        let xr = try Self.holdingText(doc), yr = try Self.holdingText(doc)
        // Each pair makes the same edits, on different notes in x and y (no ties between the
        // replicas, which differ from one pair to the other).
        for d in [x, xr] {
            try d.insertText(ids[1], at: 4, "X")
            try d.insertText(ids[1], at: 5, "Y")
            try d.setBody(ids[7], "from x")
        }
        for d in [y, yr] {
            try d.deleteText(ids[8], range: 2 ..< 9)
            try d.insertText(ids[10], at: 0, "from y ")
            try d.setNoteTitle(ids[11], "retitled")
        }
        #expect(x.log.textIsDeferred && y.log.textIsDeferred)
        // An incremental save of the edited copy loads to it.
        let xs = x.save(.incremental)
        #expect(try BlockCodec.decode(xs).count == 2)
        #expect(try Document.load(xs, concurrentFrom: 0).notebook == x.notebook)
        try x.merge(y)
        try xr.merge(yr)
        #expect(x.notebook == xr.notebook)
        let merged = try Document.load(x.save(.incremental), concurrentFrom: 0)
        #expect(merged.notebook == x.notebook)
        #expect(merged.relation(to: x) == .shared)
        #expect(try Document.load(x.save(.compact)).notebook == xr.notebook)
        // The other way round, from the loaded side.
        try y.merge(Document.load(xs, concurrentFrom: 0))
        #expect(y.notebook == x.notebook)
    }

    @Test("Bodies that would read only a small part of their section in place copy their text instead")
    func fewBodiesCopyTheirText() throws {
        let doc = Document(title: "T")
        var ids: [NoteID] = []
        for k in 0 ..< 30 { ids.append(doc.addNote(title: "N\(k)", body: String(repeating: "text of note \(k) ", count: 4))) }
        // All but two bodies lose a character: their text is written in, and the two left would
        // keep the whole section alive for a tenth of it.
        for id in ids.dropFirst(2) { try doc.deleteText(id, range: 0 ..< 1) }
        let loaded = try Document.load(doc.save(.compact))
        #expect(loaded.state.noteStates.allSatisfy { !$0.body.arena.readsInPlace && !$0.body.arena.isUnwritten })
        #expect(loaded.notebook == doc.notebook)
        #expect(loaded.log.text == doc.log.text)
        #expect(!MergeSource.keepingHistory(of: loaded).log.textIsDeferred)
        // Most bodies untouched: they read in place.
        let most = Document(title: "T")
        var others: [NoteID] = []
        for k in 0 ..< 30 { others.append(most.addNote(title: "N\(k)", body: String(repeating: "text of note \(k) ", count: 4))) }
        for id in others.prefix(2) { try most.deleteText(id, range: 0 ..< 1) }
        let read = try Document.load(most.save(.compact))
        #expect(read.state.noteStates.filter { $0.body.arena.readsInPlace }.count == 28)
        #expect(read.notebook == most.notebook)
    }

    @Test("A merge source kept after a document whose bodies all read their text in its section reads it there too")
    func mergeSourceReadsSectionText() throws {
        let doc = Document(title: "T")
        var ids: [NoteID] = []
        for k in 0 ..< 30 { ids.append(doc.addNote(title: "N\(k)", body: "plain text \(k), typed in order")) }
        // A note with a title alone: its empty arena reads nothing, in place or not.
        doc.addNote(title: "Only a title")
        let bytes = doc.save(.compact)
        // THEIRS: a note added and a title changed, saved compact.
        let theirs = try Document.load(bytes)
        theirs.addNote(title: "Theirs", body: "their own text")
        try theirs.setNoteTitle(ids[7], "retitled")
        let theirsBytes = theirs.save(.compact)
        var kept: MergeSource?
        do {
            let loaded = try Document.load(theirsBytes)
            #expect(loaded.state.noteStates.allSatisfy { $0.body.arena.readsInPlace || $0.body.arena.isEmpty })
            kept = MergeSource.keepingHistory(of: loaded)
        }
        let source = try #require(kept)
        // No copy: the log goes on reading its text in the arenas, which read the section's bytes.
        #expect(source.log.textIsDeferred)
        #expect(source.log.text == theirs.log.text)
        let mine = try Document.load(bytes)
        try mine.setBody(ids[4], "mine")
        let reference = try Document.load(bytes)
        try reference.setBody(ids[4], "mine")
        try mine.merge(source)
        try reference.merge(theirs)
        #expect(mine.notebook == reference.notebook && mine.log.text == reference.log.text)
        #expect(mine.notes.contains { $0.title == "Theirs" && $0.body == "their own text" })
        #expect(try Document.load(mine.save(.compact)).notebook == reference.notebook)
    }

    @Test("A merge source kept after its document holds its text itself, and merges as the document does", arguments: [0, Int.max])
    func mergeSourceKeepsItsText(concurrentFrom: Int) throws {
        let (doc, ids) = try Self.notebook()
        let theirs = try Document.load(doc.save(.compact), concurrentFrom: concurrentFrom)
        try theirs.insertText(ids[3], at: 1, "theirs")
        try theirs.deleteText(ids[12], range: 0 ..< 3)
        let theirsBytes = theirs.save(.incremental)
        let loadedTheirs = try Document.load(theirsBytes, concurrentFrom: concurrentFrom)
        #expect(loadedTheirs.log.textIsDeferred)
        // Shared: the source reads the notes' arenas; kept: it holds a copy of the same text.
        let shared = loadedTheirs.mergeSource, kept = MergeSource.keepingHistory(of: loadedTheirs)
        #expect(shared.log.textIsDeferred)
        #expect(!kept.log.textIsDeferred)
        #expect(kept.log.text == loadedTheirs.log.text)
        #expect(!(try MergeSource.load(theirsBytes)).log.textIsDeferred)
        // The document it was taken from still reads its text in the arenas.
        #expect(loadedTheirs.log.textIsDeferred)
        var results: [Document] = []
        for source in [shared, kept] {
            let mine = try Document.load(doc.save(.compact), concurrentFrom: concurrentFrom)
            try mine.setBody(ids[5], "mine")
            #expect(mine.relation(to: source) == .shared)
            try mine.merge(source)
            results.append(mine)
        }
        #expect(results[0].notebook == results[1].notebook)
        #expect(results[0].log.text == results[1].log.text)
        #expect(try Document.load(results[1].save(.compact)).notebook == results[1].notebook)
    }

    @Test("History, blame and salvage of a compact save read the loaded log's text as a log that holds it")
    func historyBlameAndSalvage() throws {
        let (doc, ids) = try Self.notebook()
        let bytes = doc.save(.compact)
        let loaded = try Document.load(bytes), reference = try Self.holdingText(doc)
        #expect(loaded.log.textIsDeferred)
        // Note 9 is deleted; every other one has lines to blame.
        for id in ids.prefix(12) where id != ids[9] {
            #expect(try loaded.blame(id) == reference.blame(id))
        }
        let history = loaded.historyNewestFirst()
        #expect(history.map(\.id) == reference.historyNewestFirst().map(\.id))
        for entry in Array(history.prefix(4)) + Array(history.suffix(2)) {
            #expect(try loaded.notebook(at: entry.id) == reference.notebook(at: entry.id))
        }
        let rescue = try Document.salvage(bytes)
        #expect(rescue.isIntact)
        #expect(rescue.document.notebook == doc.notebook)
        #expect(rescue.document.log.text == doc.log.text)
    }

    @Test("A roll-back of changes appended after a load leaves the log reading its text in the arenas")
    func rollBackAfterLoad() throws {
        let (doc, ids) = try Self.notebook()
        let bytes = doc.save(.compact)
        let loaded = try Document.load(bytes), edited = try Document.load(bytes)
        let checkpoint = edited.log.checkpoint()
        try edited.insertText(ids[1], at: 2, "appended")
        try edited.insertText(ids[1], at: 4, "more")
        var log = edited.log
        #expect(log.textCount == loaded.log.textCount + 12)
        log.rollBack(to: checkpoint)
        #expect(log.textIsDeferred)
        #expect(log.textCount == loaded.log.textCount)
        #expect(log.text == loaded.log.text)
        #expect(log.ops.count == loaded.log.ops.count)
        #expect(log.changes.count == loaded.log.changes.count)
    }

    @Test("A notebook of more notes than a load checks on one thread: the same text, read in the arenas", arguments: [0, Int.max])
    func largeNotebook(concurrentFrom: Int) throws {
        let (doc, _) = try Self.notebook(count: BlockReplayer.concurrentFillFrom + 200)
        let bytes = doc.save(.compact)
        let loaded = try Document.load(bytes, concurrentFrom: concurrentFrom)
        #expect(loaded.log.textIsDeferred)
        #expect(loaded.notebook == doc.notebook)
        #expect(loaded.log.text == doc.log.text)
        #expect(loaded.save(.compact) == bytes)
    }

    @Test("Pieces that do not lie in their arenas are refused; pieces that do read in order")
    func piecesOutsideTheirArenas() {
        let arenas = [ScalarStore(Array("abc".unicodeScalars)), ScalarStore(Array("xyz\u{1F600}".unicodeScalars))]
        let refused: [[(arena: Int, length: Int)]] = [
            [(arena: -1, length: 1)],
            [(arena: 2, length: 1)],
            [(arena: 0, length: 4)],
            [(arena: 0, length: 2), (arena: 0, length: 2)],
            [(arena: 1, length: 0)],
        ]
        for runs in refused { #expect(DeferredText(arenas: arenas, runs: runs) == nil, "\(runs)") }
        let text = DeferredText(arenas: arenas, runs: [(arena: 0, length: 2), (arena: 1, length: 3), (arena: 0, length: 1), (arena: 1, length: 1)])
        #expect(text?.count == 7)
        let view = LogTextView(headCount: 7, head: text, tail: ScalarStore(Array("!".unicodeScalars)))
        #expect(String(String.UnicodeScalarView(view)) == "abxyzc\u{1F600}!")
        // A stretch within one piece is read in place; one across pieces and parts, copied.
        #expect(String(String.UnicodeScalarView(view[2 ..< 5])) == "xyz")
        #expect(String(String.UnicodeScalarView(view[4 ..< 8])) == "zc\u{1F600}!")
    }

    @Test("Sources sharing one arena: each piece lies in its source, and reads there")
    func sourcesSharingAnArena() {
        // One store over a section's bytes, two bodies reading stretches of it, and a body of its own.
        let section = Array("{title}hello{x}world".utf8)
        let arenas = [ScalarStore(borrowing: section[...]), ScalarStore(Array("é\u{1F600}".unicodeScalars))]
        let sources: [(arena: Int, range: Range<Int>)] = [(0, 7 ..< 12), (1, 0 ..< 2), (0, 15 ..< 20)]
        let refusedSources: [[(arena: Int, range: Range<Int>)]] = [[(2, 0 ..< 1)], [(0, 15 ..< 21)], [(-1, 0 ..< 1)], [(1, -1 ..< 1)]]
        for bad in refusedSources { #expect(DeferredText(arenas: arenas, sources: bad, runs: [(source: 0, length: 1)]) == nil, "\(bad)") }
        let refusedRuns: [[(source: Int, length: Int)]] = [
            [(source: 3, length: 1)],
            [(source: 0, length: 6)],                          // past its source, though within the arena
            [(source: 0, length: 3), (source: 0, length: 3)],
            [(source: 1, length: 0)],
        ]
        for runs in refusedRuns { #expect(DeferredText(arenas: arenas, sources: sources, runs: runs) == nil, "\(runs)") }
        let text = DeferredText(arenas: arenas, sources: sources,
                                runs: [(source: 2, length: 5), (source: 0, length: 2), (source: 1, length: 2), (source: 0, length: 3)])
        #expect(text?.count == 12)
        let view = LogTextView(headCount: 12, head: text, tail: ScalarStore())
        #expect(String(String.UnicodeScalarView(view)) == "worldheé\u{1F600}llo")
        #expect(String(String.UnicodeScalarView(view[0 ..< 5])) == "world" && view.sameScalars(9 ..< 12, as: view, from: 9))
        #expect(!view.sameScalars(0 ..< 2, as: view, from: 5))
    }

    @Test("A loaded body that is its section's ASCII in list order reads it there until it is written", arguments: [40, 1_100])
    func bodiesReadInPlace(count: Int) throws {
        let (doc, ids) = try Self.notebook(count: count)
        let bytes = doc.save(.compact)
        let loaded = try Document.load(bytes)
        func arena(_ id: NoteID) throws -> ScalarStore {
            let slot = try #require(loaded.state.noteStates.indices.first { loaded.noteID(loaded.state.noteStates[$0].id) == id })
            return loaded.state.noteStates[slot].body.arena
        }
        // Deleted text, an insert inside a body, a wide scalar and a rewritten body are written
        // in; every other body (the deleted note's, and the one typed on at its end, too) is read
        // where the section holds it.
        let writtenIn: Set<Int> = [2, 4, 5, 6]
        for (k, id) in ids.enumerated() {
            #expect(try arena(id).readsInPlace == !writtenIn.contains(k), "note \(k)")
        }
        #expect(loaded.notebook == doc.notebook)
        #expect(loaded.log.text == doc.log.text)
        // A write copies that body alone; the others read on in place, and the log's text with them.
        try loaded.insertText(ids[0], at: 0, "edited ")
        try loaded.setBody(ids[1], "replaced")
        #expect(try !arena(ids[0]).readsInPlace && !arena(ids[1]).readsInPlace && arena(ids[3]).readsInPlace)
        try doc.insertText(ids[0], at: 0, "edited ")
        try doc.setBody(ids[1], "replaced")
        #expect(loaded.notebook == doc.notebook)
        #expect(loaded.log.text == doc.log.text)
        let again = try Document.load(loaded.save(.compact))
        #expect(again.notebook == doc.notebook)
        #expect(try Document.load(loaded.save()).notebook == doc.notebook)
    }
}
