import Foundation
import Testing
@testable import PeerNote

/// The folder sync and the merge-into-an-output rules, called as an app calls them.
@Suite("Library: folder sync and outputs")
struct FolderSyncTests {
    /// A notebook, a laptop copy with one more note, a phone copy with another.
    static func copies() throws -> (laptop: Document, phone: Document) {
        let base = Document(title: "Trip", author: "base")
        let packing = base.addNote(title: "Packing", body: "socks")
        let laptop = base.fork(author: "laptop")
        _ = laptop.addNote(title: "Tickets", body: "train")
        let phone = base.fork(author: "phone")
        try phone.setBody(packing, "socks, charger")
        return (laptop, phone)
    }

    @Test("A scan tells which notebooks have what killed writers leave beside them from its one reading of each folder, as leftoverCandidates would")
    func scanSeesLeftovers() throws {
        let folder = try FileStoreTests.Folder()
        try FileManager.default.createDirectory(atPath: folder.path + "/sub", withIntermediateDirectories: true)
        let bytes = Document(title: "T", author: "a").save()
        for name in ["a.peernote", "b.peernote", "c.peernote", "sub/d.peernote", "sub/e.peernote"] {
            try FileStore.writeAtomically(bytes, to: folder.path + "/" + name)
        }
        for name in [".a.peernote.tmp-AbC123", ".b.peernote.tmp-AbC12", ".b.peernote.tmp-AbC123.bak", ".c.peernote.x.tmp-AbC123",
                     "sub/.d.peernote.kept-Qwe123", ".e.peernote.swap-Zz9Zz9"] {
            _ = try folder.file(name)
        }
        var scan = FolderScan()
        try scan.scan([folder.path])
        let seen = Dictionary(uniqueKeysWithValues: scan.files.map { ($0.relative, scan.sawLeftovers(of: $0)) })
        #expect(seen == ["a.peernote": true, "b.peernote": false, "c.peernote": false, "sub/d.peernote": true, "sub/e.peernote": false], "\(seen)")
        for file in scan.files {
            #expect(scan.sawLeftovers(of: file) == !FileStore.leftoverCandidates(of: file.path).isEmpty, "\(file.relative)")
        }
    }

