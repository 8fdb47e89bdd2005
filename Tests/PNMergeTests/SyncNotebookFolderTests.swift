import Foundation
@testable import PeerNote
import Testing
import TestSupport

/// `pnmerge sync` with notebook folders, through the built binary: a folder is one copy of its
/// notebook, grouped with single files and conflict copies by document; it gains a chunk and
/// never loses one; sync tools' conflict copies of chunk files are folded in and removed.
@Suite("sync with notebook folders", .serialized)
struct SyncNotebookFolderTests {
    /// The device the tool writes as in these tests.
    static let toolDevice = "bbbbbbbb"

    static var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        for key in ["VISUAL", "EDITOR"] { env.removeValue(forKey: key) }
        env["NO_COLOR"] = "1"
        env["PEERNOTE_DEVICE"] = toolDevice
        return env
    }

    static func sync(_ args: [String]) throws -> RunResult {
        try Tool.pnmerge.require().run(["sync"] + args, environment: environment)
    }

    static func chunks(_ folder: String) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: folder).filter { NotebookFolder.ChunkName($0) != nil })
    }

    /// Everything in a folder tree but hidden files (a sync's lock and temporary files are elsewhere or hidden).
    static func visible(_ root: String) throws -> [String: [UInt8]] {
        try snapshot(root).filter { !$0.key.split(separator: "/").contains { $0.hasPrefix(".") } }
    }

    @Test("a notebook folder is one copy of its notebook: grouped with a single file and a conflict copy, it gains one chunk and keeps every chunk it had")
    func folderGroupedWithFiles() throws {
        let s = try Diverged()
        let laptop = try TempDir(), stick = try TempDir()
        let folder = laptop.path("home.peernote")
        try NotebookFolder.create(at: folder, s.alice, device: "aaaaaaaa")
        let before = try Self.chunks(folder)
        let carol = s.base.fork(author: "carol")
        carol.addNote(title: "From the phone", body: "p")
        let file = try stick.write(s.bob.save(), "home.peernote")
        let copy = try stick.write(carol.save(), "home.sync-conflict-20261126-101010-ABCDEF7.peernote")

        let r = try Self.sync([laptop.path, stick.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.isEmpty, "\(r.err)")
        #expect(r.out.contains("2 copies and 1 conflict copy"), "\(r.out)")
        #expect(r.out.contains("added a chunk to \(folder) (notebook folder): +"), "\(r.out)")
        #expect(r.out.contains("wrote \(file): +"), "\(r.out)")
        #expect(r.out.contains("removed \(copy) (Syncthing conflict copy, merged)"), "\(r.out)")
        let after = try Self.chunks(folder)
        #expect(before.isSubset(of: after), "no chunk is removed")
        #expect(after.count == before.count + 1)
        #expect(after.subtracting(before).allSatisfy { NotebookFolder.ChunkName($0)?.device == Self.toolDevice },
                "this device's first chunk in the folder: its root")
        #expect(!FileManager.default.fileExists(atPath: copy))

        let expected = try s.merged()
        try expected.merge(carol)
        #expect(try Document.open(folder).notebook == expected.notebook)
        #expect(try Document.open(file).notebook == expected.notebook)

        // A second run writes nothing and touches nothing.
        let snapshots = (try Self.visible(laptop.path), try Self.visible(stick.path))
        let again = try Self.sync([laptop.path, stick.path])
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out == "1 notebook in 1 file and 1 notebook folder: 0 written, 2 already up to date, 0 conflict copies removed.\n", "\(again.out)")
        #expect(try Self.visible(laptop.path) == snapshots.0)
        #expect(try Self.visible(stick.path) == snapshots.1)
    }

    @Test("--json names the notebook folder as a copy, with the chunk it gained")
    func folderInJSON() throws {
        let s = try Diverged()
        let dir = try TempDir()
        let folder = dir.path("home.peernote")
        try NotebookFolder.create(at: folder, s.alice, device: "aaaaaaaa")
        try FileManager.default.createDirectory(atPath: dir.path("elsewhere"), withIntermediateDirectories: true)
        _ = try dir.write(s.bob.save(), "elsewhere/home.peernote")
        let r = try Self.sync(["--json", dir.path])
        #expect(r.status == 0, "\(r.err)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let notebooks = try #require(json["notebooks"] as? [[String: Any]])
        #expect(notebooks.count == 1)
        #expect(notebooks.first?["copies"] as? Int == 2)
        let files = try #require(notebooks.first?["files"] as? [[String: Any]])
        let entry = try #require(files.first { $0["file"] as? String == folder }, "\(r.out)")
        #expect(entry["folder"] as? Bool == true)
        #expect(entry["action"] as? String == "written")
        let chunk = try #require(entry["chunk"] as? String)
        #expect(try Self.chunks(folder).contains(chunk))
        let other = try #require(files.first { $0["file"] as? String != folder })
        #expect(other["folder"] as? Bool == false)
        #expect(json["folderWarnings"] as? [String] == [])
        #expect(json["filesFound"] as? Int == 2 && json["foldersFound"] as? Int == 1, "a folder is one copy found: \(r.out)")
    }

    /// A folder with this device's root and one chunk after it, and the bytes another device's
    /// different chunk after the same root would hold (what a sync tool keeps as a conflict copy
    /// of the first chunk, if two devices ever wrote one name).
    static func folderWithRival(_ dir: TempDir) throws -> (folder: String, chunk: String, rival: [UInt8], expected: Notebook) {
        let s = try Diverged()
        let folder = dir.path("home.peernote")
        try NotebookFolder.create(at: folder, s.base, device: "aaaaaaaa")
        let root = try #require(try Self.chunks(folder).first)
        let rootBytes = try FileStore.read(folder + "/" + root)
        let mine = try Document.load(rootBytes)
        try mine.merge(s.alice)
        let added = try NotebookFolder(folder, device: "aaaaaaaa").add(mine, autoCompact: false)
        let chunk = try #require(added.chunk)
        let theirs = try Document.load(rootBytes)
        try theirs.merge(s.bob)
        let chain = theirs.save(.incremental)
        #expect(chain.starts(with: rootBytes) && chain.count > rootBytes.count)
        return (folder, chunk, Array(chain[rootBytes.count...]), try s.merged().notebook)
    }

    @Test("a sync tool's conflict copy of a chunk is folded in as a new chunk, then removed; no chunk is removed")
    func chunkConflictCopyFolded() throws {
        let dir = try TempDir()
        let (folder, chunk, rival, expected) = try Self.folderWithRival(dir)
        let stem = String(chunk.dropLast(".pnchunk".count))
        let copy = folder + "/" + stem + ".sync-conflict-20261126-101010-ABCDEF7.pnchunk"
        try Data(rival).write(to: URL(fileURLWithPath: copy))
        let before = try Self.chunks(folder)
        #expect(try Document.open(folder).notebook != expected, "the copy's changes are not read from the folder before the sync")

        let r = try Self.sync([dir.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.isEmpty, "a copy that is folded is not warned of: \(r.err)")
        #expect(r.out.contains("1 copy and 1 conflict copy"), "\(r.out)")
        #expect(r.out.contains("added a chunk to \(folder) (notebook folder): +"), "\(r.out)")
        #expect(r.out.contains("removed \(copy) (Syncthing conflict copy, merged)"), "\(r.out)")
        #expect(!FileManager.default.fileExists(atPath: copy))
        let after = try Self.chunks(folder)
        #expect(before.isSubset(of: after))
        #expect(after.count == before.count + 1)
        let added = try #require(after.subtracting(before).first)
        #expect(NotebookFolder.owners(after.compactMap(NotebookFolder.ChunkName.init))[String(added.split(separator: ".")[1])] == Self.toolDevice,
                "the new chunk is in this device's tree")
        #expect(try Document.open(folder).notebook == expected)
    }

    @Test("dry run and --keep: a chunk's conflict copy is reported but the folder is not written (dry run) or the copy stays (--keep)")
    func chunkConflictCopyDryRunAndKeep() throws {
        for keep in [false, true] {
            let dir = try TempDir()
            let (folder, chunk, rival, expected) = try Self.folderWithRival(dir)
            let copy = folder + "/" + chunk + "~"
            try Data(rival).write(to: URL(fileURLWithPath: copy))
            let before = try snapshot(dir.path)
            let dry = try Self.sync(["--dry-run", dir.path])
            #expect(dry.status == 0, "\(dry.err)")
            #expect(dry.out.contains("would add a chunk to \(folder) (notebook folder): +"), "\(dry.out)")
            #expect(dry.out.contains("would remove \(copy) (rsync backup, merged)"), "\(dry.out)")
            #expect(try snapshot(dir.path) == before)
            guard keep else { continue }
            let r = try Self.sync(["--keep", dir.path])
            #expect(r.status == 0, "\(r.err)")
            #expect(r.out.contains("kept (--keep): \(copy)"), "\(r.out)")
            #expect(FileManager.default.fileExists(atPath: copy))
            #expect(try Document.open(folder).notebook == expected)
        }
    }

    @Test("a conflict copy of a chunk whose parent is not in the folder is left alone and reported (exit 65)")
    func chunkCopyWithoutParent() throws {
        let dir = try TempDir()
        let (folder, _, rival, _) = try Self.folderWithRival(dir)
        let missingParent = String(repeating: "1", count: 32), own = String(repeating: "2", count: 32)
        let copy = folder + "/\(missingParent).\(own).sync-conflict-20261126-101010-ABCDEF7.pnchunk"
        try Data(rival).write(to: URL(fileURLWithPath: copy))
        let before = try snapshot(dir.path)
        let r = try Self.sync([dir.path])
        #expect(r.status == 65, "\(r.out)\(r.err)")
        #expect(r.err.contains("pnmerge: \(copy): a copy of chunk \(missingParent).\(own).pnchunk, whose parent chunk is not in the folder"), "\(r.err)")
        #expect(try snapshot(dir.path) == before)
    }

    @Test("a damaged chunk in a folder is warned of with its salvage command; the rest of the folder still syncs and the chunk stays")
    func damagedChunkWarned() throws {
        let s = try Diverged()
        let dir = try TempDir()
        let folder = dir.path("home.peernote")
        try NotebookFolder.create(at: folder, s.base, device: "aaaaaaaa")
        let mine = try Document.open(folder)
        try mine.merge(s.alice)
        let chunk = try #require(try NotebookFolder(folder, device: "aaaaaaaa").add(mine, autoCompact: false).chunk)
        var bytes = try FileStore.read(folder + "/" + chunk)
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + chunk))
        try FileManager.default.createDirectory(atPath: dir.path("other"), withIntermediateDirectories: true)
        let file = try dir.write(s.bob.save(), "other/home.peernote")
        let r = try Self.sync([dir.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.contains("pnmerge: warning: \(folder)/\(chunk): damaged or incomplete"), "\(r.err)")
        #expect(r.err.contains("pnmerge salvage"), "\(r.err)")
        #expect(r.out.contains("added a chunk to \(folder) (notebook folder)"), "\(r.out)")
        // The file had every change the folder could give (the damaged chunk's are not read).
        #expect(r.out.contains("1 written, 1 already up to date"), "\(r.out)")
        #expect(try Document.open(folder).notebook == Document.open(file).notebook)
        #expect(try FileStore.read(folder + "/" + chunk) == bytes, "the damaged chunk is never removed or rewritten")
    }

    @Test("a notebook folder in a Syncthing folder gets no hint; a single file beside it does")
    func hintSkipsFolders() throws {
        let s = try Diverged()
        let dir = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.path(".stfolder"), withIntermediateDirectories: true)
        try NotebookFolder.create(at: dir.path("home.peernote"), s.alice, device: "aaaaaaaa")
        let r = try Self.sync([dir.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(!r.out.contains("Hint:"), "\(r.out)")
        let work = Document(title: "Work", author: "ann")
        let file = try dir.write(work.save(), "work.peernote")
        let h = try Self.sync(["--json", dir.path])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(h.out.utf8)) as? [String: Any])
        let hint = try #require(json["syncedFolder"] as? [String: Any])
        #expect(hint["singleFiles"] as? [String] == [file])
    }
}

