import Foundation
@testable import PeerNote
import PeerNoteCLISupport
import Testing
import TestSupport
@testable import PNMergeCommands

/// `pnmerge sync` leaves copies that hold the same changes byte-identical (so rsync and Unison
/// settle), and hints once per run that a single-file notebook in a folder a sync service
/// manages is better kept as a notebook folder.
@Suite("sync: equal changes, equal bytes; the synced-folder hint")
struct SyncIdenticalBytesTests {
    /// Two devices' folders, each with its own edit of one notebook appended to its file (as
    /// `peernote` writes an edit).
    static func editedApart() throws -> (laptop: TempDir, usb: TempDir, merged: Document) {
        let laptop = try TempDir(), usb = try TempDir()
        let s = try Diverged()
        let base = try Document.load(s.base.save())
        _ = try laptop.write(base.save(), "notes.peernote")
        _ = try usb.write(base.save(), "notes.peernote")
        let onLaptop = try Document.load(laptop.bytes("notes.peernote"))
        try onLaptop.merge(s.alice)
        _ = try laptop.write(onLaptop.save(.incremental), "notes.peernote")
        let onStick = try Document.load(usb.bytes("notes.peernote"))
        try onStick.merge(s.bob)
        _ = try usb.write(onStick.save(.incremental), "notes.peernote")
        #expect(try Document.storageReport(laptop.bytes("notes.peernote")).blockCount == 2)
        return (laptop, usb, try s.merged())
    }

    @Test("Two copies edited apart and synced, folders given in either order, end byte-identical in canonical form; a further sync writes nothing",
          arguments: [false, true])
    func editedApartEndIdentical(stickFirst: Bool) throws {
        let (laptop, usb, merged) = try Self.editedApart()
        let roots = stickFirst ? [usb.url.path, laptop.url.path] : [laptop.url.path, usb.url.path]
        let r = pnmerge(["sync"] + roots)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("2 written, 0 already up to date"), "\(r.out)")
        let a = try laptop.bytes("notes.peernote"), b = try usb.bytes("notes.peernote")
        #expect(a == b, "the two copies differ after sync")
        #expect(a == merged.save(.compact), "not the canonical form of the merged changes")
        #expect(try Document.load(a).notebook == merged.notebook)

