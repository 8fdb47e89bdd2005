import Foundation
import PeerNote
import Testing
import TestSupport

/// The ```sh blocks of docs/SYNC.md, by the `## ` heading they are under, in order.
struct Recipes {
    static let file = Binary.packageRoot.appendingPathComponent("docs/SYNC.md")
    let sections: [(heading: String, blocks: [String])]

    init() throws {
        let text = try String(contentsOf: Self.file, encoding: .utf8)
        var sections: [(heading: String, blocks: [String])] = []
        var block: [String]?
        for line in text.components(separatedBy: "\n") {
            if var current = block {
                if line == "```" {
                    if sections.isEmpty { sections.append(("", [])) }
                    sections[sections.count - 1].blocks.append(current.joined(separator: "\n") + "\n")
                    block = nil
                } else {
                    current.append(line)
                    block = current
                }
            } else if line.hasPrefix("## ") {
                sections.append((String(line.dropFirst(3)), []))
            } else if line == "```sh" {
                block = []
            }
        }
        self.sections = sections
    }

    /// Block `index` under the heading `heading`.
    func block(_ heading: String, _ index: Int) throws -> String {
        let section = try #require(sections.first { $0.heading == heading }, "docs/SYNC.md has no section \"\(heading)\"")
        return try #require(section.blocks.indices.contains(index) ? section.blocks[index] : nil, "\(heading): no block \(index)")
    }
}

/// Runs a recipe block with `sh -e` as a user whose home is `home`: `/media/usb` is the folder `usb`,
/// `server:` (rsync) and `ssh server` are the folder `server`.
func runRecipe(_ block: String, home: String, usb: String? = nil, server: String? = nil, in directory: String? = nil,
               environment: [String: String]? = nil) throws -> RunResult {
    var script = block
    if let usb { script = script.replacingOccurrences(of: "/media/usb", with: usb) }
    if server != nil {
        script = script.replacingOccurrences(of: "ssh server ", with: "cd \"$SERVER\" && ")
            .replacingOccurrences(of: "server:", with: "\"$SERVER\"/")
    }
    var env = environment ?? ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GIT_") }
    env["PATH"] = (Binary.path as NSString).deletingLastPathComponent + ":" + (env["PATH"] ?? "/usr/bin:/bin")
    env["HOME"] = home
    env["SERVER"] = server
    env["LC_ALL"] = "C"
    return try Command.run("/bin/sh", ["-e", "-c", script], in: directory ?? home, environment: env)
}

@Suite("docs/SYNC.md recipes, run as written")
struct SyncRecipeTests {
    @Test("docs/SYNC.md holds exactly the command blocks these tests run")
    func inventory() throws {
        let recipes = try Recipes()
        let shape = recipes.sections.filter { !$0.blocks.isEmpty }.map { "\($0.heading): \($0.blocks.count)" }
        #expect(shape == ["git: 2", "USB stick (sneakernet): 3", "rsync: 2", "Syncthing, Dropbox, Nextcloud: 2", "Compacting: 1"])
        #expect(try recipes.block("USB stick (sneakernet)", 2) == "pnmerge sync ~/Notes /media/usb/Notes\n")
        #expect(try recipes.block("Syncthing, Dropbox, Nextcloud", 1) == "pnmerge sync ~/Sync\n")
    }

    @Test("git: set up with hooks, commit .gitattributes, then git merge keeps both branches' edits")
    func git() throws {
        let recipes = try Recipes()
        let repo = try GitRepo()
        let notebook = Document(title: "Home", author: "ann")
        let note = notebook.addNote(title: "Plan", body: "start")
        try notebook.write(to: repo.path("notes.peernote"), mode: .compact)
        try repo.git("add", "notes.peernote")
        try repo.git("commit", "-q", "-m", "notebook")

        let setup = try runRecipe(recipes.block("git", 0), home: repo.home.url.path, in: repo.root, environment: repo.environment)
        #expect(setup.status == 0, "\(setup.out)\(setup.err)")
        #expect(FileManager.default.isExecutableFile(atPath: repo.path(".git/hooks/pre-commit")))
        #expect(try repo.git("log", "-1", "--format=%s").out == "Merge notebooks with pnmerge\n")

        try repo.git("checkout", "-q", "-b", "laptop")
        try repo.edit("notes.peernote", author: "ann") { d in try d.insertText(note, at: 0, "laptop: ") }
        try repo.git("commit", "-q", "-a", "-m", "on the laptop")
        try repo.git("checkout", "-q", "main")
        try repo.edit("notes.peernote", author: "ben") { d in
            try d.insertText(note, at: 5, " here")
            d.addNote(title: "Desk", body: "desk")
        }
        try repo.git("commit", "-q", "-a", "-m", "on the desk")
        let merge = try runRecipe(recipes.block("git", 1), home: repo.home.url.path, in: repo.root, environment: repo.environment)
        #expect(merge.status == 0, "\(merge.out)\(merge.err)")
        let merged = try Document.open(repo.path("notes.peernote"))
        #expect(merged.notes.map(\.body) == ["laptop: start here", "desk"])
        #expect(try repo.git("status", "--porcelain").out.isEmpty)
    }