/// `pnmerge sync --convert`: single files the synced-folder hint names become notebook folders
/// of the same name.
@Suite("sync --convert", .serialized)
struct SyncConvertTests {
    static func hidden(_ dir: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(".") && $0 != ".stfolder" }.sorted()
    }

    @Test("--convert folds the conflict copy, then makes the file a notebook folder of the same name holding every change; no file is left behind")
    func convertsInPlace() throws {
        let s = try Diverged()
        let dir = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.path(".stfolder"), withIntermediateDirectories: true)
        let trip = try dir.write(s.alice.save(), "trip.peernote")
        _ = try dir.write(s.bob.save(), "trip.sync-conflict-20261126-101010-ABCDEF7.peernote")
        let work = try dir.write(Document(title: "Work", author: "ann").save(), "work.peernote")

        let dry = try SyncNotebookFolderTests.sync(["--convert", "--dry-run", dir.path])
        #expect(dry.status == 0, "\(dry.err)")
        #expect(dry.out.contains("would convert \(trip) into a notebook folder of the same name"), "\(dry.out)")
        #expect(!NotebookFolder.isFolder(trip))

        let r = try SyncNotebookFolderTests.sync(["--convert", dir.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("Converted into notebook folders:"), "\(r.out)")
        #expect(r.out.contains("converted \(trip) into a notebook folder of the same name (root chunk "), "\(r.out)")
        #expect(r.out.contains("the file was removed once the folder was read back holding all of it"), "\(r.out)")
        #expect(!r.out.contains("Hint:"), "every file the hint named was converted: \(r.out)")
        for path in [trip, work] {
            #expect(NotebookFolder.isFolder(path), "\(path)")
            #expect(try SyncNotebookFolderTests.chunks(path).count == 1)
        }
        #expect(try Document.open(trip).notebook == s.merged().notebook)
        #expect(try Document.open(work).title == "Work")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasPrefix(".") }.sorted() == ["trip.peernote", "work.peernote"])
        #expect(try Self.hidden(dir.path) == [], "no kept file and no staging folder is left")

        // Afterwards: a second run has nothing to do and no hint.
        let again = try SyncNotebookFolderTests.sync(["--convert", dir.path])
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out == "2 notebooks in 2 notebook folders: 0 written, 2 already up to date, 0 conflict copies removed.\n", "\(again.out)")
    }

    @Test("--convert leaves a file it cannot read as it was, and the hint still names it")
    func damagedNotConverted() throws {
        let dir = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.path(".stfolder"), withIntermediateDirectories: true)
        let s = try Diverged()
        var bytes = s.alice.save()
        bytes.removeLast(7)
        let broken = try dir.write(bytes, "broken.peernote")
        let good = try dir.write(s.bob.save(), "good.peernote")
        let r = try SyncNotebookFolderTests.sync(["--convert", dir.path])
        #expect(r.status == 65, "\(r.out)\(r.err)")
        #expect(try FileStore.read(broken) == bytes)
        #expect(NotebookFolder.isFolder(good))
        #expect(r.out.contains("Hint: \(broken) is a single-file notebook in a folder Syncthing syncs"), "\(r.out)")
    }
}
