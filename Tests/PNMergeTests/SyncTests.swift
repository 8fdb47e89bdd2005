import Foundation
@testable import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PNMergeCommands

/// Every file under a folder (hidden ones too) with its bytes; symbolic links as their target text.
func snapshot(_ root: String) throws -> [String: [UInt8]] {
    var out: [String: [UInt8]] = [:]
    guard let e = FileManager.default.enumerator(atPath: root) else { return out }
    while let rel = e.nextObject() as? String {
        let path = root + "/" + rel
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        switch attributes[.type] as? FileAttributeType {
        case .typeRegular?: out[rel] = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        case .typeSymbolicLink?: out[rel] = Array(try FileManager.default.destinationOfSymbolicLink(atPath: path).utf8)
        case .typeDirectory?: out[rel + "/"] = []
        default: out[rel] = Array("special".utf8)
        }
    }
    return out
}

/// The canonical bytes of the document in a file: equal exactly when two copies hold the same changes.
func canonical(_ path: String) throws -> [UInt8] {
    try Document.load(try FileStore.read(path)).save(.compact)
}

@Suite("sync (folders, USB sticks, synced folders)")
struct SyncTests {
    static let conflictCopyNames: [(name: String, tool: String)] = [
        ("notes.sync-conflict-20240301-101530-ABCDEF7.peernote", "Syncthing"),
        ("notes (Bob's conflicted copy 2024-03-01).peernote", "Dropbox"),
        ("notes (Bob's conflicted copy 2024-03-01 (1)).peernote", "Dropbox"),
        ("notes (conflicted copy 2024-03-01 101530).peernote", "Nextcloud"),
        ("notes_conflict-20240301-101530.peernote", "Nextcloud"),
        ("notes (conflict_on_2024-03-01).peernote", "Unison"),
        ("notes (conflict #1_on_2024-03-01).peernote", "Unison"),
        ("notes.peernote~", "rsync"),
        // Copies of conflict copies (syncthing issue #1658) and of each other: every marker is stripped.
        ("notes.sync-conflict-20261124-101010-DEV3AAA.sync-conflict-20261124-101011-DEV1BBB.peernote", "Syncthing"),
        ("notes.sync-conflict-20261124-101010-DEV3AAA.sync-conflict-20261124-101011-peernote.peernote", "interrupted write"),
        ("notes (Bob's conflicted copy 2024-03-01) (Carol's conflicted copy 2024-03-02).peernote", "Dropbox"),
        ("notes.sync-conflict-20240301-101530-ABCDEF7 (Bob's conflicted copy 2024-03-01).peernote", "Dropbox"),
        ("notes (Bob's conflicted copy 2024-03-01).sync-conflict-20240301-101530-ABCDEF7.peernote", "Syncthing"),
        ("notes_conflict-20240301-101530_conflict-20240302-090000.peernote", "Nextcloud"),
        ("notes (conflict_on_2024-03-01) (conflict #1_on_2024-03-02).peernote", "Unison"),
        ("notes.sync-conflict-20240301-101530-ABCDEF7.peernote~", "rsync"),
        ("notes.peernote~~", "rsync"),
    ]