        let snap = (try snapshot(laptop.url.path), try snapshot(usb.url.path))
        let again = pnmerge(["sync"] + roots.reversed())
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out.contains("0 written, 2 already up to date, 0 conflict copies removed."), "\(again.out)")
        #expect(try snapshot(laptop.url.path) == snap.0)
        #expect(try snapshot(usb.url.path) == snap.1)
    }

    @Test("Copies that hold the same changes in different bytes (appended in different orders) are rewritten to one canonical form, once")
    func sameChangesDifferentBytes() throws {
        let laptop = try TempDir(), usb = try TempDir()
        let s = try Diverged()
        // Each device appended the other's changes after its own: same changes, different bytes.
        let one = try Document.load(s.alice.save())
        try one.merge(s.bob)
        let two = try Document.load(s.bob.save())
        try two.merge(s.alice)
        let oneBytes = one.save(.incremental)
        _ = try laptop.write(oneBytes, "notes.peernote")
        _ = try usb.write(two.save(.incremental), "notes.peernote")
        #expect(try laptop.bytes("notes.peernote") != usb.bytes("notes.peernote"))

        let dry = pnmerge(["sync", "--dry-run", laptop.url.path, usb.url.path])
        #expect(dry.status == 0, "\(dry.err)")
        #expect(dry.out.contains("would rewrite \(laptop.path("notes.peernote")) in canonical form"), "\(dry.out)")
        #expect(try laptop.bytes("notes.peernote") == oneBytes)

        let r = pnmerge(["sync", laptop.url.path, usb.url.path, "--json"])
        #expect(r.status == 0, "\(r.err)")
        let json = try #require(try parseJSON(r.out) as? [String: Any])
        #expect(json["written"] as? Int == 0)
        #expect(json["rewritten"] as? Int == 2)
        #expect(json["upToDate"] as? Int == 0)
        let files = ((json["notebooks"] as? [[String: Any]])?.first?["files"] as? [[String: Any]]) ?? []
        #expect(files.map { $0["action"] as? String } == ["rewritten", "rewritten"], "\(files)")
        let canonicalBytes = try s.merged().save(.compact)
        #expect(try laptop.bytes("notes.peernote") == canonicalBytes)
        #expect(try usb.bytes("notes.peernote") == canonicalBytes)

        let again = pnmerge(["sync", laptop.url.path, usb.url.path])
        #expect(again.out.contains("0 written, 2 already up to date, 0 conflict copies removed."), "\(again.out)")
    }

    @Test("A lone copy with appended blocks, and copies already identical, are left as they are")
    func loneOrIdenticalCopiesUntouched() throws {
        let (laptop, _, _) = try Self.editedApart()
        let lone = try laptop.bytes("notes.peernote")
        let r = pnmerge(["sync", laptop.url.path])
        #expect(r.status == 0 && r.out.contains("0 written, 1 already up to date"), "\(r.out)\(r.err)")
        #expect(try laptop.bytes("notes.peernote") == lone)

        let twin = try TempDir()
        _ = try twin.write(lone, "notes.peernote")
        let both = pnmerge(["sync", laptop.url.path, twin.url.path])
        #expect(both.out.contains("0 written, 2 already up to date, 0 conflict copies removed."), "\(both.out)")
        #expect(try laptop.bytes("notes.peernote") == lone && twin.bytes("notes.peernote") == lone)
    }

    // MARK: The synced-folder hint

    @Test("A single-file notebook under a Syncthing folder (.stfolder above it) gets one hint naming the conversion; JSON carries it as a field only")
    func syncthingMarkerHint() throws {
        let home = try TempDir()
        try FileManager.default.createDirectory(atPath: home.path("Sync/.stfolder"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home.path("Sync/Notes"), withIntermediateDirectories: true)
        let s = try Diverged()
        let first = try home.write(s.alice.save(), "Sync/Notes/home.peernote")
        _ = try home.write(Document(title: "Work", author: "ann").save(), "Sync/Notes/work.peernote")

        let r = pnmerge(["sync", home.path("Sync/Notes")])
        #expect(r.status == 0, "\(r.err)")
        let hints = r.out.split(separator: "\n").filter { $0.hasPrefix("Hint: ") }
        #expect(hints.count == 1, "\(r.out)")
        let hint = String(hints.first ?? "")
        #expect(hint.contains("2 single-file notebooks (\(first) and 1 more)"), "\(hint)")
        #expect(hint.contains("a folder Syncthing syncs (\(home.path("Sync/.stfolder")))"), "\(hint)")
        #expect(hint.contains("pnmerge sync --convert \(home.path("Sync/Notes")) makes each one a folder of the same name"), "\(hint)")
        #expect(hint.contains("pnmerge convert \(first) NEW.peernote makes one beside it"), "\(hint)")

        let j = pnmerge(["sync", "--json", home.path("Sync/Notes")])
        #expect(!j.out.contains("Hint"), "\(j.out)")
        let json = try #require(try parseJSON(j.out) as? [String: Any])
        let field = try #require(json["syncedFolder"] as? [String: Any])
        #expect(field["evidence"] as? String == "marker")
        #expect(field["service"] as? String == "Syncthing")
        #expect(field["singleFiles"] as? [String] == [first, home.path("Sync/Notes/work.peernote")])
        #expect(field["convert"] as? String == "pnmerge sync --convert \(home.path("Sync/Notes"))")
    }

    @Test("Folding a Syncthing conflict copy gives the hint for the notebook beside it; a plain folder, or one beside ~/.dropbox settings, gets none")
    func conflictCopyHintAndNone() throws {
        let dir = try TempDir()
        let s = try Diverged()
        let notes = try dir.write(s.alice.save(), "notes.peernote")
        _ = try dir.write(s.bob.save(), "notes.sync-conflict-20240301-101530-ABCDEF7.peernote")
        let r = pnmerge(["sync", dir.url.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("Hint: \(notes) is a single-file notebook in a synced folder (1 conflict copy seen, the first a Syncthing conflict copy)"), "\(r.out)")
        let json = try #require(try parseJSON(pnmerge(["sync", "--json", dir.url.path]).out) as? [String: Any])
        // The copy was folded and removed by the first run: nothing shows a sync service now.
        #expect(json["syncedFolder"] is NSNull, "\(json)")

        // The Dropbox client's settings folder in a home is no synced folder's marker.
        let home = try TempDir()
        try FileManager.default.createDirectory(atPath: home.path(".dropbox"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home.path("Notes"), withIntermediateDirectories: true)
        _ = try home.write(s.alice.save(), "Notes/notes.peernote")
        let plain = pnmerge(["sync", home.path("Notes")])
        #expect(plain.status == 0 && !plain.out.contains("Hint"), "\(plain.out)")
        // A Dropbox folder's marker file does.
        _ = try home.write([], "Notes/.dropbox")
        let dropbox = pnmerge(["sync", home.path("Notes")])
        #expect(dropbox.out.contains("a folder Dropbox syncs (\(home.path("Notes/.dropbox")))"), "\(dropbox.out)")
    }
}
