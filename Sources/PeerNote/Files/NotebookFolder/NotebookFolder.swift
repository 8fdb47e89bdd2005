#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto

/// A notebook kept as a folder of immutable chunk files (`Trip.peernote/`), for folders that a
/// sync tool (Syncthing, Dropbox, Nextcloud, Unison) keeps in step: no file in it is ever
/// written or removed by more than one device, and no file changes once it is complete, so a
/// sync tool never sees two versions of one file (peernote(5), NOTEBOOK FOLDERS).
///
/// Invariants: every file the library writes in the folder is a chunk. A *root* chunk,
/// `DEVICE.OWN.pnchunk`, is a compact save (one base block) written by the device DEVICE (8 hex
/// digits); any other chunk, `PARENT.OWN.pnchunk`, is append blocks valid after the chain of its
/// parent PARENT. OWN is the first 16 bytes of the SHA-256 of the whole chain the chunk ends
/// (root to it), in lowercase hex, so a chain from a root to any chunk is an ordinary
/// `.peernote` file, verified in full as any document, and two files of one name hold the same
/// bytes. The chunks below a root form its device's *tree*: only that device appends to it, and
/// only that device removes chunks of it (compaction), so no chunk a device still extends can be
/// removed by another. The notebook is the union of the chains that end at the leaves.
/// Temporary files are `.NAME.tmp-DEVICE-XXXXXX`; readers ignore every name that is not a
/// chunk's, and the library removes nothing else but its own device's stale temporary files.
///
/// - Complexity: reading loads the chain of every leaf in full (O(leaves × chain bytes)), about
///   one leaf per device that writes; a write appends one chunk after its device's longest chain;
///   compaction replaces a device's tree by one root.
public struct NotebookFolder: Sendable {
    /// The folder's path.
    public let path: String
    /// The device this process writes as: its trees are the ones it appends to and compacts.
    public let device: String
    /// The length of a chain (chunks from a root of this device to the one written) past which a
    /// write compacts (`compact`).
    public static let compactionThreshold = 32
    /// Seconds a compacted root must have been in the folder (by its status-change time on this
    /// device) before the chunks it covers are removed: a device whose sync tool delivers the
    /// removals before the root would otherwise show a notebook with fewer changes for a while.
    public static let defaultGrace: Double = 3_600
    /// Seconds after which this device removes a temporary file it made and left (killed mid-write).
    public static let temporaryAge: Double = 86_400
    /// The end of every chunk's name.
    public static let chunkSuffix = ".pnchunk"

    /// The folder at `path`, written as `device` (8 lowercase hex digits; this machine's by default).
    public init(_ path: String, device: String = NotebookFolder.deviceTag) {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        self.path = p
        self.device = device
    }

