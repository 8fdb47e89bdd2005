import Foundation
@testable import PeerNote
import Testing
import TestSupport

/// A deterministic simulation of devices editing one notebook in a folder that a sync tool keeps
/// in step, as Syncthing does: files changed on one side are copied at random moments, one file
/// at a time in any order (deletions too); a file changed on both sides keeps the newer version
/// and the other becomes a conflict copy named to the second (two in one second: the later
/// overwrites the earlier), at most 10 copies per file (the oldest deleted). With a notebook
/// folder no conflict copy is ever made and every edit reaches every device; with a single
/// `.peernote` file the same run loses edits, even counting those left in conflict copies.
@Suite("Folder sync simulation")
struct FolderSyncSimulationTests {
    /// A small deterministic generator (xorshift64*), so that every run is the same.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            return state &* 0x2545_F491_4F6C_DD1D
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    }

    /// The simulated sync tool: one global index of every file (its bytes, nil once deleted, and
    /// the time it was last changed), and for each device the version it last agreed on.
    final class SyncTool {
        let roots: [String]
        var global: [String: (bytes: [UInt8]?, time: Int)] = [:]
        var known: [[String: [UInt8]?]]
        var conflictCopiesMade = 0
        var clock = 0

        init(roots: [String]) {
            self.roots = roots
            known = Array(repeating: [:], count: roots.count)
        }

        /// Relative paths of the regular files under `root`.
        func files(_ root: String) -> [String: [UInt8]] {
            var out: [String: [UInt8]] = [:]
            guard let walker = FileManager.default.enumerator(atPath: root) else { return out }
            while let rel = walker.nextObject() as? String {
                var isDir: ObjCBool = false
                let full = root + "/" + rel
                if FileManager.default.fileExists(atPath: full, isDirectory: &isDir), !isDir.boolValue,
                   let data = FileManager.default.contents(atPath: full) {
                    out[rel] = Array(data)
                }
            }
            return out
        }

        /// The conflict copy name for `rel` at time `t` (one-second resolution).
        func conflictName(_ rel: String, _ t: Int, device: Int) -> String {
            let ext = (rel as NSString).pathExtension
            let base = ext.isEmpty ? rel : String(rel.dropLast(ext.count + 1))
            return "\(base).sync-conflict-\(20261126_000000 + t)-DEV\(device)" + (ext.isEmpty ? "" : ".\(ext)")
        }

        /// One device's sync: publish its local changes (a conflict where the global version also
        /// moved on), then take in each change of others with probability `percent`.
        func sync(_ d: Int, _ random: inout Random, percent: Int) throws {
            let root = roots[d]
            let local = files(root)
            let paths = Set(local.keys).union(known[d].keys).sorted()
            for rel in paths {
                let mine: [UInt8]? = local[rel]
                let base: [UInt8]? = known[d][rel] ?? nil
                guard mine != base else { continue }
                let g: [UInt8]? = global[rel]?.bytes
                if g == base || g == mine {
                    global[rel] = (mine, clock)
                    known[d][rel] = .some(mine)
                    continue
                }
                // Changed here and elsewhere: the newer (here: the global one, whose change came
                // first only when its time is later) wins; the other becomes a conflict copy.
                conflictCopiesMade += 1
                let copy = conflictName(rel, clock, device: d)
                if let mine {
                    try Data(mine).write(to: URL(fileURLWithPath: root + "/" + copy))
                    global[copy] = (mine, clock)
                    known[d][copy] = .some(mine)
                }
                if let g { try Data(g).write(to: URL(fileURLWithPath: root + "/" + rel)) } else { try? FileManager.default.removeItem(atPath: root + "/" + rel) }
                known[d][rel] = .some(g)
                try pruneConflictCopies(of: rel, d)
            }
            for rel in global.keys.sorted() where random.chance(percent) {
                let g = global[rel]?.bytes
                let base: [UInt8]? = known[d][rel] ?? nil
                guard g != base, local[rel] == base else { continue }
                let full = root + "/" + rel
                if let g {
                    try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                    try Data(g).write(to: URL(fileURLWithPath: full))
                } else {
                    try? FileManager.default.removeItem(atPath: full)
                }
                known[d][rel] = .some(g)
            }
        }

        /// Keeps at most 10 conflict copies of `rel`, deleting the oldest (as Syncthing does).
        func pruneConflictCopies(of rel: String, _ d: Int) throws {
            let ext = (rel as NSString).pathExtension
            let base = ext.isEmpty ? rel : String(rel.dropLast(ext.count + 1))
            let copies = global.keys.filter { $0.hasPrefix(base + ".sync-conflict-") && global[$0]?.bytes != nil }.sorted()
            for old in copies.dropLast(10) {
                global[old] = (nil, clock)
                try? FileManager.default.removeItem(atPath: roots[d] + "/" + old)
                known[d][old] = .some(nil)
            }
        }
    }

    /// What one run made and found.
    struct Outcome {
        var made: Set<String> = []
        var foundEverywhere: Set<String> = []
        var foundIncludingCopies: Set<String> = []
        var conflictCopies = 0
        var identicalFolders = false
    }

    /// Runs `steps` steps over `devices` devices (a folder's device compacts at random moments, with
    /// no grace period: removals then often arrive before the root that holds their changes), each step one edit by a random device (through
    /// the library) and a sync of a random device; then syncs until nothing moves.
    static func run(folders: Bool, devices: Int = 3, steps: Int = 120, seed: UInt64 = 0x5EED) throws -> Outcome {
        let dir = try TempDir()
        var random = Random(state: seed)
        let roots = (0 ..< devices).map { dir.path("device\($0)") }
        for r in roots { try FileManager.default.createDirectory(atPath: r, withIntermediateDirectories: true) }
        let tags = (0 ..< devices).map { String(format: "%08x", 0xd0 + $0) }
        let name = "Trip.peernote"
        let seedDocument = Document(title: "Trip", author: "ann", replica: ReplicaID(high: 1, low: 1), time: Date(timeIntervalSince1970: 1_790_000_000))
        if folders {
            try NotebookFolder.create(at: roots[0] + "/" + name, seedDocument, device: tags[0])
        } else {
            try seedDocument.write(to: roots[0] + "/" + name)
        }
        let tool = SyncTool(roots: roots)
        var outcome = Outcome()
        // Every device gets the notebook before editing.
        try tool.sync(0, &random, percent: 100)
        for d in 1 ..< devices { try tool.sync(d, &random, percent: 100) }
        for step in 0 ..< steps {
            tool.clock += random.below(3)
            let d = random.below(devices)
            let path = roots[d] + "/" + name
            let title = "d\(d)-\(step)"
            if folders {
                let folder = NotebookFolder(path, device: tags[d])
                let reading = try folder.read()
                reading.document.author = "device \(d)"
                reading.document.addNote(title: title)
                try folder.add(reading.document, autoCompact: false)
                if random.chance(8) { _ = try folder.compact(grace: 0) }
            } else {
                let document = try Document.open(path, author: "device \(d)")
                document.addNote(title: title)
                try document.write(to: path)
            }
            outcome.made.insert(title)
            let s = random.below(devices)
            try tool.sync(s, &random, percent: 60)
        }
        // Final sync: every device, full, until nothing changes.
        for _ in 0 ..< 6 { for d in 0 ..< devices { try tool.sync(d, &random, percent: 100) } }
        outcome.conflictCopies = tool.conflictCopiesMade
        var everywhere: Set<String>?
        for r in roots {
            let titles = Set(try Document.open(r + "/" + name).notes.map(\.title))
            everywhere = everywhere.map { $0.intersection(titles) } ?? titles
        }
        outcome.foundEverywhere = everywhere ?? []
        // Counting what conflict copies still hold too (as `pnmerge sync` would fold them in).
        var any = outcome.foundEverywhere
        for r in roots {
            for (rel, bytes) in tool.files(r) where rel.contains(".sync-conflict-") {
                if let d = try? Document.load(bytes) { any.formUnion(d.notes.map(\.title)) }
            }
        }
        outcome.foundIncludingCopies = any
        let listings = roots.map { tool.files($0) }
        outcome.identicalFolders = listings.dropFirst().allSatisfy { $0 == listings[0] }
        return outcome
    }

    @Test("with notebook folders no conflict copy is made and every edit reaches every device")
    func foldersLoseNothing() throws {
        let outcome = try Self.run(folders: true)
        #expect(outcome.conflictCopies == 0)
        #expect(outcome.made.count == 120)
        #expect(outcome.foundEverywhere == outcome.made)
        #expect(outcome.identicalFolders)
    }

    @Test("with two devices and other seeds, folders lose nothing either")
    func foldersLoseNothingOtherSeeds() throws {
        for seed: UInt64 in [1, 2] {
            let outcome = try Self.run(folders: true, devices: 2, steps: 80, seed: seed)
            #expect(outcome.conflictCopies == 0)
            #expect(outcome.foundEverywhere == outcome.made)
        }
    }

    @Test("the same run with a single .peernote file makes conflict copies and loses edits")
    func singleFileLosesEdits() throws {
        let outcome = try Self.run(folders: false)
        #expect(outcome.conflictCopies > 10)
        #expect(outcome.foundEverywhere.count < outcome.made.count)
        // Even with every surviving conflict copy folded in, some edits are gone.
        #expect(outcome.foundIncludingCopies.count < outcome.made.count)
    }
}