    @Test("File names: conflict copies of each sync tool are recognised; look-alikes are notebooks")
    func names() {
        for (name, tool) in Self.conflictCopyNames {
            guard case .conflictCopy(let original, let label) = SyncName.classify(name) else {
                Issue.record("\(name) not recognised as a \(tool) conflict copy")
                continue
            }
            #expect(original == "notes.peernote", "\(name)")
            #expect(label.description.contains(tool), "\(name): \(label)")
        }
        #expect(SyncName.classify("my notes (2024-03-01).peernote") == .notebook)
        #expect(SyncName.classify("Meeting (conflict resolution).peernote") == .notebook, "no date: a title, not a copy")
        #expect(SyncName.classify("notes.sync-conflict-2024.peernote") == .notebook)
        #expect(SyncName.classify("a (b) (Dropbox's conflicted copy 2024-01-02).peernote") == .conflictCopy(original: "a (b).peernote", tool: .dropboxOrNextcloud))
        #expect(SyncName.classify("notes.peernote") == .notebook)
        #expect(SyncName.classify(".peernote") == nil)
        #expect(SyncName.classify("notes.peernote.bak") == nil)
        #expect(SyncName.classify("notes.txt") == nil)
        #expect(SyncName.classify("notes.txt~") == nil)
        #expect(SyncName.classify(".peernote~") == nil)
        #expect(SyncName.classify("a (b) (Dropbox's conflicted copy 2024-01-02) (Carol's conflicted copy 2024-01-03).peernote") == .conflictCopy(original: "a (b).peernote", tool: .dropboxOrNextcloud),
                "a copy of a copy: both markers go, the title's parentheses stay")
    }

    @Test("A conflict copy of a conflict copy (syncthing #1658) merges into the notebook, with the copy it was made from, and both are removed; without the notebook both are kept")
    func nestedConflictCopies() throws {
        let binary = try Binary.require()
        let s = try Diverged()
        let carol = s.bob.fork(author: "carol")
        carol.clock = { at(10, 9) }
        carol.addNote(title: "From d3", body: "c")
        let outer = "notes.sync-conflict-20261124-101010-DEV3AAA.sync-conflict-20261124-101011-DEV1BBB.peernote"
        let middle = "notes.sync-conflict-20261124-101010-DEV3AAA.peernote"
        for withMiddle in [false, true] {
            let dir = try TempDir()
            let notes = try dir.write(s.alice.save(), "notes.peernote")
            let nested = try dir.write(carol.save(), outer)
            let inner = withMiddle ? try dir.write(s.bob.save(), middle) : nil
            let r = try binary.run(["sync", dir.url.path])
            #expect(r.status == 0, "\(r.err)")
            #expect(r.err.isEmpty, "\(r.err)")
            #expect(r.out.contains("wrote \(notes): +"), "\(r.out)")
            #expect(r.out.contains("removed \(nested) (Syncthing conflict copy, merged)"), "\(r.out)")
            if let inner { #expect(r.out.contains("removed \(inner) (Syncthing conflict copy, merged)"), "\(r.out)") }
            #expect(r.out.contains("\(withMiddle ? 2 : 1) conflict cop\(withMiddle ? "ies" : "y") removed"), "\(r.out)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { !$0.hasPrefix(".") } == ["notes.peernote"])
            let merged = try s.merged()
            try merged.merge(carol)
            #expect(try Document.load(dir.bytes("notes.peernote")).notebook == merged.notebook)
            // A second run finds nothing left to do.
            let again = try binary.run(["sync", dir.url.path])
            #expect(again.status == 0, "\(again.err)")
            #expect(again.out == "1 notebook in 1 file: 0 written, 1 already up to date, 0 conflict copies removed.\n", "\(again.out)")
        }

        // No notebook beside them: the copy and the copy of the copy are both kept, for the
        // notebook's own name (never merged into one another, which would make a notebook of a copy).
        let lone = try TempDir()
        let nested = try lone.write(carol.save(), outer)
        let inner = try lone.write(s.bob.save(), middle)
        let before = try snapshot(lone.url.path)
        let l = try binary.run(["sync", lone.url.path])
        #expect(l.status == 0, "\(l.err)")
        for copy in [nested, inner] {
            #expect(l.out.contains("kept: there is no notes.peernote beside it"), "\(l.out)")
            #expect(l.out.contains(": \(copy)\n"), "\(l.out)")
        }
        #expect(l.out.contains("2 kept"), "\(l.out)")
        #expect(try snapshot(lone.url.path) == before)
    }

    @Test("A conflict copy of each naming pattern is merged into the notebook beside it, then removed (kept with --keep)",
          arguments: SyncTests.conflictCopyNames.map(\.name))
    func conflictCopy(name: String) throws {
        for keep in [false, true] {
            let dir = try TempDir()
            let s = try Diverged()
            let notes = try dir.write(s.alice.save(), "notes.peernote")
            let copy = try dir.write(s.bob.save(), name)
            let copyBytes = try dir.bytes(name)
            let r = pnmerge(["sync", dir.url.path] + (keep ? ["--keep"] : []))
            #expect(r.status == 0, "\(name): \(r.err)")
            #expect(r.err.isEmpty, "\(r.err)")
            let after = try dir.bytes("notes.peernote")
            #expect(try Document.load(after).notebook == s.merged().notebook, "\(name)")
            #expect(after == (try s.merged().save(.compact)), "not written in canonical form")
            #expect(r.out.contains("wrote \(notes): +4 changes (bob 4)"), "\(r.out)")
            if keep {
                #expect(try dir.bytes(name) == copyBytes)
                #expect(r.out.contains("kept (--keep): \(copy)"), "\(r.out)")
            } else {
                #expect(!FileManager.default.fileExists(atPath: copy), "\(name)")
                #expect(r.out.contains("removed \(copy) ("), "\(r.out)")
                #expect(r.out.contains("1 conflict copy removed"), "\(r.out)")
            }
        }
    }

    @Test("A conflict copy another program removes or rewrites while sync runs: gone is reported as gone, a rewritten one is kept")
    func conflictCopyChangedMeanwhile() throws {
        for rewrite in [false, true] {
            let dir = try TempDir()
            let s = try Diverged()
            let notes = try dir.write(s.alice.save(), "notes.peernote")
            let copy = try dir.write(s.bob.save(), "notes.sync-conflict-20240301-101530-ABCDEF7.peernote")
            // What a second sync (or the sync client) does between the merge and the removal.
            let carol = try Document.load(s.bob.save())
            carol.author = "carol"
            _ = carol.addNote(title: "Late")
            let rewritten = carol.save()
            var seen: [String] = []
            let report = try FolderSync.run([dir.url.path], beforeRemoving: { path in
                seen.append(path)
                if rewrite { try? FileStore.writeAtomically(rewritten, to: path) } else { _ = unlink(path) }
            })
            #expect(seen == [copy])
            #expect(report.problems.isEmpty, "\(report.problems.map(SyncText.problem))")
            #expect(report.removed == 0)
            let actions = report.notebooks.flatMap(\.actions).flatMap { SyncText.action($0, dryRun: false, style: RenderStyle(color: false), verbose: false) }
                .map { $0.hasPrefix("  ") ? String($0.dropFirst(2)) : $0 }
            #expect(try Document.load(try FileStore.read(notes)).notebook == s.merged().notebook, "the notebook has the copy's changes")
            if rewrite {
                #expect(report.kept == 1)
                #expect(actions.contains("kept: changed while syncing (run sync again): \(copy)"), "\(actions)")
                #expect(try FileStore.read(copy) == rewritten, "the rewritten copy is left for the next sync")
            } else {
                #expect(report.kept == 0)
                #expect(actions.contains("gone: removed meanwhile by another program (its changes are merged): \(copy)"), "\(actions)")
                #expect(!FileManager.default.fileExists(atPath: copy))
            }
        }
    }

    @Test("A conflict copy of a different notebook, or a damaged one, is reported and never removed")
    func badConflictCopies() throws {
        let dir = try TempDir()
        let s = try Diverged()
        let notes = try dir.write(s.alice.save(), "notes.peernote")
        let notesBytes = try dir.bytes("notes.peernote")
        let stranger = try dir.write(unrelatedDocument().save(), "notes.sync-conflict-20240301-101530-ABCDEF7.peernote")
        let strangerBytes = try FileStore.read(stranger)
        let r = pnmerge(["sync", dir.url.path])
        #expect(r.status == ExitStatus.unrelated.rawValue, "\(r.err)")
        #expect(r.err.contains("\(stranger): a Syncthing conflict copy of \(notes), but a different notebook"), "\(r.err)")
        #expect(try FileStore.read(stranger) == strangerBytes)
        #expect(try dir.bytes("notes.peernote") == notesBytes)

        let dir2 = try TempDir()
        _ = try dir2.write(s.alice.save(), "notes.peernote")
        let damaged = try dir2.write(Array(s.bob.save().dropLast(4)), "notes (conflicted copy 2024-03-01 101530).peernote")
        let damagedBytes = try FileStore.read(damaged)
        let d = pnmerge(["sync", dir2.url.path])
        #expect(d.status == ExitStatus.invalidInput.rawValue)
        #expect(d.err.contains("pnmerge: \(damaged): offset "), "\(d.err)")
        #expect(d.err.contains("left alone"))
        #expect(try FileStore.read(damaged) == damagedBytes)

        // A damaged copy whose start is intact: the line says how to get its changes back.
        let loaded = try Document.load(s.alice.save())
        loaded.addNote(title: "appended", body: "x")
        let appended = loaded.save(.incremental)
        let dir3 = try TempDir()
        _ = try dir3.write(s.alice.save(), "notes.peernote")
        let partial = try dir3.write(Array(appended.dropLast(4)), "notes.sync-conflict-20240301-101530-ABCDEFG.peernote")
        let p = pnmerge(["sync", dir3.url.path])
        #expect(p.status == ExitStatus.invalidInput.rawValue)
        #expect(p.err.contains("left alone; 'pnmerge salvage \(partial) -o NEW.peernote' recovers its "), "\(p.err)")
    }

    @Test("A kept conflict copy says why: no other copy at all, a symbolic link beside it, or read-only; a copy an interrupted write kept aside is named so, and an rsync backup gets its article")
    func keptCopyReasons() throws {
        let s = try Diverged()
        // Alone: its changes are in no other file, and sync must not say they went elsewhere.
        let lone = try TempDir()
        let loneCopy = try lone.write(s.bob.save(), "notes.sync-conflict-20240301-101530-ABCDEF7.peernote")
        let l = pnmerge(["sync", lone.url.path])
        #expect(l.status == 0, "\(l.err)")
        #expect(l.out.contains("kept: there is no notes.peernote beside it, and no other copy of this notebook (its changes are only in this file): \(loneCopy)"), "\(l.out)")
        #expect(FileManager.default.fileExists(atPath: loneCopy))

        // Beside a symbolic link (not followed), with another copy of the notebook elsewhere in the folder.
        let linked = try TempDir(), outside = try TempDir()
        let target = try outside.write(s.alice.save(), "notes.peernote")
        try FileManager.default.createDirectory(atPath: linked.path("sub"), withIntermediateDirectories: true)
        _ = try linked.write(s.alice.save(), "sub/other.peernote")
        try FileManager.default.createSymbolicLink(atPath: linked.path("notes.peernote"), withDestinationPath: target)
        let linkedCopy = try linked.write(s.bob.save(), "notes.sync-conflict-20240301-101530-ABCDEF7.peernote")
        let k = pnmerge(["sync", linked.url.path])
        #expect(k.status == 0, "\(k.err)")
        #expect(k.out.contains("kept: notes.peernote beside it is a symbolic link, not followed: \(linkedCopy)"), "\(k.out)")

        // Read-only: merged, then left alone as every write leaves a read-only file.
        let ro = try TempDir()
        let notes = try ro.write(s.alice.save(), "notes.peernote")
        let roCopy = try ro.write(s.bob.save(), "notes (conflicted copy 2024-03-01 101530).peernote")
        #expect(chmod(roCopy, 0o444) == 0)
        let r = pnmerge(["sync", ro.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("kept: read-only (its changes are merged; remove it yourself): \(roCopy)"), "\(r.out)")
        #expect(FileManager.default.fileExists(atPath: roCopy))
        #expect(try Document.load(FileStore.read(notes)).notebook == s.merged().notebook)

        // The name FileStore gives a version it kept aside, and rsync's backup of a different notebook.
        #expect(SyncName.classify("notes.sync-conflict-20261123-101530-peernote.peernote") == .conflictCopy(original: "notes.peernote", tool: .keptAside))
        #expect(SyncName.classify("notes.sync-conflict-20261123-101530-peernote2.peernote") == .conflictCopy(original: "notes.peernote", tool: .keptAside), "a second one kept in the same second")
        #expect(SyncName.classify("notes.sync-conflict-20261123-101530-peernoteX.peernote") == .conflictCopy(original: "notes.peernote", tool: .syncthing))
        let other = try TempDir()
        let mine = try other.write(s.alice.save(), "notes.peernote")
        let backup = try other.write(unrelatedDocument().save(), "notes.peernote~")
        let u = pnmerge(["sync", other.url.path])
        #expect(u.err.contains("\(backup): an rsync backup of \(mine), but a different notebook"), "\(u.err)")
    }

    @Test("Copies are grouped by document id, not name; unrelated notebooks at the same place are reported and left alone")
    func groupingAndUnrelated() throws {
        let laptop = try TempDir(), usb = try TempDir()
        let s = try Diverged()
        // Same document under different names: merged.
        _ = try laptop.write(s.alice.save(), "home.peernote")
        _ = try usb.write(s.bob.save(), "renamed on the stick.peernote")
        // Different documents under one name: left alone.
        let workA = try laptop.write(unrelatedDocument().save(), "work.peernote")
        let other = Document(title: "Other work", author: "eve")
        other.addNote(title: "x", body: "y")
        let workB = try usb.write(other.save(), "work.peernote")
        let a = try FileStore.read(workA), b = try FileStore.read(workB)

        let r = pnmerge(["sync", laptop.url.path, usb.url.path])
        #expect(r.status == ExitStatus.unrelated.rawValue, "\(r.err)")
        #expect(r.err.contains(workA) && r.err.contains(workB), "\(r.err)")
        #expect(r.err.contains("different documents with no shared history"), "\(r.err)")
        #expect(try FileStore.read(workA) == a)
        #expect(try FileStore.read(workB) == b)
        let merged = try s.merged().notebook
        #expect(try Document.load(laptop.bytes("home.peernote")).notebook == merged)
        #expect(try Document.load(usb.bytes("renamed on the stick.peernote")).notebook == merged)
    }

    @Test("A damaged file is reported and left alone while the rest syncs (exit 65)")
    func damagedLeftAlone() throws {
        let a = try TempDir(), b = try TempDir()
        let s = try Diverged()
        _ = try a.write(s.alice.save(), "notes.peernote")
        _ = try b.write(s.bob.save(), "notes.peernote")
        var flipped = s.alice.save()
        flipped[flipped.count / 2] ^= 0x10
        let broken = try b.write(flipped, "broken.peernote")
        let brokenBytes = try FileStore.read(broken)
        let r = pnmerge(["sync", a.url.path, b.url.path])
        #expect(r.status == ExitStatus.invalidInput.rawValue)
        #expect(r.err.split(separator: "\n").count == 1)
        #expect(r.err.contains("broken.peernote: offset "), "\(r.err)")
        #expect(try FileStore.read(broken) == brokenBytes)
        #expect(try canonical(a.path("notes.peernote")) == canonical(b.path("notes.peernote")))
        #expect(r.out.contains("2 written"), "\(r.out)")
    }

    @Test("Symbolic links are not followed: a notebook outside the folder is neither read nor written")
    func symlinks() throws {
        let folder = try TempDir(), outside = try TempDir()
        let s = try Diverged()
        let notes = try folder.write(s.alice.save(), "notes.peernote")
        let notesBytes = try FileStore.read(notes)
        let target = try outside.write(s.bob.save(), "notes.peernote")
        let targetBytes = try FileStore.read(target)
        try FileManager.default.createSymbolicLink(atPath: folder.path("link.peernote"), withDestinationPath: target)
        try FileManager.default.createSymbolicLink(atPath: folder.path("elsewhere"), withDestinationPath: outside.url.path)
        let outsideBefore = try snapshot(outside.url.path)

        let r = pnmerge(["sync", folder.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("\(folder.path("link.peernote")): symbolic link, not followed"), "\(r.out)")
        #expect(r.out.contains("\(folder.path("elsewhere")): symbolic link to a folder, not followed"), "\(r.out)")
        #expect(try snapshot(outside.url.path) == outsideBefore)
        #expect(try FileStore.read(target) == targetBytes)
        #expect(try FileStore.read(notes) == notesBytes, "nothing to merge: the only other copy is behind a link")
    }

    @Test("Special files named .peernote are skipped without blocking")
    func specialFiles() throws {
        let folder = try TempDir()
        let s = try Diverged()
        _ = try folder.write(s.alice.save(), "notes.peernote")
        #expect(mkfifo(folder.path("pipe.peernote"), 0o644) == 0)
        let r = pnmerge(["sync", folder.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("pipe.peernote: not a regular file"), "\(r.out)")
    }

    @Test("A .peernote file or folder whose name is not UTF-8 is listed as skipped, reported on stderr, and the run exits 66")
    func namesNotUTF8() throws {
        let a = try TempDir(), b = try TempDir()
        let s = try Diverged()
        let notes = try a.write(s.alice.save(), "notes.peernote")
        let notesBytes = try FileStore.read(notes)
        // The diverged copy, under a Latin-1 name: "notes\xFF.peernote".
        let name: [UInt8] = Array("notes".utf8) + [0xFF] + Array(".peernote".utf8)
        let bobBytes = s.bob.save()
        let bob = try createFile(named: name, in: b.url.path, contents: bobBytes)
        // A folder with such a name (holding a notebook), and a file that is not a notebook, which sync ignores.
        #expect(mkdir((Array(b.url.path.utf8) + Array("/caf".utf8) + [0xE9, 0]).map { CChar(bitPattern: $0) }, 0o755) == 0)
        let inFolder = try createFile(named: Array("caf".utf8) + [0xE9] + Array("/inside.peernote".utf8), in: b.url.path, contents: bobBytes)
        try createFile(named: [0x70, 0x68, 0x6F, 0x74, 0x6F, 0xE9, 0x2E, 0x6A, 0x70, 0x67], in: b.url.path)

        let dry = pnmerge(["sync", "--dry-run", a.url.path, b.url.path])
        #expect(dry.status == ExitStatus.noInput.rawValue, "\(dry.err)")
        #expect(!dry.out.contains("No .peernote files found"), "\(dry.out)")
        #expect(dry.out.contains("in 2 files"), "\(dry.out)")

        let r = pnmerge(["sync", a.url.path, b.url.path])
        #expect(r.status == ExitStatus.noInput.rawValue, "\(r.err)")
        let fileLine = "\(b.url.path)/notes\\xFF.peernote: name is not valid UTF-8 (bytes shown as \\xNN); rename the file to a UTF-8 name to sync it"
        let folderLine = "\(b.url.path)/caf\\xE9: name is not valid UTF-8 (bytes shown as \\xNN); rename the folder to a UTF-8 name to sync the notebooks in it"
        #expect(r.out.contains("Skipped:\n  \(folderLine)\n  \(fileLine)\n"), "\(r.out)")
        #expect(r.err == "pnmerge: \(folderLine); left alone\npnmerge: \(fileLine); left alone\n", "\(r.err)")
        #expect(r.out.contains("1 notebook in 2 files: 0 written, 1 already up to date"), "\(r.out)")
        #expect(r.out.contains("; 2 problems (on standard error)"), "\(r.out)")
        #expect(!r.out.contains("photo"), "a file that is no notebook is not sync's business: \(r.out)")
        // Nothing was written: the skipped copies are as they were, and the other copy did not change.
        #expect(try readFile(at: bob) == bobBytes)
        #expect(try readFile(at: inFolder) == bobBytes)
        #expect(try FileStore.read(notes) == notesBytes)

        // Renamed, it syncs.
        #expect(rename(bob, b.path("notes.peernote")) == 0)
        #expect(rename((Array(b.url.path.utf8) + Array("/caf".utf8) + [0xE9, 0]).map { CChar(bitPattern: $0) }, b.path("cafe")) == 0)
        let renamed = pnmerge(["sync", a.url.path, b.url.path])
        #expect(renamed.status == 0, "\(renamed.err)")
        #expect(try canonical(a.path("notes.peernote")) == canonical(b.path("notes.peernote")))
        #expect(try canonical(b.path("cafe/inside.peernote")) == canonical(b.path("notes.peernote")))
    }

    @Test("--dry-run reports what would happen and changes nothing, byte for byte (no lock files either)")
    func dryRun() throws {
        let a = try TempDir(), b = try TempDir()
        let s = try Diverged()
        _ = try a.write(s.alice.save(), "notes.peernote")
        _ = try b.write(s.bob.save(), "notes.peernote")
        _ = try a.write(s.base.save(), "notes.peernote~")
        let before = (try snapshot(a.url.path), try snapshot(b.url.path))
        let r = pnmerge(["sync", "--dry-run", a.url.path, b.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("would write \(a.path("notes.peernote")): +4 changes (bob 4)"), "\(r.out)")
        #expect(r.out.contains("would write \(b.path("notes.peernote")): +3 changes (alice 3)"), "\(r.out)")
        #expect(r.out.contains("would remove \(a.path("notes.peernote~")) (rsync backup, merged)"), "\(r.out)")
        #expect(r.out.contains("Dry run: nothing was written or removed."))
        #expect(try snapshot(a.url.path) == before.0)
        #expect(try snapshot(b.url.path) == before.1)
    }

    @Test("A killed writer's temporary file (.NAME.tmp-XXXXXX) is no copy: sync never reads it; a young one is left (and named), a stale one removed")
    func temporaryFilesIgnored() throws {
        let a = try TempDir(), b = try TempDir()
        let s = try Diverged()
        _ = try a.write(s.alice.save(), "notes.peernote")
        // A writer killed between writing and renaming leaves a complete document under the temporary name.
        let temp = try a.write(try s.merged().save(.compact), ".notes.peernote.tmp-Kd9x2Q")
        let tempBytes = try a.bytes(".notes.peernote.tmp-Kd9x2Q")
        let alone = pnmerge(["sync", a.url.path])
        #expect(alone.status == 0, "\(alone.err)")
        #expect(alone.out.contains("left \(temp): a write in progress, or less than 10 s old"), "\(alone.out)")
        #expect(!alone.err.contains("tmp-"), "\(alone.err)")
        #expect(try a.bytes("notes.peernote") == s.alice.save(), "nothing merged in from the temporary file")
        #expect(try a.bytes(".notes.peernote.tmp-Kd9x2Q") == tempBytes, "too young to be taken for a leftover")

        // Once stale (its writer is gone), sync removes it under the notebook's lock.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3_600)], ofItemAtPath: temp)
        _ = try b.write(s.bob.save(), "notes.peernote")
        let both = pnmerge(["sync", a.url.path, b.url.path])
        #expect(both.status == 0, "\(both.err)")
        #expect(both.out.contains("removed \(temp)"), "\(both.out)")
        #expect(!FileManager.default.fileExists(atPath: temp))
        #expect(try canonical(a.path("notes.peernote")) == canonical(b.path("notes.peernote")))
        #expect(try Document.load(try a.bytes("notes.peernote")).notebook == s.merged().notebook)
    }

    /// Backdates `path` by an hour: older than the cleanup's minimum age, as a killed writer's file soon is.
    static func backdate(_ path: String) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3_600)], ofItemAtPath: path)
    }

    @Test("What killed writers left beside up-to-date copies (.tmp-, and a .swap- the copy has all of) is removed by a sync that writes nothing; the copies are untouched")
    func leftoversBesideUpToDateCopies() throws {
        let a = try TempDir(), b = try TempDir()
        let s = try Diverged()
        let merged = try s.merged().save(.compact)
        let notesA = try a.write(merged, "notes.peernote")
        let notesB = try b.write(merged, "notes.peernote")
        // Killed while writing its temporary file: part of a file. Killed mid-exchange: the version
        // the copy held before (it has all of it). Killed between the two: its own finished result.
        let partial = try b.write(Array(merged.prefix(merged.count / 2)), ".notes.peernote.tmp-Wtumq1")
        let replaced = try b.write(s.alice.save(.compact), ".notes.peernote.swap-VJenvO")
        let ownResult = try a.write(merged, ".notes.peernote.swap-Ab12Cd")
        for p in [partial, replaced, ownResult] { try Self.backdate(p) }
        // Not ours: another file's, not mkstemp's six characters, and one written just now.
        let others = [try b.write(merged, ".other.peernote.tmp-Wtumq1"), try b.write(merged, ".notes.peernote.tmp-Wtumq1.bak")]
        for p in others { try Self.backdate(p) }
        let young = try b.write(merged, ".notes.peernote.tmp-Young1")
        let before = (try a.bytes("notes.peernote"), try b.bytes("notes.peernote"))

        let dry = pnmerge(["sync", "--dry-run", a.url.path, b.url.path])
        #expect(dry.status == 0, "\(dry.err)")
        #expect(dry.out.contains("would remove \(partial)") && dry.out.contains("would remove \(replaced)") && dry.out.contains("would remove \(ownResult)"), "\(dry.out)")
        #expect(dry.out.contains("3 files left by interrupted writes would be removed"), "\(dry.out)")
        for p in [partial, replaced, ownResult] { #expect(FileManager.default.fileExists(atPath: p), "dry run removed \(p)") }

        let r = pnmerge(["sync", a.url.path, b.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.isEmpty, "\(r.err)")
        #expect(r.out.contains("0 written, 2 already up to date, 0 conflict copies removed, 3 files left by interrupted writes removed."), "\(r.out)")
        for p in [partial, replaced, ownResult] {
            #expect(!FileManager.default.fileExists(atPath: p), "\(p) left")
            #expect(r.out.contains("removed \(p)"), "\(r.out)")
        }
        for p in others { #expect(FileManager.default.fileExists(atPath: p), "\(p) is not a leftover of notes.peernote") }
        #expect(FileManager.default.fileExists(atPath: young), "a young one may be a live writer's")
        #expect(r.out.contains("left \(young): a write in progress"), "\(r.out)")
        #expect(try a.bytes("notes.peernote") == before.0 && b.bytes("notes.peernote") == before.1, "the copies are not written")
        #expect(try canonical(notesA) == canonical(notesB))

        // Nothing left to do: a second run says nothing about leftovers (the young one aside).
        try FileManager.default.removeItem(atPath: young)
        let again = pnmerge(["sync", a.url.path, b.url.path])
        #expect(again.out == "1 notebook in 2 files: 0 written, 2 already up to date, 0 conflict copies removed.\n", "\(again.out)")
    }

    @Test("A .swap- file a killed writer left that holds changes the copy lacks is never removed: sync makes it a conflict copy and merges it into every copy")
    func leftoverSwapWithChangesIsMerged() throws {
        let a = try TempDir(), b = try TempDir()
        let s = try Diverged()
        _ = try a.write(s.alice.save(.compact), "notes.peernote")
        _ = try b.write(s.alice.save(.compact), "notes.peernote")
        // What b's copy held when a writer died mid-exchange: a sync client's copy with bob's changes.
        let foreign = try b.write(s.bob.save(.compact), ".notes.peernote.swap-Ph0ne1")
        try Self.backdate(foreign)

        let dry = pnmerge(["sync", "--dry-run", a.url.path, b.url.path])
        #expect(dry.status == 0, "\(dry.err)")
        #expect(dry.out.contains("would make \(foreign) a conflict copy (it holds changes \(b.path("notes.peernote")) lacks"), "\(dry.out)")
        #expect(try b.bytes(".notes.peernote.swap-Ph0ne1") == s.bob.save(.compact))

        let r = pnmerge(["sync", a.url.path, b.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("made \(foreign) a conflict copy \(b.url.path)/notes.sync-conflict-"), "\(r.out)")
        #expect(!FileManager.default.fileExists(atPath: foreign))
        for dir in [a, b] {
            #expect(try Document.load(dir.bytes("notes.peernote")).notebook == s.merged().notebook, "\(dir.url.path): bob's changes are merged")
        }
        // Merged, the conflict copy goes too: nothing but the notebook is left.
        #expect(try FileManager.default.contentsOfDirectory(atPath: b.url.path) == ["notes.peernote"])
    }

    @Test("Leftovers beside a copy another process is writing are left for a later sync, which does not wait for that writer")
    func leftoversOfALockedCopy() throws {
        let a = try TempDir()
        let s = try Diverged()
        let notes = try a.write(s.alice.save(.compact), "notes.peernote")
        let stale = try a.write(s.alice.save(.compact), ".notes.peernote.tmp-Stale1")
        try Self.backdate(stale)
        do {
            let held = try FileLock(for: notes)
            #expect(held.leftoverCleanup.removed == [stale], "taking the lock cleans up")
        }
        // Left while another process holds the lock (planted after it took it, which cleans up).
        let held = try FileLock(for: notes)
        let stale2 = try a.write(s.alice.save(.compact), ".notes.peernote.tmp-Stale2")
        try Self.backdate(stale2)
        let r = pnmerge(["sync", a.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("left the files beside \(notes): another pnmerge or peernote is writing it"), "\(r.out)")
        #expect(FileManager.default.fileExists(atPath: stale2))
        withExtendedLifetime(held) {}
    }

    @Test("Copies that already have every change are not written; a second sync writes nothing")
    func upToDate() throws {
        let a = try TempDir(), b = try TempDir()
        let s = try Diverged()
        _ = try a.write(s.alice.save(), "notes.peernote")
        _ = try b.write(try s.merged().save(.compact), "notes.peernote")
        let bBytes = try b.bytes("notes.peernote")
        let r = pnmerge(["sync", a.url.path, b.url.path])
        #expect(r.status == 0)
        #expect(r.out.contains("1 written, 1 already up to date"), "\(r.out)")
        #expect(try b.bytes("notes.peernote") == bBytes)
        let snap = (try snapshot(a.url.path), try snapshot(b.url.path))
        let again = pnmerge(["sync", a.url.path, b.url.path])
        #expect(again.status == 0)
        #expect(again.out.contains("0 written, 2 already up to date"), "\(again.out)")
        #expect(try snapshot(a.url.path) == snap.0)
        #expect(try snapshot(b.url.path) == snap.1)
    }

    @Test("Sneakernet: A → USB → B → C → A with edits on every device ends with every copy identical in content")
    func sneakernet() throws {
        let deviceA = try TempDir(), usb = try TempDir(), deviceB = try TempDir(), deviceC = try TempDir()
        let file = "notes.peernote"
        // Device A creates the notebook; the first time, it is copied onto the stick and from there to B and C.
        let created = Document(title: "Shared", author: "ann")
        let plan = created.addNote(title: "Plan", body: "start")
        created.addNote(title: "Shopping", body: "bread")
        try created.write(to: deviceA.path(file), mode: .compact)
        for device in [usb, deviceB, deviceC] {
            try FileManager.default.copyItem(atPath: deviceA.path(file), toPath: device.path(file))
        }
        func edit(_ device: TempDir, _ author: String, _ change: (Document) throws -> Void) throws {
            let d = try Document.open(device.path(file))
            d.author = author
            try change(d)
            try d.write(to: device.path(file))
        }
        func sync(_ device: TempDir) throws {
            let r = pnmerge(["sync", device.url.path, usb.url.path])
            #expect(r.status == 0, "\(r.err)")
            let after = try device.bytes(file)
            #expect(after == (try usb.bytes(file)), "the device and the stick hold different bytes after a sync")
            #expect(after == (try canonical(device.path(file))), "not in canonical form after a sync")
        }
        // Everyone edits offline before the stick comes by.
        try edit(deviceA, "ann") { d in d.addNote(title: "From A", body: "a") }
        try edit(deviceB, "ben") { d in try d.insertText(plan, at: 5, " B") }
        try edit(deviceC, "cat") { d in
            d.setTitle("Shared notebook")
            try d.deleteNote(try d.findNote("Shopping").id)
        }
        try sync(deviceA)
        try sync(deviceB)
        try edit(deviceB, "ben") { d in d.addNote(title: "From B after sync", body: "b") }
        try sync(deviceB)
        try sync(deviceC)
        try edit(deviceC, "cat") { d in try d.insertText(plan, at: 0, "C: ") }
        try sync(deviceC)
        try sync(deviceA)
        try edit(deviceA, "ann") { d in try d.addTag(plan, "done") }
        try sync(deviceA)
        // The stick makes one more round so B and C get what came after them.
        try sync(deviceB)
        try sync(deviceC)

        let copies = [deviceA, usb, deviceB, deviceC].map { $0.path(file) }
        let reference = try canonical(copies[0])
        for copy in copies { #expect(try canonical(copy) == reference, "\(copy)") }
        let notebook = try Document.load(reference).notebook
        #expect(notebook.title == "Shared notebook")
        #expect(notebook.notes.map(\.title) == ["Plan", "From A", "From B after sync"])
        #expect(notebook.notes.first?.body == "C: start B")
        #expect(notebook.notes.first?.tags == ["done"])
        // Nothing left to do anywhere.
        let last = pnmerge(["sync", deviceA.url.path, usb.url.path, deviceB.url.path, deviceC.url.path])
        #expect(last.out.contains("0 written, 4 already up to date"), "\(last.out)")
    }

    @Test("Folders that do not exist are an error before anything is done")
    func missingFolder() throws {
        let a = try TempDir()
        let r = pnmerge(["sync", a.url.path, a.path("missing")])
        #expect(r.status == ExitStatus.noInput.rawValue)
        #expect(r.err == "pnmerge: \(a.path("missing")): No such file or directory\n")
        #expect(pnmerge(["sync"]).status == ExitStatus.usage.rawValue)
        let none = pnmerge(["sync", a.url.path])
        #expect(none.status == 0)
        #expect(none.out.hasPrefix("No .peernote files found in \(a.url.path)."))
    }

    @Test("A failed conversion names no command in the library's words; sync's line adds salvage, or running sync again")
    func conversionFailureWords() {
        let damaged = FileError.doesNotLoad(path: "n.peernote", .invalidDocument(offset: 12, message: "checksum mismatch"))
        let changed = FileError.conversionFailed(path: "n.peernote", .changedMeanwhile)
        #expect(!damaged.description.contains("pnmerge") && !changed.description.contains("sync"), "\(damaged) \(changed)")
        #expect(SyncText.problem(.convertFailed(damaged))
                == "n.peernote: offset 12: checksum mismatch; not changed (repair it first: pnmerge salvage); not converted into a notebook folder (it synced as a single file)")
        #expect(SyncText.problem(.convertFailed(changed))
                == "n.peernote: changed while it was being converted; run sync again; not changed; not converted into a notebook folder (it synced as a single file)")
        let unmade = FileError.conversionFailed(path: "n.peernote", .folderNotMade(errno: EACCES))
        #expect(SyncText.problem(.convertFailed(unmade))
                == "n.peernote: cannot make a folder beside it: \(String(cString: strerror(EACCES))); not changed; not converted into a notebook folder (it synced as a single file)")
    }
}

@Suite("sync with the built binary")
struct SyncBinaryTests {
    @Test("The binary reports a notebook whose name is not UTF-8 as skipped and exits 66 (it was 0, the copy never merged)")
    func binaryNameNotUTF8() throws {
        let bin = try Binary.require()
        let a = try TempDir(), b = try TempDir()
        let s = try Diverged()
        _ = try a.write(s.alice.save(), "notes.peernote")
        try createFile(named: Array("notes".utf8) + [0xFF] + Array(".peernote".utf8), in: b.url.path, contents: s.bob.save())
        let r = try bin.run(["sync", a.url.path, b.url.path])
        #expect(r.status == ExitStatus.noInput.rawValue, "\(r.err)")
        #expect(r.err == "pnmerge: \(b.url.path)/notes\\xFF.peernote: name is not valid UTF-8 (bytes shown as \\xNN); rename the file to a UTF-8 name to sync it; left alone\n")
        #expect(r.out.contains("Skipped:\n  \(b.url.path)/notes\\xFF.peernote: name is not valid UTF-8"), "\(r.out)")
    }

    @Test("The binary syncs a Syncthing folder: conflict copy folded in and removed, summary on stdout, no progress line off a terminal")
    func binarySync() throws {
        let bin = try Binary.require()
        let dir = try TempDir()
        let s = try Diverged()
        _ = try dir.write(s.alice.save(), "notes.peernote")
        _ = try dir.write(s.bob.save(), "notes.sync-conflict-20240301-101530-ABCDEF7.peernote")
        let r = try bin.run(["sync", dir.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.isEmpty, "no progress line when standard error is not a terminal: \(r.err)")
        #expect(r.out.contains("1 conflict copy removed"))
        #expect(try Document.load(dir.bytes("notes.peernote")).notebook == s.merged().notebook)
    }
}