    /// Whether `path` is a notebook folder: a directory (or a link to one) whose name ends in `.peernote`.
    public static func isFolder(_ path: String) -> Bool {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        var st = stat()
        return p.hasSuffix(".peernote") && stat(p, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }

    /// Eight hex digits naming this device: `PEERNOTE_DEVICE` when set to 8 hex digits, else from
    /// /etc/machine-id and the host name (two machines cloned from one image share a machine id:
    /// set `PEERNOTE_DEVICE` on one of them).
    public static let deviceTag: String = {
        if let set = Environment.value("PEERNOTE_DEVICE"), ChunkName.isHex(Substring(set), count: 8) { return set }
        var seed = (try? FileStore.read("/etc/machine-id")) ?? []
        var buffer = [CChar](repeating: 0, count: 256)
        if gethostname(&buffer, buffer.count) == 0 { seed += buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) } }
        var h = SHA256()
        h.update(data: seed)
        return hex(Array(h.finalize()).prefix(4))
    }()

    // MARK: Names

    /// One chunk's name, parsed.
    public struct ChunkName: Hashable, Sendable, CustomStringConvertible {
        /// The parent's id (32 hex digits); nil for a root.
        public var parent: String?
        /// For a root, the device that wrote it (8 hex digits).
        public var device: String?
        /// The chunk's own id: the first 16 bytes of the SHA-256 of its whole chain, in hex.
        public var own: String

        public var description: String { (parent ?? device ?? "") + "." + own + NotebookFolder.chunkSuffix }

        /// The name parsed, or nil when `fileName` is not a chunk's name.
        public init?(_ fileName: String) {
            guard fileName.hasSuffix(NotebookFolder.chunkSuffix), !fileName.hasPrefix(".") else { return nil }
            let parts = fileName.dropLast(NotebookFolder.chunkSuffix.count).split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, Self.isHex(parts[1], count: 32) else { return nil }
            own = String(parts[1])
            if Self.isHex(parts[0], count: 32) {
                parent = String(parts[0])
            } else if Self.isHex(parts[0], count: 8) {
                device = String(parts[0])
            } else {
                return nil
            }
        }

        init(parent: String?, device: String?, own: String) {
            self.parent = parent
            self.device = parent == nil ? device : nil
            self.own = own
        }

        static func isHex(_ s: Substring, count: Int) -> Bool {
            s.utf8.count == count && s.utf8.allSatisfy { (0x30 ... 0x39).contains($0) || (0x61 ... 0x66).contains($0) }
        }
    }

    /// The id of a chain whose SHA-256 state is `hasher`.
    static func id(_ hasher: SHA256) -> String {
        hex(Array(hasher.finalize()).prefix(16))
    }

    /// The SHA-256 state a chain of `device`'s tree starts from: the device's 8 hex digits, so
    /// that two devices' roots of identical bytes (the same changes compacted) have different
    /// ids, and every chunk's id tells whose tree it is in.
    static func chainHasher(device: String) -> SHA256 {
        var h = SHA256()
        h.update(data: Array(device.utf8))
        return h
    }

    /// The id of the chain `bytes` in `device`'s tree: the first 16 bytes of the SHA-256 of the
    /// device's 8 hex digits (ASCII) followed by the chain's bytes, in lowercase hex.
    public static func chainID(_ bytes: [UInt8], device: String) -> String {
        var h = chainHasher(device: device)
        h.update(data: bytes)
        return id(h)
    }

    static func hex<C: Collection<UInt8>>(_ bytes: C) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Reading

    /// A chunk as the folder holds it.
    public struct Chunk: Sendable {
        public var name: ChunkName
        /// Its bytes (empty when it could not be read).
        public var bytes: [UInt8]
        /// Whether it is part of the notebook read: its bytes match its name, its chain is present
        /// and loads.
        public var valid: Bool
        /// The device whose tree it is in (its root's device), once its chain is known to be intact.
        public var owner: String? = nil
    }

    /// What reading a notebook folder found.
    public struct Reading {
        /// The notebook: the union of every valid chain. Its record of its file is the chain it
        /// was loaded from (`baseChain`): this device's chain with most changes (so that `add`
        /// appends after it), else the folder's.
        public var document: Document
        /// One line for each chunk or file that was skipped, `FOLDER/NAME: why` (never fatal). The
        /// tools add to the lines of `damaged` chunks how to salvage them.
        public var warnings: [String]
        /// The file (its name in the folder) each of `warnings` is about, in the same order: how
        /// a caller tells which line is about which chunk, without reading the lines.
        public var warningFiles: [String] = []
        /// Every chunk the folder holds, valid or not, by name.
        public var chunks: [Chunk]
        /// The chunk whose chain the document was loaded from.
        public var baseChain: ChunkName
        /// The valid chunks no valid chunk extends, in name order.
        public var leaves: [ChunkName]
        /// The chain (bytes) of each leaf.
        public var leafChains: [String: [UInt8]]

        /// The damaged chunks (bytes that do not match their names) whose chain up to them is
        /// intact, by file name: `chainToSalvage(_:)` gives what salvage recovers their intact part from.
        public var damaged: [String] {
            chunks.filter { !$0.valid && !$0.bytes.isEmpty && chainToSalvage($0.name.description) != nil }.map(\.name.description)
        }

        /// The chain of valid chunks above chunk `fileName`, then its own bytes: a file whose
        /// intact part `Document.salvage` recovers. Nil when it is not in the folder, or a chunk
        /// above it is not valid.
        public func chainToSalvage(_ fileName: String) -> [UInt8]? {
            let byOwn = Dictionary(chunks.map { ($0.name.own, $0) }, uniquingKeysWith: { a, _ in a })
            guard let c = chunks.first(where: { $0.name.description == fileName }), !c.bytes.isEmpty else { return nil }
            var parts: [[UInt8]] = [c.bytes]
            var at = c.name.parent
            while let p = at {
                guard let parent = byOwn[p], parent.valid, parts.count <= chunks.count else { return nil }
                parts.append(parent.bytes)
                at = parent.name.parent
            }
            return parts.reversed().flatMap { $0 }
        }

        /// The chain from its root to the valid chunk `own` (an id): the bytes of an ordinary
        /// `.peernote` file. Nil when it is not in the folder, or a chunk of its chain is not valid.
        public func validChain(to own: String) -> [UInt8]? {
            let byOwn = Dictionary(chunks.map { ($0.name.own, $0) }, uniquingKeysWith: { a, _ in a })
            var parts: [[UInt8]] = []
            var at: String? = own
            while let o = at {
                guard let c = byOwn[o], c.valid, parts.count <= chunks.count else { return nil }
                parts.append(c.bytes)
                at = c.name.parent
            }
            return parts.reversed().flatMap { $0 }
        }

        /// The bytes of all valid chunks, added up.
        public var byteCount: Int { chunks.filter(\.valid).reduce(0) { $0 + $1.bytes.count } }
    }

    /// Reads the folder: every chunk checked against its name, every leaf's chain loaded and
    /// verified in full, the chains merged. A damaged, half-synced or orphaned chunk (its parent
    /// is not, or not yet, in the folder) is skipped with a warning and never deleted; files that
    /// are not chunks are ignored (a chunk-like name that is not a chunk's gets a warning).
    /// Fails only when no chunk can be read, or the folder cannot be listed.
    public func read() throws(DocumentFileError) -> Reading {
        var warnings: [String] = []
        var warningFiles: [String] = []
        /// A line about the file `file` of the folder: `FOLDER/FILE: what`.
        func warn(_ file: String, _ what: String) {
            warnings.append("\(path)/\(file): \(what)")
            warningFiles.append(file)
        }
        let names: [String]
        do { names = try listing() } catch { throw .file(error) }
        var chunks: [String: Chunk] = [:]
        for file in names {
            guard let name = ChunkName(file) else {
                if file.hasSuffix(Self.chunkSuffix) && !file.hasPrefix(".") {
                    warn(file, "not a chunk's name (a sync tool's conflict copy?); ignored")
                }
                continue
            }
            var bytes: [UInt8] = []
            do {
                bytes = try FileStore.read("\(path)/\(file)")
                if bytes.isEmpty { warn(file, "is empty (not completely synced yet?); skipped") }
            } catch {
                warn(file, "cannot be read (\(error.message)); skipped")
            }
            chunks[name.own] = Chunk(name: name, bytes: bytes, valid: false)
        }
        // Chain hashes, from the roots down: a chunk is valid when its chain's hash is its name.
        var hashers: [String: SHA256] = [:]
        var children: [String: [String]] = [:]
        for c in chunks.values { if let p = c.name.parent { children[p, default: []].append(c.name.own) } }
        var queue = chunks.values.filter { $0.name.parent == nil }.map(\.name.own).sorted()
        while let own = queue.popLast() {
            guard var chunk = chunks[own] else { continue }
            guard var h = chunk.name.parent.map({ hashers[$0] }) ?? chunk.name.device.map(Self.chainHasher) else { continue }
            h.update(data: chunk.bytes)
            if chunk.bytes.isEmpty {
                // Empty or unreadable: already said.
            } else if Self.id(h) != own {
                warn("\(chunk.name)", "damaged or incomplete (its bytes do not match its name); skipped")
            } else {
                chunk.valid = true
                chunk.owner = chunk.name.device ?? chunk.name.parent.flatMap { chunks[$0]?.owner }
                chunks[own] = chunk
                hashers[own] = h
                queue.append(contentsOf: (children[own] ?? []).sorted())
            }
        }
        // Chunks left out because a chunk before them is: one warning per cause, not per chunk
        // (a device whose first chunk has not arrived yet may have many after it). The cause
        // is the first chunk of the unreadable stretch: one whose parent is missing, or one
        // already warned of (damaged, empty, unreadable), whose followers are counted in a
        // line of their own.
        var orphans: [String: Int] = [:], followers: [String: [ChunkName]] = [:]
        for c in chunks.values where !c.valid && !c.bytes.isEmpty {
            // A chunk whose parent is valid was checked and warned of above; a root too.
            guard let parent = c.name.parent, hashers[parent] == nil else { continue }
            // Bounded: crafted names can make parents a cycle.
            var top = c, steps = 0
            while steps < chunks.count, let p = top.name.parent, let above = chunks[p], !above.valid {
                top = above
                steps += 1
            }
            if let p = top.name.parent, chunks[p] == nil {
                orphans[top.name.own, default: 0] += top.name.own == c.name.own ? 0 : 1
            } else {
                followers[top.name.own, default: []].append(c.name)
            }
        }
        for (own, after) in orphans.sorted(by: { $0.key < $1.key }) {
            guard let top = chunks[own], let parent = top.name.parent else { continue }
            let more = after == 0 ? "" : ", with \(after == 1 ? "the chunk" : "the \(after) chunks") after it"
            warn("\(top.name)", "its parent chunk \(parent) is not in the folder (not synced yet, or removed by a compaction); skipped\(more)")
        }
        // Named by a chunk right after the skipped one (the skipped one has its own line, with
        // its salvage hint where it has one).
        for (own, after) in followers.sorted(by: { $0.key < $1.key }) {
            let sorted = after.sorted { $0.description < $1.description }
            guard let first = sorted.first(where: { $0.parent == own }) ?? sorted.first else { continue }
            let more = after.count == 1 ? "" : ", with \(after.count - 1 == 1 ? "1 more chunk" : "\(after.count - 1) more chunks") after that one"
            warn("\(first)", "extends a chunk that was skipped; skipped too\(more)")
        }
        func chain(_ own: String) -> [UInt8] {
            var parts: [[UInt8]] = []
            var at: String? = own
            while let o = at, let c = chunks[o] { parts.append(c.bytes); at = c.name.parent }
            return parts.reversed().flatMap { $0 }
        }
        // Leaves: valid chunks that no valid chunk extends. A chain that does not load (a writer's
        // bug: its hash is right) is skipped, and its parent's chain tried in its place.
        var leafDocs: [(ChunkName, Document, [UInt8])] = []
        var pending = chunks.values.filter { c in c.valid && !(children[c.name.own] ?? []).contains { chunks[$0]?.valid == true } }.map(\.name)
        var tried = Set<String>()
        while !pending.isEmpty {
            pending.sort { $0.description < $1.description }
            let chains = pending.map { chain($0.own) }
            let results = Document.loadAll(chains)
            var next: [ChunkName] = []
            for (i, name) in pending.enumerated() {
                tried.insert(name.own)
                switch results[i] {
                case .success(let d): leafDocs.append((name, d, chains[i]))
                case .failure(let e):
                    chunks[name.own]?.valid = false
                    warn("\(name)", "its chain does not load (\(e)); skipped")
                    if let p = name.parent, !tried.contains(p), chunks[p]?.valid == true,
                       !(children[p] ?? []).contains(where: { chunks[$0]?.valid == true }), let parentChunk = chunks[p] {
                        next.append(parentChunk.name)
                    }
                }
            }
            pending = next
        }
        guard !leafDocs.isEmpty else {
            let why = chunks.isEmpty ? "holds no chunk (*.pnchunk)" : "holds no chunk that can be read (\(warnings.count) skipped)"
            throw .document(path: path, .invalidDocument(offset: 0, message: "notebook folder \(why)"))
        }
        // The base: this device's chain with most changes (ties: the shorter, then name order), else
        // the folder's; the others merged in.
        leafDocs.sort { a, b in
            let ownA = chunks[a.0.own]?.owner == device, ownB = chunks[b.0.own]?.owner == device
            if ownA != ownB { return ownA }
            if a.1.changeCount != b.1.changeCount { return a.1.changeCount > b.1.changeCount }
            if a.2.count != b.2.count { return a.2.count < b.2.count }
            return a.0.description < b.0.description
        }
        let base = leafDocs[0]
        var leaves: [ChunkName] = []
        var leafChains: [String: [UInt8]] = [:]
        leaves.append(base.0)
        leafChains[base.0.own] = base.2
        for (name, other, bytes) in leafDocs.dropFirst() {
            do throws(PeerNoteError) {
                _ = try base.1.merge(other)
                leaves.append(name)
                leafChains[name.own] = bytes
            } catch {
                chunks[name.own]?.valid = false
                warn("\(name)", "\(Self.mergeProblem(error)); skipped")
            }
        }
        leaves.sort { $0.description < $1.description }
        let all = chunks.values.sorted { $0.name.description < $1.name.description }
        return Reading(document: base.1, warnings: warnings, warningFiles: warningFiles, chunks: all, baseChain: base.0, leaves: leaves, leafChains: leafChains)
    }

    private static func mergeProblem(_ error: PeerNoteError) -> String {
        if case .unrelated = error { return "holds another notebook (no shared history with the rest of the folder)" }
        return "cannot be merged with the rest of the folder (\(error))"
    }

    /// The names in the folder (not `.` and `..`), sorted.
    func listing() throws(FileError) -> [String] {
        var st = stat()
        guard stat(path, &st) == 0 else { throw .reading(path, errno: errno) }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw .notAFolder(path: path) }
        guard let dir = opendir(path) else { throw .reading(path, errno: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    // MARK: Writing

    /// Makes a new notebook folder at `path` holding `document` as one root chunk of `device`.
    /// Refuses when anything is at `path`.
    public static func create(at path: String, _ document: Document, device: String = NotebookFolder.deviceTag) throws(FileError) {
        let folder = NotebookFolder(path, device: device)
        var st = stat()
        if lstat(folder.path, &st) == 0 { throw .alreadyExists(path: path) }
        let bytes = document.save(.compact)
        try Document.checkLoadable(bytes, writingTo: path)
        guard mkdir(folder.path, 0o777) == 0 else { throw .cannotCreateFolder(path: path, errno: errno) }
        FileStore.syncDirectory(of: folder.path)
        _ = try folder.place(bytes, as: ChunkName(parent: nil, device: device, own: chainID(bytes, device: device)))
    }

    /// What `add` wrote.
    public struct Added: Equatable, Sendable {
        /// The chunk written; nil when the folder held every change already.
        public var chunk: String?
        /// Its size in bytes.
        public var byteCount: Int
        /// What the compaction that followed did, when this device had more than
        /// `compactionThreshold` chunks in the folder.
        public var compaction: Compaction?
    }

    /// The device whose tree each chunk of `names` is in (its root's), where its chain of names
    /// reaches a root.
    static func owners(_ names: [ChunkName]) -> [String: String] {
        let byOwn = Dictionary(names.map { ($0.own, $0) }, uniquingKeysWith: { a, _ in a })
        var owner: [String: String] = [:]
        for n in names {
            var at = n
            var seen = 0
            while let p = at.parent, let up = byOwn[p], seen <= names.count { at = up; seen += 1 }
            if let d = at.device { owner[n.own] = d }
        }
        return owner
    }

    /// Adds to the folder what `document` holds and this device's chain lacks: one new chunk
    /// appended after the chain the document was read from (or last written as) when that is in
    /// this device's tree, else after this device's longest chain (the document merged into it),
    /// else, when this device has no chunk in the folder yet, one root chunk holding it all. A
    /// folder that holds another notebook (no shared history) is not written.
    /// Written to a temporary file, fsynced, linked into place, the folder fsynced; the chain is
    /// checked to load before (its new block read from the state the document holds of the
    /// chain when it holds one, `Document.checkSaveLoads`; else the chain whole). Needs no lock
    /// for correctness (each writer adds its own file); the tools take the document's lock so
    /// that local writers do not leave chains no one extends. When the chain it ends is longer than `compactionThreshold`
    /// chunks, compacts (`autoCompact`, with `grace`).
    @discardableResult
    public func add(_ document: Document, autoCompact: Bool = true, grace: Double = NotebookFolder.defaultGrace) throws(FileError) -> Added {
        var names = try listing().compactMap(ChunkName.init)
        let owner = Self.owners(names)
        var base = document
        var loaded = document.persisted?.bytes ?? []
        var parent: ChunkName?
        if !loaded.isEmpty {
            let id = Self.chainID(loaded, device: device)
            parent = names.first { $0.own == id && owner[$0.own] == device }
        }
        if parent == nil, !names.isEmpty, let reading = try? read() {
            // Not read from this device's tree: another notebook is refused; this one is merged
            // into this device's longest chain and appended there, or written as its first root.
            let relation = reading.document.relation(to: document)
            guard relation == .shared else {
                throw .anotherNotebook(path: path)
            }
            if owner[reading.baseChain.own] == device, let chain = reading.leafChains[reading.baseChain.own] {
                do throws(PeerNoteError) { _ = try reading.document.merge(document) } catch {
                    throw .cannotAddToFolder(path: path, error)
                }
                base = reading.document
                loaded = chain
                parent = reading.baseChain
            }
        }
        var written: ChunkName?
        var size = 0
        if let parent {
            let bytes = base.save(.incremental)
            if bytes.count > loaded.count, bytes.starts(with: loaded) {
                try checkLoadable(bytes, document: base)
                let own = Array(bytes[loaded.count...])
                written = try place(own, as: ChunkName(parent: parent.own, device: nil, own: Self.chainID(bytes, device: device)))
                size = own.count
            } else if bytes != loaded {
                (written, size) = try addRoot(base)
            }
        } else {
            (written, size) = try addRoot(base)
        }
        removeOwnTemporaries()
        var added = Added(chunk: written?.description, byteCount: size)
        // Compacts when the chain just written is longer than the threshold. Not by this device's
        // chunks in all: those a compaction covers stay for the grace period, and counting them
        // would write a whole new root at every write until they go.
        if autoCompact, let written, let now = try? listing().compactMap(ChunkName.init) {
            names = now
            if Self.chainLength(of: written, in: names) > Self.compactionThreshold {
                added.compaction = try? compact(grace: grace)
            }
        }
        return added
    }

    /// The number of chunks from `name` up to its root, following parents present in `names`.
    static func chainLength(of name: ChunkName, in names: [ChunkName]) -> Int {
        let byOwn = Dictionary(names.map { ($0.own, $0) }, uniquingKeysWith: { a, _ in a })
        var count = 1
        var at = name
        while let p = at.parent, let up = byOwn[p], count <= names.count { at = up; count += 1 }
        return count
    }

    /// `Document.checkLoadable(bytes)` for `bytes`, the chain `document` was read from (or last
    /// written as) with its new block appended: only that block is read, from the reader's state
    /// after the chain, when the document holds it (`Document.checkSaveLoads`), else the whole
    /// chain. Either way the verdict is a full load's. When it fails, the document's record of its
    /// chain is put back (without the reader's state: the next check reads the chain whole).
    private func checkLoadable(_ bytes: [UInt8], document: Document) throws(FileError) {
        // Without the verified state, which the check takes (a copy here would make it copy the log).
        var before = document.persisted
        before?.verified = nil
        do throws(FileError) { try document.checkSaveLoads(bytes, writingTo: path) } catch {
            document.persisted = before
            throw error
        }
    }

    private func addRoot(_ document: Document) throws(FileError) -> (ChunkName, Int) {
        let bytes = document.save(.compact)
        let name = ChunkName(parent: nil, device: device, own: Self.chainID(bytes, device: device))
        return (try place(bytes, as: name, checkedAlongside: { () throws(FileError) in try Document.checkLoadable(bytes, writingTo: path) }), bytes.count)
    }

    /// Puts `bytes` in the folder as chunk `name`: a temporary file (named for this device),
    /// fsynced, linked to its name, the folder fsynced. A chunk already there holds the same
    /// bytes (its name is their hash): nothing is written then. With `check` (a root's read-back,
    /// `Document.checkLoadable`), the chunk is linked into place only once `check` has passed;
    /// it runs while the temporary file is written and flushed on another thread
    /// (`FileStore.writeAtomically(_:to:permissionsLike:checkedAlongside:)`), and when it throws,
    /// nothing is left in the folder.
    func place(_ bytes: [UInt8], as name: ChunkName, checkedAlongside check: (() throws(FileError) -> Void)? = nil) throws(FileError) -> ChunkName {
        let target = "\(path)/\(name)"
        var st = stat()
        if lstat(target, &st) == 0 {
            try check?()
            return name
        }
        let tmp: FileStore.Temporary
        if let check {
            (_, tmp) = try FileStore.writeTemporary(bytes, beside: target, reportingAs: path, infix: temporaryInfix, checkedAlongside: check)
        } else {
            tmp = try FileStore.writeTemporary(bytes, beside: target, reportingAs: path, infix: temporaryInfix)
        }
        defer { tmp.release() }
        switch FileStore.place(tmp.path, at: target, link: { link($0, $1) }) {
        case .placed:
            FileStore.syncDirectory(of: target)
        case .exists:
            unlink(tmp.path)
        case .failed(let e):
            unlink(tmp.path)
            throw .cannotAddChunk(path: path, chunk: "\(name)", errno: e)
        }
        return name
    }

    /// `.tmp-DEVICE-`: temporary files name the device that made them, which alone removes them.
    var temporaryInfix: String { ".tmp-\(device)-" }

    /// Removes this device's temporary files older than `age` seconds on which no process holds
    /// a lock (a writer killed mid-write left them). Other devices' are left alone: one may still
    /// be writing it, and a sync tool would carry the removal back to it.
    @discardableResult
    public func removeOwnTemporaries(olderThan age: Double = NotebookFolder.temporaryAge) -> [String] {
        var removed: [String] = []
        for name in (try? listing()) ?? [] where name.hasPrefix(".") && name.contains(Self.chunkSuffix + temporaryInfix) {
            let file = "\(path)/\(name)"
            var st = stat()
            guard lstat(file, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(),
                  FileStore.isAtLeast(age, secondsAgo: FileStore.modificationTime(st)) else { continue }
            let fd = open(file, O_RDONLY)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            if unlink(file) == 0 { removed.append(file) }
        }
        return removed
    }

    // MARK: Compaction

    /// What `compact` did.
    public struct Compaction: Equatable, Sendable {
        /// This device's root chunk holding every change read (written now, or there already).
        public var root: String
        /// Whether this run wrote it.
        public var wroteRoot: Bool
        /// The chunks removed: this device's, every change of whose chains a root of this device
        /// that is older than the grace period holds.
        public var removed: [String]
        /// This device's chunks outside the new root's tree left for a later run (the root
        /// covering them is younger than the grace period).
        public var waiting: Int
    }

    /// Compacts this device's part of the folder in two steps that lose nothing while other
    /// devices write: (1) one root chunk of this device holding everything read, in canonical form
    /// (its bytes depend only on the set of changes: two devices that hold the same changes
    /// write identical bytes, under their own names); (2) removal of this device's chunks whose
    /// every change a root of this device holds, only once that root has been in the folder for
    /// `grace` seconds (its status-change time here), never of a chunk that a chunk not so
    /// covered (or skipped) extends. Other devices' chunks are never removed: only their device
    /// knows whether it still extends them. A second run after the grace period does what the
    /// first left waiting.
    public func compact(grace: Double = NotebookFolder.defaultGrace) throws(FileError) -> Compaction {
        let reading: Reading
        do { reading = try read() } catch {
            switch error {
            case .file(let e): throw e
            case .document(let p, let e): throw .doesNotLoad(path: p, e)
            }
        }
        let compact = reading.document.save(.compact)
        let rootName = ChunkName(parent: nil, device: device, own: Self.chainID(compact, device: device))
        let wrote = !reading.chunks.contains { $0.name == rootName }
        if wrote {
            _ = try place(compact, as: rootName, checkedAlongside: { () throws(FileError) in try Document.checkLoadable(compact, writingTo: path) })
        }
        let owner = Self.owners(reading.chunks.map(\.name))
        let byOwn = Dictionary(reading.chunks.map { ($0.name.own, $0) }, uniquingKeysWith: { a, _ in a })
        // (Bounded: crafted names may form a cycle, which no valid chunk is in.)
        func rootOf(_ name: ChunkName) -> String {
            var at = name
            var steps = 0
            while let p = at.parent, let c = byOwn[p], steps <= byOwn.count { at = c.name; steps += 1 }
            return at.own
        }
        // This device's roots old enough to remove what they cover.
        var roots: [(name: ChunkName, document: Document)] = []
        var candidates = reading.chunks.filter { $0.valid && $0.name.device == device }
        if wrote { candidates.append(Chunk(name: rootName, bytes: compact, valid: true)) }
        for c in candidates {
            var st = stat()
            guard stat("\(path)/\(c.name)", &st) == 0, FileStore.isAtLeast(grace, secondsAgo: FileStore.changeTime(st)),
                  let d = try? Document.load(c.bytes) else { continue }
            roots.append((c.name, d))
        }
        var coveredLeaves = Set<String>()
        for leaf in reading.leaves where owner[leaf.own] == device {
            guard let chain = reading.leafChains[leaf.own], let leafDoc = try? Document.load(chain) else { continue }
            let top = rootOf(leaf)
            if roots.contains(where: { $0.name.own != top && Self.holdsAll($0.document, of: leafDoc) }) {
                coveredLeaves.insert(leaf.own)
            }
        }
        // A chunk of this device goes when every chunk that extends it goes too (a covered leaf,
        // or one that leads only to them); a skipped chunk, or one that extends it, stays.
        var children: [String: [Chunk]] = [:]
        for c in reading.chunks { if let p = c.name.parent { children[p, default: []].append(c) } }
        var memo: [String: Bool] = [:]
        func removable(_ c: Chunk) -> Bool {
            if let m = memo[c.name.own] { return m }
            let kids = children[c.name.own] ?? []
            let ok = c.valid && kids.allSatisfy(removable) && (!kids.isEmpty || coveredLeaves.contains(c.name.own))
            memo[c.name.own] = ok
            return ok
        }
        var removed: [String] = []
        var waiting = 0
        for c in reading.chunks where owner[c.name.own] == device && rootOf(c.name) != rootName.own {
            if removable(c) {
                if unlink("\(path)/\(c.name)") == 0 { removed.append(c.name.description) }
            } else if c.valid {
                waiting += 1
            }
        }
        if !removed.isEmpty { FileStore.syncDirectory(of: "\(path)/.") }
        return Compaction(root: rootName.description, wroteRoot: wrote, removed: removed, waiting: waiting)
    }

    /// Whether `container` holds every change (and payload field) of `other`, a copy of it.
    static func holdsAll(_ container: Document, of other: Document) -> Bool {
        guard container.relation(to: other) == .shared else { return false }
        let lacking = container.lacking(from: other)
        return lacking.changesByAuthor.isEmpty && lacking.fields == 0
    }
}
