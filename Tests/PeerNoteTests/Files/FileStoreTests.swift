import Foundation
import Testing
@testable import PeerNote
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stale temporary files: what a writer killed mid-write leaves, and who removes it.
@Suite("File store: temporary files")
struct FileStoreTests {
    final class Folder {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("filestore-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        func file(_ name: String, _ text: String = "partial", age: TimeInterval = 3_600) throws -> String {
            let p = path + "/" + name
            try Data(text.utf8).write(to: URL(fileURLWithPath: p))
            try backdate(p, by: age)
            return p
        }

        func backdate(_ p: String, by age: TimeInterval) throws {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: p)
        }

        var names: Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []) }
    }

    @Test("A write follows links link by link: relative targets beside their link, through linked folders, to a dangling end; a loop is refused, its links left as links")
    func writesThroughLinks() throws {
        let folder = try Folder()
        let fm = FileManager.default
        try fm.createDirectory(atPath: folder.path + "/real/sub", withIntermediateDirectories: true)
        _ = try folder.file("real/nb.peernote", "old")
        try fm.createSymbolicLink(atPath: folder.path + "/linkdir", withDestinationPath: "real/sub")
        try fm.createSymbolicLink(atPath: folder.path + "/real/sub/l1", withDestinationPath: "../nb.peernote")
        try fm.createSymbolicLink(atPath: folder.path + "/top", withDestinationPath: "linkdir/l1")
        #expect(FileStore.linkTarget(folder.path + "/top") == folder.path + "/linkdir/../nb.peernote")
        try FileStore.writeAtomically(Array("new".utf8), to: folder.path + "/top")
        #expect(try String(contentsOfFile: folder.path + "/real/nb.peernote", encoding: .utf8) == "new")
        #expect(try fm.destinationOfSymbolicLink(atPath: folder.path + "/top") == "linkdir/l1", "the links stay links")
        // A dangling end is created.
        try fm.createSymbolicLink(atPath: folder.path + "/dangling", withDestinationPath: "real/made.peernote")
        try FileStore.writeAtomically(Array("made".utf8), to: folder.path + "/dangling")
        #expect(try String(contentsOfFile: folder.path + "/real/made.peernote", encoding: .utf8) == "made")
        // A loop: refused, both links as they were (a rename replaced one of them with a file).
        try fm.createSymbolicLink(atPath: folder.path + "/la", withDestinationPath: "lb")
        try fm.createSymbolicLink(atPath: folder.path + "/lb", withDestinationPath: "la")
        #expect { try FileStore.writeAtomically(Array("x".utf8), to: folder.path + "/la") } throws: { error in
            guard case .linkLoop = error as? FileError else { return false }
            return (error as? FileError)?.message.hasPrefix("is a symbolic link that leads back to itself") == true
        }
        #expect(try fm.destinationOfSymbolicLink(atPath: folder.path + "/la") == "lb")
        #expect(try fm.destinationOfSymbolicLink(atPath: folder.path + "/lb") == "la")
    }

    /// What this process's open file descriptors point to, under `folder` (Linux: /proc/self/fd).
    static func openFiles(under folder: String) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }.filter { $0.hasPrefix(folder + "/") }
    }

    @Test("Writing into a folder that does not exist, or under a file, says so plainly; nothing is created")
    func missingFolder() throws {
        let folder = try Folder()
        let plain = try folder.file("plain.txt", age: 0)
        let cases = [(folder.path + "/nodir/x.peernote", "the folder \(folder.path)/nodir does not exist"),
                     (plain + "/x.peernote", "\(plain) is not a folder")]
        for (path, message) in cases {
            for write in [{ try FileStore.writeAtomically([1, 2, 3], to: path) }, { try FileStore.create([1, 2, 3], at: path) }] as [() throws -> Void] {
                do {
                    try write()
                    Issue.record("\(path) was written")
                } catch let error as FileError {
                    #expect(error.message == message, "\(error)")
                    #expect(error.description.hasPrefix(path), "\(error)")
                }
            }
        }
        #expect(folder.names == ["plain.txt"])
    }

    @Test("A path splits into its directory and last component as NSString split it (the library no longer links it)")
    func pathParts() {
        let cases: [(path: String, directory: String, last: String)] = [
            ("notes.peernote", ".", "notes.peernote"), ("a/notes.peernote", "a", "notes.peernote"),
            ("/tmp/x/notes.peernote", "/tmp/x", "notes.peernote"), ("/notes.peernote", "/", "notes.peernote"),
            ("a//b///c", "a/b", "c"), ("dir/sub/", "dir", "sub"), ("./n", ".", "n"), ("/", "/", "/"), ("", ".", ""),
        ]
        for c in cases {
            #expect(FileStore.directory(of: c.path) == c.directory, "directory of \(c.path)")
            #expect(FileStore.lastComponent(of: c.path) == c.last, "last component of \(c.path)")
            let ns = c.path as NSString
            #expect(FileStore.lastComponent(of: c.path) == ns.lastPathComponent, "NSString agrees on \(c.path)")
            let nsDirectory = ns.deletingLastPathComponent
            #expect(FileStore.directory(of: c.path) == (nsDirectory.isEmpty ? "." : nsDirectory), "NSString agrees on \(c.path)")
        }
    }

    @Test("Taking a document's lock removes its stale temporary files, and nothing else")
    func lockRemovesStaleTemporaries() throws {
        let folder = try Folder()
        let doc = folder.path + "/n.peernote"
        let bytes = Document(title: "T", author: "a").save()
        try FileStore.writeAtomically(bytes, to: doc)
        let stale = try folder.file(".n.peernote.tmp-AbC123")
        let stale2 = try folder.file(".n.peernote.tmp-zz9ZZ9", String(decoding: bytes.prefix(40), as: UTF8.self))
        // Kept: written within the last 10 s, held by a live writer, another document's, not
        // mkstemp's pattern, not a regular file.
        _ = try folder.file(".n.peernote.tmp-Young1", age: 0)
        let held = try folder.file(".n.peernote.tmp-Held01")
        // Close-on-exec: a process another test starts meanwhile would otherwise inherit it, and its lock.
        let heldFD = open(held, O_RDONLY | O_CLOEXEC)
        try #require(heldFD >= 0 && flock(heldFD, LOCK_EX | LOCK_NB) == 0)
        _ = try folder.file(".other.peernote.tmp-AbC123")
        _ = try folder.file(".n.peernote.tmp-AbC123.keep")
        _ = try folder.file(".n.peernote.tmp-AbC12")
        _ = try folder.file(".n.peernote.tmp-AbC-23")
        _ = try folder.file("n.peernote.tmp-AbC123")
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/.n.peernote.tmp-Link01", withDestinationPath: stale2)
        try FileManager.default.createDirectory(atPath: folder.path + "/.n.peernote.tmp-Dir001", withIntermediateDirectories: false)
        try folder.backdate(folder.path + "/.n.peernote.tmp-Dir001", by: 3_600)
        let before = folder.names

        do {
            let lock = try FileLock(for: doc)
            withExtendedLifetime(lock) {}
        }
        #expect(folder.names == before.subtracting([".n.peernote.tmp-AbC123", ".n.peernote.tmp-zz9ZZ9"]))
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(try Document.load(try FileStore.read(doc)).save() == bytes, "the document itself is untouched")

        // Once its writer is gone (the lock released), the held one is stale too.
        #expect(FileStore.removeStaleTemporaries(of: doc) == [], "still held")
        close(heldFD)
        #expect(FileStore.removeStaleTemporaries(of: doc) == [held])
        #expect(FileStore.removeStaleTemporaries(of: doc, minimumAge: 0) == [folder.path + "/.n.peernote.tmp-Young1"])
        #expect(folder.names.filter { $0.hasPrefix(".n.peernote.tmp-") } == Set([".n.peernote.tmp-AbC123.keep", ".n.peernote.tmp-AbC12", ".n.peernote.tmp-AbC-23", ".n.peernote.tmp-Link01", ".n.peernote.tmp-Dir001"]))
    }

    @Test("A file's age is read to the nanosecond: one stamped a moment ahead of the clock is younger than any age but zero")
    func fileAge() throws {
        let folder = try Folder()
        let file = folder.path + "/aged"
        #expect(FileManager.default.createFile(atPath: file, contents: Data([1])))
        func stamp(_ offset: Double) throws -> stat {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let whole = Int(offset.rounded(.down))
            var t = now
            t.tv_sec += whole
            t.tv_nsec += Int((offset - Double(whole)) * 1e9)
            if t.tv_nsec >= 1_000_000_000 { t.tv_sec += 1; t.tv_nsec -= 1_000_000_000 }
            var times = [t, t]
            #expect(utimensat(AT_FDCWD, file, &times, 0) == 0)
            var st = stat()
            #expect(stat(file, &st) == 0)
            return st
        }
        // A time within the clock's current second, ahead of it: `time()` would call it a second old
        // or a second young depending on where the second turns.
        let ahead = try stamp(0.3)
        #expect(FileStore.isAtLeast(0, secondsAgo: FileStore.modificationTime(ahead)))
        #expect(!FileStore.isAtLeast(0.001, secondsAgo: FileStore.modificationTime(ahead)))
        let past = try stamp(-2.5)
        #expect(FileStore.isAtLeast(2, secondsAgo: FileStore.modificationTime(past)))
        #expect(!FileStore.isAtLeast(60, secondsAgo: FileStore.modificationTime(past)))
    }

    @Test("cleanUpLeftovers says what became of each leftover (removed, or left: young or held); a dry run changes nothing; leftoverCandidates lists them by name alone, long names too",
          arguments: ["n.peernote", String(repeating: "n", count: 246) + ".peernote"])
    func leftoverCleanupReport(name: String) throws {
        let folder = try Folder()
        let doc = folder.path + "/" + name
        try FileStore.writeAtomically(Document(title: "T", author: "a").save(), to: doc)
        let stale = try folder.file(FileStore.temporaryPrefix(forName: name) + "AbC123")
        let young = try folder.file(FileStore.temporaryPrefix(forName: name) + "Young1", age: 0)
        let held = try folder.file(FileStore.temporaryPrefix(forName: name, infix: FileStore.swapInfix) + "Held01")
        // Close-on-exec: a process another test starts meanwhile would otherwise inherit it, and its lock.
        let heldFD = open(held, O_RDONLY | O_CLOEXEC)
        try #require(heldFD >= 0 && flock(heldFD, LOCK_EX | LOCK_NB) == 0)
        defer { close(heldFD) }
        _ = try folder.file(FileStore.temporaryPrefix(forName: name) + "AbC12")
        _ = try folder.file(".other.peernote.tmp-AbC123")
        #expect(FileStore.leftoverCandidates(of: doc) == [held, stale, young].sorted())

        let before = folder.names
        let dry = FileStore.cleanUpLeftovers(of: doc, dryRun: true)
        #expect(folder.names == before)
        #expect(dry.removed == [stale] && dry.keptAsConflictCopies.isEmpty && Set(dry.left) == [young, held], "\(dry)")
        let done = FileStore.cleanUpLeftovers(of: doc)
        #expect(done == dry)
        #expect(folder.names == before.subtracting([FileStore.lastComponent(of: stale)]))
        #expect(FileStore.cleanUpLeftovers(of: doc).removed.isEmpty)
    }

    @Test("One cleanup takes every kind of leftover: temporary files removed, a swapped-out version the document has removed, a kept version with changes the document lacks made a conflict copy; in that order, each kind by name")
    func leftoverKindsInOneCleanup() throws {
        let folder = try Folder()
        let doc = folder.path + "/n.peernote"
        let base = Document(title: "T", author: "a")
        let other = base.fork()
        other.setTitle("Other's title")
        try FileStore.writeAtomically(base.save(), to: doc)
        let tmpB = try folder.file(".n.peernote.tmp-BBBBBB")
        let tmpA = try folder.file(".n.peernote.tmp-AAAAAA")
        let swap = try folder.file(".n.peernote.swap-SSSSSS")
        try Data(base.save()).write(to: URL(fileURLWithPath: swap))
        try folder.backdate(swap, by: 3_600)
        let kept = try folder.file(".n.peernote.kept-KKKKKK")
        try Data(other.save()).write(to: URL(fileURLWithPath: kept))
        try folder.backdate(kept, by: 3_600)
        _ = try folder.file(".m.peernote.tmp-AAAAAA")

        let done = FileStore.cleanUpLeftovers(of: doc)
        #expect(done.removed == [tmpA, tmpB, swap], "\(done)")
        #expect(done.keptAsConflictCopies.count == 1 && done.keptAsConflictCopies.first?.from == kept, "\(done)")
        let copy = try #require(done.keptAsConflictCopies.first?.to)
        #expect(try Document.load(try FileStore.read(copy)).notebook.title == "Other's title", "the other version is kept whole")
        #expect(folder.names == ["n.peernote", ".m.peernote.tmp-AAAAAA", FileStore.lastComponent(of: copy)])
    }

    @Test("pathsWithLeftovers tells, from one reading of each folder, the documents leftoverCandidates finds something beside, through links too")
    func pathsWithLeftovers() throws {
        let folder = try Folder()
        try FileManager.default.createDirectory(atPath: folder.path + "/sub", withIntermediateDirectories: true)
        let bytes = Document(title: "T", author: "a").save()
        let docs = try ["a.peernote", "b.peernote", "sub/c.peernote", "sub/d.peernote"].map { name -> String in
            try FileStore.writeAtomically(bytes, to: folder.path + "/" + name)
            return folder.path + "/" + name
        }
        let link = folder.path + "/link.peernote"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "sub/c.peernote")
        for name in [".a.peernote.tmp-AbC123", ".b.peernote.tmp-AbC12", "sub/.c.peernote.kept-Qwe123", ".d.peernote.swap-Zz9Zz9"] {
            _ = try folder.file(name)
        }
        let all = docs + [link]
        let found = FileStore.pathsWithLeftovers(all)
        #expect(found == Set([docs[0], docs[2], link]), "\(found)")
        for path in all { #expect(found.contains(path) == !FileStore.leftoverCandidates(of: path).isEmpty, "\(path)") }
    }

    @Test("A lock taken without cleaning up leaves what killed writers left; the next lock taken as usual removes it")
    func lockWithoutCleanup() throws {
        let folder = try Folder()
        let doc = folder.path + "/n.peernote"
        try FileStore.writeAtomically(Document(title: "T", author: "a").save(), to: doc)
        let stale = try folder.file(".n.peernote.tmp-AbC123")
        do {
            let lock = try FileLock(for: doc, cleaningUp: false)
            #expect(lock.leftoverCleanup == FileStore.LeftoverCleanup())
        }
        #expect(FileManager.default.fileExists(atPath: stale))
        do {
            let lock = try FileLock(for: doc)
            #expect(lock.leftoverCleanup.removed == [stale])
        }
        #expect(!FileManager.default.fileExists(atPath: stale))
    }

    @Test("Through a symbolic link, the temporary files beside the file it points to are the ones removed")
    func throughSymlink() throws {
        let folder = try Folder(), elsewhere = try Folder()
        let real = elsewhere.path + "/real.peernote"
        try FileStore.writeAtomically(Document(title: "T", author: "a").save(), to: real)
        let link = folder.path + "/link.peernote"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let stale = try elsewhere.file(".real.peernote.tmp-Qw3rty")
        let besideLink = try folder.file(".link.peernote.tmp-Qw3rty")
        #expect(FileStore.removeStaleTemporaries(of: link) == [stale])
        #expect(FileManager.default.fileExists(atPath: besideLink), "the link's folder holds no temporary of the real file")
    }

    @Test("A file whose name is 244 to 255 bytes long can be written and created; its stale temporary files are still found",
          arguments: [String(repeating: "n", count: 246), String(repeating: "é", count: 123), String(repeating: "n", count: 235), String(repeating: "n", count: 233)])
    func longNames(stem: String) throws {
        let folder = try Folder()
        let name = stem + ".peernote"
        let doc = folder.path + "/" + name
        try FileStore.writeAtomically(Array("one".utf8), to: doc)
        try FileStore.writeAtomically(Array("two".utf8), to: doc)
        #expect(try FileStore.replace(Array("three".utf8), at: doc, expecting: Array("two".utf8)) == .replaced)
        #expect(try FileStore.read(doc) == Array("three".utf8))
        try FileStore.create(Array("new".utf8), at: folder.path + "/" + stem + ".other")
        let prefix = FileStore.temporaryPrefix(forName: name)
        #expect(prefix.utf8.count + 6 <= 255)
        #expect(name.hasPrefix(prefix.dropFirst().dropLast(FileStore.temporaryInfix.count)))
        let stale = try folder.file(prefix + "abc123")
        #expect(FileStore.removeStaleTemporaries(of: doc) == [stale])
        #expect(folder.names == [name, stem + ".other"])
    }

    @Test("Writers leave neither a temporary file nor an open descriptor behind (the lock on the temporary file is released)")
    func writersLeaveNothing() throws {
        let folder = try Folder()
        let doc = folder.path + "/n.peernote"
        for i in 0 ..< 50 { try FileStore.writeAtomically(Array("version \(i)".utf8), to: doc) }
        try FileStore.create(Array("new".utf8), at: folder.path + "/created.peernote")
        #expect(throws: FileError.self) { try FileStore.create(Array("again".utf8), at: folder.path + "/created.peernote") }
        #expect(Self.openFiles(under: folder.path) == [], "no descriptor is left open")
        #expect(folder.names == ["n.peernote", "created.peernote"])
    }

    /// link(2) as a file system without hard links answers it (FAT and exFAT: EPERM), after
    /// `meanwhile` (another program's write, just before).
    static func noHardLinks(meanwhile: @escaping () -> Void = {}) -> (String, String) -> Int32 {
        { _, _ in
            meanwhile()
            errno = EPERM
            return -1
        }
    }

    @Test("Without hard links (a USB stick's FAT): a new document is still created, and never over a file that appeared meanwhile")
    func createWithoutHardLinks() throws {
        let folder = try Folder()
        let path = folder.path + "/new.peernote"
        try FileStore.create(Array("new".utf8), at: path, link: Self.noHardLinks())
        #expect(try FileStore.read(path) == Array("new".utf8))
        // Another program creates the name between the check and the write: it is kept.
        let raced = folder.path + "/raced.peernote"
        #expect(throws: FileError.self) {
            try FileStore.create(Array("ours".utf8), at: raced, link: Self.noHardLinks {
                _ = FileManager.default.createFile(atPath: raced, contents: Data("theirs".utf8))
            })
        }
        #expect(try FileStore.read(raced) == Array("theirs".utf8))
        #expect(folder.names.sorted() == ["new.peernote", "raced.peernote"], "no temporary file is left")
    }

    @Test("Without hard links, a version kept aside never replaces a conflict copy made meanwhile: it takes the next name")
    func keepWithoutHardLinks() throws {
        let folder = try Folder()
        let doc = try folder.file("notes.peernote", "document", age: 0)
        let first = try folder.file(".notes.peernote.kept-aaaaaa", "first", age: 0)
        let keptFirst = FileStore.keep(first, beside: doc, link: Self.noHardLinks())
        #expect(keptFirst.hasSuffix("-peernote.peernote"), "\(keptFirst)")
        #expect(try FileStore.read(keptFirst) == Array("first".utf8))
        // The next one: another writer takes the second name just before this one's rename.
        let second = try folder.file(".notes.peernote.kept-bbbbbb", "second", age: 0)
        let secondName = keptFirst.replacingOccurrences(of: "-peernote.peernote", with: "-peernote2.peernote")
        let keptSecond = FileStore.keep(second, beside: doc, link: Self.noHardLinks {
            if !FileManager.default.fileExists(atPath: secondName) {
                _ = FileManager.default.createFile(atPath: secondName, contents: Data("another writer's".utf8))
            }
        })
        #expect(try FileStore.read(keptFirst) == Array("first".utf8))
        #expect(try FileStore.read(secondName) == Array("another writer's".utf8))
        #expect(keptSecond.hasSuffix("-peernote3.peernote"), "\(keptSecond)")
        #expect(try FileStore.read(keptSecond) == Array("second".utf8))
        #expect(!FileManager.default.fileExists(atPath: first) && !FileManager.default.fileExists(atPath: second))
    }
}
