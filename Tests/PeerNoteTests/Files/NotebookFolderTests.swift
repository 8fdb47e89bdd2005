import Foundation
@testable import PeerNote
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Notebook folders (`NotebookFolder`): chunks named by their chains, reading as the union of
/// the chains, damaged and foreign files skipped, per-device trees, compaction.
@Suite("Notebook folders")
struct NotebookFolderTests {
    static let deviceA = "0000000a", deviceB = "0000000b"

    /// The chunk files of a folder, sorted.
    static func chunks(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".pnchunk") && !$0.hasPrefix(".") }.sorted()
    }

    static func titles(_ document: Document) -> Set<String> { Set(document.notes.map(\.title)) }

    static func makeFolder(_ dir: TempDir, device: String = deviceA) throws -> NotebookFolder {
        let path = dir.path("Trip.peernote")
        try NotebookFolder.create(at: path, Document(title: "Trip", author: "ann"), device: device)
        return NotebookFolder(path, device: device)
    }

    @Test("a new folder holds one root chunk named by its device and the hash of its bytes")
    func newFolderHoldsOneRoot() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        let names = try Self.chunks(folder.path)
        #expect(names.count == 1)
        let bytes = try dir.bytes("Trip.peernote/\(names[0])")
        #expect(names[0] == "\(Self.deviceA).\(NotebookFolder.chainID(bytes, device: Self.deviceA)).pnchunk")
        #expect(try Document.open(folder.path).title == "Trip")
    }

    @Test("each write adds one chunk after the chain it read; every chain is an ordinary file")
    func writesAppendChunks() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        var sizes: [Int] = []
        for i in 0 ..< 3 {
            let d = try folder.read().document
            d.addNote(title: "Note \(i)", body: String(repeating: "line \(i) of a longer body\n", count: 60))
            let added = try folder.add(d)
            #expect(added.chunk != nil)
            sizes.append(added.byteCount)
        }
        let names = try Self.chunks(folder.path)
        #expect(names.count == 4)
        let reading = try folder.read()
        #expect(reading.warnings.isEmpty)
        #expect(reading.leaves.count == 1)
        #expect(Self.titles(reading.document) == ["Note 0", "Note 1", "Note 2"])
        // The leaf's chain, root to leaf, is a .peernote file that loads as the notebook.
        let chain = try #require(reading.leafChains[reading.leaves[0].own])
        #expect(Self.titles(try Document.load(chain)) == ["Note 0", "Note 1", "Note 2"])
        // Each appended chunk holds its own change, not the notebook again.
        #expect(sizes[2] * 2 < reading.document.save(.compact).count)
    }

    @Test("a write with nothing new adds no chunk")
    func nothingNewAddsNothing() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        let d = try folder.read().document
        #expect(try folder.add(d).chunk == nil)
        #expect(try Self.chunks(folder.path).count == 1)
    }

    @Test("Document.open and write(to:) take a folder wherever they take a file")
    func documentAPIAcceptsFolders() throws {
        let dir = try TempDir()
        let path = dir.path("Notes.peernote")
        try NotebookFolder.create(at: path, Document(title: "Notes"))
        let d = try Document.open(path + "/")
        d.addNote(title: "Via the API")
        try d.write(to: path)
        #expect(Self.titles(try Document.open(path)) == ["Via the API"])
        #expect(try Self.chunks(path).count == 2)
    }

    @Test("two devices writing one folder each add their own chunks, and the folder reads as the union")
    func devicesWriteTheirOwnTrees() throws {
        let dir = try TempDir()
        let a = try Self.makeFolder(dir)
        let b = NotebookFolder(a.path, device: Self.deviceB)
        let da = try a.read().document, db = try b.read().document
        da.addNote(title: "From A")
        db.addNote(title: "From B")
        try a.add(da)
        try b.add(db)
        let reading = try a.read()
        #expect(Self.titles(reading.document) == ["From A", "From B"])
        // B had no tree yet: its write is a root of its own; A's is appended to A's root.
        let names = try Self.chunks(a.path)
        #expect(names.filter { $0.hasPrefix(Self.deviceB + ".") }.count == 1)
        #expect(names.count == 3)
        // B's next write appends to B's tree.
        let db2 = try b.read().document
        db2.addNote(title: "From B again")
        let added = try b.add(db2)
        let root = try #require(names.first { $0.hasPrefix(Self.deviceB + ".") })
        let rootID = String(root.dropFirst(9).prefix(32))
        #expect(added.chunk?.hasPrefix(rootID) == true)
    }

    @Test("a damaged or half-synced chunk is skipped with one warning naming it, never deleted")
    func damagedChunkIsSkipped() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        let d = try folder.read().document
        d.addNote(title: "Kept")
        try folder.add(d)
        let d2 = try folder.read().document
        d2.addNote(title: "Cut short")
        let added = try folder.add(d2)
        let name = try #require(added.chunk)
        let bytes = try dir.bytes("Trip.peernote/\(name)")
        try dir.write(Array(bytes.prefix(bytes.count / 2)), "Trip.peernote/\(name)")
        let reading = try folder.read()
        #expect(Self.titles(reading.document) == ["Kept"])
        #expect(reading.warnings.count == 1)
        #expect(reading.warnings.first?.contains(name) == true)
        #expect(reading.warningFiles == [name], "each warning names its file apart from its text")
        #expect(FileManager.default.fileExists(atPath: dir.path("Trip.peernote/\(name)")))
        // What salvage starts from: the chain up to the damaged chunk, whose intact part holds
        // the change before it.
        #expect(reading.damaged == [name])
        let chain = try #require(reading.chainToSalvage(name))
        #expect(Self.titles(try Document.salvage(chain).document) == ["Kept"])
        // Writing on goes after the intact chain; the damaged chunk stays.
        let d3 = reading.document
        d3.addNote(title: "After")
        try folder.add(d3)
        #expect(Self.titles(try folder.read().document) == ["Kept", "After"])
        #expect(FileManager.default.fileExists(atPath: dir.path("Trip.peernote/\(name)")))
    }

    @Test("files that are not chunks are ignored; a conflict copy of a chunk gets a warning")
    func foreignFilesAreIgnored() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        let root = try Self.chunks(folder.path)[0]
        try dir.write("Trip.peernote/README", "notes")
        try FileManager.default.createDirectory(atPath: dir.path("Trip.peernote/.stfolder"), withIntermediateDirectories: true)
        try dir.write([1, 2, 3], "Trip.peernote/.\(root).tmp-0000000b-abcdef")
        try dir.write(try dir.bytes("Trip.peernote/\(root)"), "Trip.peernote/\(root.dropLast(8)).sync-conflict-20261126-101010-ABCDEFG.pnchunk")
        let reading = try folder.read()
        #expect(reading.document.title == "Trip")
        #expect(reading.warnings.count == 1)
        #expect(reading.warnings.first?.contains("sync-conflict") == true)
        // Another device's temporary file is never removed here, however old.
        #expect(folder.removeOwnTemporaries(olderThan: 0).isEmpty)
        #expect(FileManager.default.fileExists(atPath: dir.path("Trip.peernote/.\(root).tmp-0000000b-abcdef")))
        // This device's own, once old and unlocked, is.
        try dir.write([1], "Trip.peernote/.\(root).tmp-0000000a-abcdef")
        #expect(folder.removeOwnTemporaries(olderThan: 0).count == 1)
    }

    @Test("a chunk whose parent is not there is skipped with a warning")
    func orphanIsSkipped() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        let d = try folder.read().document
        d.addNote(title: "One")
        try folder.add(d)
        let d2 = try folder.read().document
        d2.addNote(title: "Two")
        let second = try #require(try folder.add(d2).chunk)
        let first = try #require(try Self.chunks(folder.path).first { second.hasPrefix(String($0.dropFirst(33).prefix(32))) })
        try FileManager.default.removeItem(atPath: dir.path("Trip.peernote/\(first)"))
        let reading = try folder.read()
        #expect(reading.document.title == "Trip")
        #expect(reading.warnings.count == 1)
        #expect(reading.warnings.first?.contains("parent chunk") == true)
    }

    @Test("chunks after one whose parent is not there get one warning between them, naming the first and how many follow")
    func orphanedStretchWarnsOnce() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        var added: [String] = []
        for title in ["One", "Two", "Three", "Four"] {
            let d = try folder.read().document
            d.addNote(title: title)
            added.append(try #require(try folder.add(d).chunk))
        }
        try FileManager.default.removeItem(atPath: dir.path("Trip.peernote/\(added[0])"))
        let reading = try folder.read()
        #expect(reading.document.notes.isEmpty)
        #expect(reading.warnings.count == 1, "\(reading.warnings)")
        #expect(reading.warnings.first?.contains(added[1]) == true && reading.warnings.first?.contains("with the 2 chunks after it") == true,
                "\(reading.warnings)")
        // The same when the first of them is damaged instead: its warning, and one for those after it.
        try dir.write([0xFF], "Trip.peernote/\(added[0])")
        let again = try folder.read()
        #expect(again.warnings.count == 2, "\(again.warnings)")
        #expect(again.warnings.contains { $0.contains(added[0]) && $0.contains("damaged") }, "\(again.warnings)")
        #expect(again.warnings.contains { $0.contains(added[1]) && $0.contains("skipped too, with 2 more chunks after that one") }, "\(again.warnings)")
    }

    @Test("chunk names whose parents make a cycle are skipped with warnings, and reading ends")
    func parentCycleEnds() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        let a = String(repeating: "a", count: 32), b = String(repeating: "b", count: 32)
        try dir.write([1, 2, 3], "Trip.peernote/\(a).\(b).pnchunk")
        try dir.write([4, 5, 6], "Trip.peernote/\(b).\(a).pnchunk")
        let reading = try folder.read()
        #expect(reading.document.title == "Trip")
        #expect(!reading.warnings.isEmpty)
    }

    @Test("compaction removes this device's covered chunks only after the grace period, and never another device's")
    func compactionWaitsAndKeepsOthers() throws {
        let dir = try TempDir()
        let a = try Self.makeFolder(dir)
        let b = NotebookFolder(a.path, device: Self.deviceB)
        for i in 0 ..< 3 {
            let d = try a.read().document
            d.addNote(title: "A\(i)")
            try a.add(d)
        }
        let db = try b.read().document
        db.addNote(title: "B")
        try b.add(db)
        let before = try Self.chunks(a.path)
        let first = try a.compact(grace: 3_600)
        #expect(first.wroteRoot)
        #expect(first.removed.isEmpty)
        #expect(first.waiting == 4)
        let second = try a.compact(grace: 0)
        #expect(!second.wroteRoot)
        #expect(second.removed.count == 4)
        let after = try Self.chunks(a.path)
        // B's root stays: only B may remove it.
        #expect(after.contains { $0.hasPrefix(Self.deviceB + ".") })
        #expect(after.count == 2)
        #expect(Set(before).isSuperset(of: after.filter { !$0.hasPrefix(Self.deviceA) }))
        #expect(Self.titles(try a.read().document) == ["A0", "A1", "A2", "B"])
    }

    @Test("two devices that hold the same changes compact to the same bytes")
    func equalContentEqualBytes() throws {
        let dir = try TempDir()
        let a = try Self.makeFolder(dir)
        let d = try a.read().document
        d.addNote(title: "Shared")
        try a.add(d)
        let b = NotebookFolder(a.path, device: Self.deviceB)
        let ra = try a.compact(grace: 0), rb = try b.compact(grace: 0)
        let bytesA = try dir.bytes("Trip.peernote/\(ra.root)"), bytesB = try dir.bytes("Trip.peernote/\(rb.root)")
        #expect(bytesA == bytesB)
        #expect(ra.root != rb.root)
        // A second compaction of an unchanged folder writes and removes nothing.
        let again = try a.compact(grace: 0)
        #expect(!again.wroteRoot && again.removed.isEmpty)
    }

    @Test("a device writing while another compacts loses nothing")
    func writeDuringCompaction() throws {
        let dir = try TempDir()
        let a = try Self.makeFolder(dir)
        let b = NotebookFolder(a.path, device: Self.deviceB)
        let db = try b.read().document
        db.addNote(title: "B before")
        try b.add(db)
        // B reads, A compacts and removes its old chunks, B writes what it read plus an edit.
        let db2 = try b.read().document
        let da = try a.read().document
        da.addNote(title: "A")
        try a.add(da)
        _ = try a.compact(grace: 0)
        db2.addNote(title: "B after")
        try b.add(db2)
        let reading = try a.read()
        #expect(reading.warnings.isEmpty)
        #expect(Self.titles(reading.document) == ["B before", "A", "B after"])
    }

    @Test("a folder of another notebook's chunk reads the rest and names it")
    func anotherNotebooksChunkIsSkipped() throws {
        let dir = try TempDir()
        let a = try Self.makeFolder(dir)
        let other = Document(title: "Other")
        let bytes = other.save(.compact)
        try dir.write(bytes, "Trip.peernote/\(Self.deviceB).\(NotebookFolder.chainID(bytes, device: Self.deviceB)).pnchunk")
        let reading = try a.read()
        #expect(reading.warnings.count == 1)
        #expect(reading.warnings.first?.contains("another notebook") == true)
        // This device's tree is the base; the foreign chunk is the one left out.
        #expect(reading.document.title == "Trip")
    }

    @Test("past the threshold of this device's chunks, a write compacts them")
    func writesCompactPastThreshold() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        var compactions = 0
        for i in 0 ..< NotebookFolder.compactionThreshold + 4 {
            let d = try folder.read().document
            d.addNote(title: "N\(i)")
            if try folder.add(d, grace: 0).compaction != nil { compactions += 1 }
        }
        #expect(compactions == 1)
        #expect(try Self.chunks(folder.path).count < 8)
        #expect(try folder.read().document.notes.count == NotebookFolder.compactionThreshold + 4)
    }

    @Test("during the grace period a write compacts only once its new chain is past the threshold, not at every write")
    func compactsOncePerThresholdDuringGrace() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        var compactions = 0
        let writes = 2 * NotebookFolder.compactionThreshold + 4
        for i in 0 ..< writes {
            let d = try folder.read().document
            d.addNote(title: "N\(i)")
            if try folder.add(d).compaction != nil { compactions += 1 }
        }
        #expect(compactions == 2)
        // Nothing removed yet (the grace period), and two roots written, not one a write.
        let roots = try Self.chunks(folder.path).filter { NotebookFolder.ChunkName($0)?.device != nil }
        #expect(roots.count == 3)
        #expect(try folder.read().document.notes.count == writes)
    }

    /// Copies what `from` has that `to` lacks, and removes from `to` what `from` removed since
    /// `known` (the chunks both had): a sync tool's pass in one direction.
    static func syncOneWay(_ from: String, _ to: String, known: Set<String>) throws {
        let have = Set(try chunks(from)), there = Set(try chunks(to))
        for name in have.subtracting(there) {
            try FileManager.default.copyItem(atPath: from + "/" + name, toPath: to + "/" + name)
        }
        for name in known.intersection(there).subtracting(have) { try FileManager.default.removeItem(atPath: to + "/" + name) }
    }

    @Test("a compaction on one device never orphans a chunk another device wrote meanwhile")
    func compactionKeepsOtherDevicesTrees() throws {
        let dir = try TempDir()
        let a = try Self.makeFolder(dir)
        let pathB = dir.path("B/Trip.peernote")
        try FileManager.default.createDirectory(atPath: pathB, withIntermediateDirectories: true)
        let b = NotebookFolder(pathB, device: Self.deviceB)
        try Self.syncOneWay(a.path, b.path, known: [])
        let db = try b.read().document
        db.addNote(title: "B1")
        try b.add(db)
        try Self.syncOneWay(b.path, a.path, known: [])
        // Both hold A's root and B's root. B appends to its tree, not yet synced; A compacts.
        let known = Set(try Self.chunks(a.path))
        let db2 = try b.read().document
        db2.addNote(title: "B2")
        try b.add(db2)
        let da = try a.read().document
        da.addNote(title: "A1")
        try a.add(da)
        _ = try a.compact(grace: 0)
        // The sync tool then carries A's removals and new root to B, and B's chunk to A.
        try Self.syncOneWay(a.path, b.path, known: known)
        try Self.syncOneWay(b.path, a.path, known: known)
        for folder in [a, b] {
            let reading = try folder.read()
            #expect(reading.warnings.isEmpty, "\(reading.warnings)")
            #expect(Self.titles(reading.document) == ["B1", "B2", "A1"])
        }
    }

    @Test("writing another notebook into a folder is refused, with nothing written")
    func anotherNotebookIsNotWritten() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        let before = try Self.chunks(folder.path)
        #expect(throws: FileError.self) { try NotebookFolder(folder.path, device: Self.deviceB).add(Document(title: "Other")) }
        #expect(throws: FileError.self) { try folder.add(Document(title: "Other")) }
        #expect(try Self.chunks(folder.path) == before)
    }

    @Test("an empty chunk file (a sync tool's placeholder) is skipped with a warning, and so is the chunk after it")
    func emptyChunkIsSkipped() throws {
        let dir = try TempDir()
        let folder = try Self.makeFolder(dir)
        var added: [String] = []
        for title in ["One", "Two"] {
            let d = try folder.read().document
            d.addNote(title: title)
            added.append(try #require(try folder.add(d).chunk))
        }
        try dir.write([], "Trip.peernote/\(added[0])")
        let reading = try folder.read()
        #expect(reading.document.title == "Trip" && reading.document.notes.isEmpty)
        #expect(reading.warnings.count == 2)
        #expect(reading.warnings.contains { $0.contains(added[0]) && $0.contains("empty") })
        #expect(reading.warnings.contains { $0.contains(added[1]) && $0.contains("skipped") })
    }
}