    @Test("Sync writes a notebook whose leftover a live writer holds, and cleans up beside it as that write takes the lock once the writer is gone; the others of the folder are written too")
    func syncWritesBesideHeldLeftover() throws {
        let folder = try FileStoreTests.Folder()
        let (laptop, phone) = try Self.copies()
        for side in ["laptop", "usb"] { try FileManager.default.createDirectory(atPath: folder.path + "/" + side, withIntermediateDirectories: true) }
        for name in ["trip", "other"] {
            try FileStore.writeAtomically(laptop.save(.compact), to: folder.path + "/laptop/\(name).peernote")
            try FileStore.writeAtomically(phone.save(.compact), to: folder.path + "/usb/\(name).peernote")
        }
        let held = try folder.file("laptop/.trip.peernote.tmp-Held01")
        let heldFD = open(held, O_RDONLY | O_CLOEXEC)
        try #require(heldFD >= 0 && flock(heldFD, LOCK_EX | LOCK_NB) == 0)
        var released = false
        defer { if !released { close(heldFD) } }
        let report = try FolderSync.run([folder.path + "/laptop", folder.path + "/usb"], progress: { step in
            // The writer lets go once the merges start, after the cleanup before them left its file.
            if case .merging = step, !released { close(heldFD); released = true }
        })
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.written == 4, "\(report)")
        #expect(!FileManager.default.fileExists(atPath: held), "the write of trip.peernote took its lock and removed it")
        let merged = try Document.load(try FileStore.read(folder.path + "/laptop/trip.peernote"))
        #expect(merged.notes.count == 2)
    }

    @Test("Leftovers of a single file that became a notebook folder, beside the folder: one with a change the folder lacks is merged into it, one it has all of is removed")
    func leftoversBesideNotebookFolder() throws {
        let folder = try FileStoreTests.Folder()
        let (laptop, phone) = try Self.copies()
        let nb = folder.path + "/trip.peernote"
        try NotebookFolder.create(at: nb, laptop)
        // A killed write of the file the folder was: a version with the phone's change, and one the folder has.
        let swap = try folder.file(".trip.peernote.swap-Phone1")
        try Data(phone.save(.compact)).write(to: URL(fileURLWithPath: swap))
        let kept = try folder.file(".trip.peernote.kept-Older1")
        try Data(laptop.save()).write(to: URL(fileURLWithPath: kept))
        for p in [swap, kept] { try folder.backdate(p, by: 3_600) }

        let report = try FolderSync.run([folder.path])
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(!FileManager.default.fileExists(atPath: swap) && !FileManager.default.fileExists(atPath: kept), "\(folder.names)")
        let merged = try Document.open(nb)
        let packing = try #require(merged.notes.first { $0.title == "Packing" })
        #expect(packing.body == "socks, charger", "the phone's change, from the leftover, is in the folder")
        #expect(merged.notes.contains { $0.title == "Tickets" })
        #expect(folder.names == ["trip.peernote"], "\(folder.names)")
    }

    @Test("A killed write's version beside a notebook whose name leaves no room for a conflict copy's marks becomes a conflict copy of a shortened name, and is merged",
          arguments: [String(repeating: "n", count: 246) + ".peernote", String(repeating: "é", count: 123) + ".peernote", "x" + String(repeating: "é", count: 122) + ".peernote"])
    func leftoverBesideLongName(name: String) throws {
        let folder = try FileStoreTests.Folder()
        let (laptop, phone) = try Self.copies()
        let nb = folder.path + "/" + name
        try FileStore.writeAtomically(laptop.save(.compact), to: nb)
        let swap = try folder.file(FileStore.temporaryPrefix(forName: name, infix: FileStore.swapInfix) + "Phone1")
        try Data(phone.save(.compact)).write(to: URL(fileURLWithPath: swap))
        try folder.backdate(swap, by: 3_600)

        let cleanup = FileStore.cleanUpLeftovers(of: nb)
        let copy = try #require(cleanup.keptAsConflictCopies.first?.to, "\(cleanup)")
        let copyName = FileStore.lastComponent(of: copy)
        #expect(copyName.utf8.count <= 255 && copyName.hasSuffix(".peernote") && copyName.contains(".sync-conflict-"), "\(copyName)")
        #expect(name.hasPrefix(String(copyName[..<(copyName.range(of: ".sync-conflict-")?.lowerBound ?? copyName.startIndex)])))

        let report = try FolderSync.run([folder.path])
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(folder.names == [name], "\(folder.names)")
        let packing = try #require(try Document.open(nb).notes.first { $0.title == "Packing" })
        #expect(packing.body == "socks, charger")
    }

    @Test("An app syncs two folders and a Syncthing conflict copy through the library and gets a typed report of what each copy received")
    func syncsFolders() throws {
        let folder = try FileStoreTests.Folder()
        let (laptop, phone) = try Self.copies()
        try FileManager.default.createDirectory(atPath: folder.path + "/laptop", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.path + "/usb", withIntermediateDirectories: true)
        try FileStore.writeAtomically(laptop.save(.compact), to: folder.path + "/laptop/trip.peernote")
        try FileStore.writeAtomically(laptop.save(.compact), to: folder.path + "/usb/trip.peernote")
        let copy = folder.path + "/laptop/trip.sync-conflict-20261126-101010-ABCDEF7.peernote"
        try FileStore.writeAtomically(phone.save(.compact), to: copy)

        var steps = 0
        let report = try FolderSync.run([folder.path + "/laptop", folder.path + "/usb"], progress: { _ in steps += 1 })
        #expect(steps > 0)
        #expect(report.problems.isEmpty)
        #expect(report.filesFound == 3 && report.written == 2 && report.removed == 1 && report.upToDate == 0)
        let notebook = try #require(report.notebooks.first)
        #expect(report.notebooks.count == 1 && notebook.title == "Trip" && notebook.copies == 2 && notebook.conflictCopies == 1)
        var wrote: [String] = [], removed: [String] = []
        for action in notebook.actions {
            switch action {
            case .wrote(let update):
                wrote.append(update.path)
                #expect(update.changes == 1 && update.changesByAuthor.map(\.author) == ["phone"])
                #expect(update.bytesWritten.map { $0 > update.bytesBefore } == true)
                #expect(update.diff.changes.count == 1, "the phone's edit of Packing: \(update.diff.changes)")
                if case .edited(_, let after, let fields)? = update.diff.changes.first {
                    #expect(after.title == "Packing" && fields == [.body])
                } else {
                    Issue.record("not an edit: \(update.diff.changes)")
                }
            case .removed(let path, let tool):
                removed.append(path)
                #expect(tool == .syncthing)
            default:
                Issue.record("unexpected \(action)")
            }
        }
        #expect(Set(wrote) == [folder.path + "/laptop/trip.peernote", folder.path + "/usb/trip.peernote"])
        #expect(removed == [copy] && !FileManager.default.fileExists(atPath: copy))
        for path in wrote {
            let notes = try Document.open(path).notebook.notes
            #expect(notes.map(\.title) == ["Packing", "Tickets"] && notes.first?.body == "socks, charger")
        }
        // A second run finds every copy up to date.
        let again = try FolderSync.run([folder.path + "/laptop", folder.path + "/usb"])
        #expect(again.written == 0 && again.upToDate == 2 && again.notebooks.allSatisfy(\.actions.isEmpty))
    }

    @Test("A folder sync reports damaged and unrelated files as typed problems and leaves them as they are; a missing folder is an error")
    func syncProblems() throws {
        let folder = try FileStoreTests.Folder()
        let (laptop, _) = try Self.copies()
        let damaged = folder.path + "/broken.peernote"
        var bytes = laptop.save(.compact)
        bytes[bytes.count / 2] ^= 0xFF
        try FileStore.writeAtomically(bytes, to: damaged)
        let report = try FolderSync.run([folder.path])
        #expect(report.problems.count == 1)
        if case .damaged(let path, _)? = report.problems.first {
            #expect(path == damaged)
        } else {
            Issue.record("\(report.problems)")
        }
        #expect(report.problems.first?.kind == .damaged)
        #expect(try FileStore.read(damaged) == bytes)
        #expect(throws: FolderSyncError.self) { try FolderSync.run([folder.path + "/missing"]) }
        #expect(throws: FolderSyncError.rootNotAFolder(damaged)) { try FolderSync.run([damaged]) }
    }

    @Test("writeAsOutput replaces an output only when the result holds all of it: an earlier result passes, a copy with its own change, another notebook or other bytes are refused and left as they are")
    func outputRules() throws {
        let folder = try FileStoreTests.Folder()
        let (laptop, phone) = try Self.copies()
        let result = try laptop.merged(with: phone).document
        let out = folder.path + "/out.peernote"
        // Missing: created. The same result again, or an older copy: replaced.
        try result.writeAsOutput(result.save(.compact), to: out)
        try result.writeAsOutput(result.save(.compact), to: out)
        try FileStore.writeAtomically(laptop.save(.compact), to: out)
        try result.writeAsOutput(result.save(.compact), to: out)
        #expect(try FileStore.read(out) == result.save(.compact))
        // A copy with a change the result lacks.
        let ahead = result.fork(author: "tablet")
        _ = ahead.addNote(title: "Hotel")
        let aheadBytes = ahead.save(.compact)
        try FileStore.writeAtomically(aheadBytes, to: out)
        #expect { try result.writeAsOutput(result.save(.compact), to: out) } throws: { error in
            guard case OutputError.holdsMore(let path, let changes, let fields) = error else { return false }
            return path == out && changes.map(\.author) == ["tablet"] && fields == 0
        }
        #expect(try FileStore.read(out) == aheadBytes)
        // Another notebook, and bytes that are no notebook.
        let other = Document(title: "Other", author: "x").save(.compact)
        try FileStore.writeAtomically(other, to: out)
        #expect(throws: OutputError.otherNotebook(path: out)) { try result.writeAsOutput(result.save(.compact), to: out) }
        #expect(try FileStore.read(out) == other)
        try FileStore.writeAtomically(Array("not a notebook".utf8), to: out)
        #expect { try result.writeAsOutput(result.save(.compact), to: out) } throws: { error in
            if case OutputError.notANotebook = error { return true } else { return false }
        }
        #expect(try FileStore.read(out) == Array("not a notebook".utf8))
        // A copy this library cannot read (a newer format version) is no proof that it is not
        // this notebook: refused as unreadable here, not as "not a notebook", and left as it is.
        var newer = aheadBytes
        #expect(newer[8] == 0x83 && newer[9] == 0x02)
        newer[9] = 0x04
        try FileStore.writeAtomically(newer, to: out)
        #expect { try result.writeAsOutput(result.save(.compact), to: out) } throws: { error in
            guard case OutputError.cannotReadHere(let path, .unsupportedVersion(4)) = error else { return false }
            let words = "\(error)"
            return path == out && words.contains("holds a notebook of format version 4") && !words.contains("not a copy")
        }
        #expect(try FileStore.read(out) == newer)
    }

    @Test("Write errors carry what happened and name no command; the tools' words add the one that merges a kept change")
    func writeErrorWords() {
        let contended = WriteError.contended(path: "n.peernote", seconds: 60, keptIn: "n.sync-conflict-x-peernote.peernote", notKept: nil, takenOut: [])
        #expect(contended.keptIn == "n.sync-conflict-x-peernote.peernote")
        #expect(!contended.description.contains("pnmerge"), "\(contended)")
        #expect(contended.description.contains("it may be in the file already"), "\(contended)")
        #expect(contended.describe(mergedBy: "pnmerge sync").contains("(pnmerge sync merges it in; it may be in the file already, so do not make it again)"))
        var renamed = WriteError.file(.failed(path: "/real/n.peernote", .rename, errno: ENOSPC), takenOut: [])
        renamed.path = "n.peernote"
        #expect(renamed.description == "n.peernote: rename failed: No space left on device")
        // A message that says the file was not written says where the change went instead, without matching its text.
        let loop = FileError.linkLoop(path: "n.peernote")
        let looping = "is a symbolic link that leads back to itself (\(String(cString: strerror(ELOOP))))"
        #expect(loop.message == looping + "; not written")
        let failed = WriteError.failedAfterChange(loop, keptIn: "copy.peernote", notKept: nil, takenOut: [])
        #expect(failed.description == "n.peernote: \(looping); what was being written is kept in copy.peernote instead")
    }
}