    @Test("USB stick: first copy, a new device, then sync on every device until all copies hold every edit")
    func usbStick() throws {
        let recipes = try Recipes()
        let usb = try TempDir()
        let homes = [try TempDir(), try TempDir(), try TempDir()]
        func run(_ index: Int, on device: Int) throws {
            let r = try runRecipe(recipes.block("USB stick (sneakernet)", index), home: homes[device].url.path, usb: usb.url.path)
            #expect(r.status == 0, "block \(index) on device \(device): \(r.out)\(r.err)")
        }
        func edit(_ device: Int, _ name: String, _ change: (Document) throws -> Void) throws {
            let path = homes[device].path("Notes/\(name)")
            let d = try Document.open(path)
            d.author = "device \(device)"
            try change(d)
            try d.write(to: path)
        }
        try FileManager.default.createDirectory(atPath: homes[0].path("Notes"), withIntermediateDirectories: true)
        let home = Document(title: "Home", author: "ann")
        let plan = home.addNote(title: "Plan", body: "start")
        try home.write(to: homes[0].path("Notes/home.peernote"), mode: .compact)
        let work = Document(title: "Work", author: "ann")
        work.addNote(title: "Todo", body: "ship")
        try work.write(to: homes[0].path("Notes/work.peernote"), mode: .compact)

        try run(0, on: 0)   // the first time: onto the stick
        try run(1, on: 1)   // devices without copies take them from the stick
        try run(1, on: 2)
        try edit(0, "home.peernote") { d in d.addNote(title: "From A", body: "a") }
        try edit(1, "home.peernote") { d in try d.insertText(plan, at: 5, " B") }
        try edit(2, "work.peernote") { d in d.setTitle("Work (C)") }
        for device in [0, 1, 2, 0, 1, 2] { try run(2, on: device) }

        for name in ["home.peernote", "work.peernote"] {
            let copies = homes.map { $0.path("Notes/\(name)") } + [usb.path("Notes/\(name)")]
            let reference = try canonical(copies[0])
            for copy in copies { #expect(try canonical(copy) == reference, "\(copy)") }
        }
        let merged = try Document.open(usb.path("Notes/home.peernote"))
        #expect(merged.notes.map(\.title) == ["Plan", "From A"])
        #expect(merged.notes.first?.body == "start B")
        #expect(try Document.open(usb.path("Notes/work.peernote")).title == "Work (C)")
    }

    @Test("rsync --backup, then sync on both ends, leaves both copies with every edit and no backup files",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rsync"), "rsync is not installed (apt-get install rsync)"))
    func rsync() throws {
        let recipes = try Recipes()
        let laptop = try TempDir(), server = try TempDir()
        try FileManager.default.createDirectory(atPath: laptop.path("Notes"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: server.path("Notes"), withIntermediateDirectories: true)
        let s = try Diverged()
        _ = try laptop.write(s.alice.save(), "Notes/notes.peernote")
        _ = try server.write(s.bob.save(), "Notes/notes.peernote")
        let r = try runRecipe(recipes.block("rsync", 0), home: laptop.url.path, server: server.url.path)
        #expect(r.status == 0, "\(r.out)\(r.err)")
        let expected = try s.merged().notebook
        for dir in [laptop, server] {
            #expect(try Document.load(dir.bytes("Notes/notes.peernote")).notebook == expected)
            #expect(!FileManager.default.fileExists(atPath: dir.path("Notes/notes.peernote~")))
        }
        #expect(try canonical(laptop.path("Notes/notes.peernote")) == canonical(server.path("Notes/notes.peernote")))
    }

    @Test("Synced folder: conflict copies from Syncthing and Dropbox are merged in and removed")
    func syncedFolder() throws {
        let recipes = try Recipes()
        let home = try TempDir()
        try FileManager.default.createDirectory(atPath: home.path("Sync/Projects"), withIntermediateDirectories: true)
        let s = try Diverged()
        let phone = s.base.fork(author: "carol")
        phone.addNote(title: "From the phone", body: "p")
        _ = try home.write(s.alice.save(), "Sync/Projects/home.peernote")
        _ = try home.write(s.bob.save(), "Sync/Projects/home.sync-conflict-20240301-101530-ABCDEF7.peernote")
        _ = try home.write(phone.save(), "Sync/Projects/home (Carol's conflicted copy 2024-03-01).peernote")
        let r = try runRecipe(recipes.block("Syncthing, Dropbox, Nextcloud", 1), home: home.url.path)
        #expect(r.status == 0, "\(r.out)\(r.err)")
        let files = try FileManager.default.contentsOfDirectory(atPath: home.path("Sync/Projects")).filter { !$0.hasPrefix(".") }
        #expect(files == ["home.peernote"])
        let merged = try Document.load(home.bytes("Sync/Projects/home.peernote"))
        #expect(merged.notes.contains { $0.title == "From the phone" })
        #expect(merged.notes.contains { $0.title == "Boat" })
        #expect(merged.notes.first { $0.title == "Plan" }?.body == "Monday: call Bob")
    }

    @Test("rsync with notebook folders: both ends end with the same chunks, every edit, and no temporary file carried",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rsync"), "rsync is not installed (apt-get install rsync)"))
    func rsyncFolders() throws {
        let recipes = try Recipes()
        let laptop = try TempDir(), server = try TempDir()
        let s = try Diverged()
        for dir in [laptop, server] { try FileManager.default.createDirectory(atPath: dir.path("Notes"), withIntermediateDirectories: true) }
        try NotebookFolder.create(at: laptop.path("Notes/home.peernote"), s.base, device: "aaaaaaaa")
        try NotebookFolder.create(at: server.path("Notes/home.peernote"), s.base, device: "aaaaaaaa")
        try NotebookFolder(laptop.path("Notes/home.peernote"), device: "aaaaaaaa").add(s.alice)
        try NotebookFolder(server.path("Notes/home.peernote"), device: "cccccccc").add(s.bob)
        // What a writer killed mid-write leaves: never carried across.
        _ = try laptop.write([1, 2, 3], "Notes/home.peernote/.x.pnchunk.tmp-aaaaaaaa-AbC123")
        let r = try runRecipe(recipes.block("rsync", 1), home: laptop.url.path, server: server.url.path)
        #expect(r.status == 0, "\(r.out)\(r.err)")
        let expected = try s.merged().notebook
        for dir in [laptop, server] { #expect(try Document.open(dir.path("Notes/home.peernote")).notebook == expected) }
        func chunks(_ dir: TempDir) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: dir.path("Notes/home.peernote")).filter { !$0.hasPrefix(".") }.sorted()
        }
        #expect(try chunks(laptop) == chunks(server))
        #expect(!FileManager.default.fileExists(atPath: server.path("Notes/home.peernote/.x.pnchunk.tmp-aaaaaaaa-AbC123")))
    }

    @Test("Synced folder with notebook folders: a new folder is made, and sync --convert turns a single file into a folder of the same name")
    func syncedFolderConvert() throws {
        let recipes = try Recipes()
        let home = try TempDir()
        try FileManager.default.createDirectory(atPath: home.path("Sync/.stfolder"), withIntermediateDirectories: true)
        let s = try Diverged()
        let file = try home.write(s.alice.save(), "Sync/home.peernote")
        _ = try home.write(s.bob.save(), "Sync/home.sync-conflict-20261126-101010-ABCDEF7.peernote")
        let r = try runRecipe(recipes.block("Syncthing, Dropbox, Nextcloud", 0), home: home.url.path)
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(NotebookFolder.isFolder(home.path("Sync/trip.peernote")))
        #expect(try Document.open(home.path("Sync/trip.peernote")).title == "Trip")
        #expect(NotebookFolder.isFolder(file))
        #expect(try Document.open(file).notebook == s.merged().notebook)
        let names = try FileManager.default.contentsOfDirectory(atPath: home.path("Sync")).sorted()
        #expect(names == [".stfolder", "home.peernote", "trip.peernote"])
    }

    @Test("Compacting: an appended file becomes one block with the same notebook")
    func compacting() throws {
        let recipes = try Recipes()
        let home = try TempDir()
        let s = try Diverged()
        try FileManager.default.createDirectory(atPath: home.path("Notes"), withIntermediateDirectories: true)
        let document = try Document.load(s.alice.save())
        try document.merge(s.bob)
        _ = try home.write(document.save(.incremental), "Notes/home.peernote")
        let r = try runRecipe(recipes.block("Compacting", 0), home: home.url.path)
        #expect(r.status == 0, "\(r.out)\(r.err)")
        let bytes = try home.bytes("Notes/home.peernote")
        #expect(try Document.storageReport(bytes).blockCount == 1)
        #expect(try Document.load(bytes).notebook == document.notebook)
    }
}
