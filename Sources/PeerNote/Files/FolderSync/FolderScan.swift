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

/// One copy of a notebook found under a sync folder: a `.peernote` file, a notebook folder
/// (`NAME.peernote/`, read as one copy), a conflict copy beside either, or a sync tool's
/// conflict copy of a chunk file inside a notebook folder (`chunkCopyIn`).
public struct FoundFile: Equatable, Sendable {
    /// The path as shown: the folder as given, then the path inside it.
    public var path: String
    /// The folder it was found under, as given.
    public var root: String
    /// The path inside the folder (`sub/notes.peernote`).
    public var relative: String
    public var kind: SyncName
    /// Device and inode, to notice one file reached twice (nested or repeated folders).
    public var identity: FileIdentity
    /// Whether it is a notebook folder (a directory of chunk files), not a single file.
    public var isFolder = false
    /// For a conflict copy of a chunk file (`X.sync-conflict-….pnchunk`): the notebook folder it
    /// is in, by its path inside the root (`kind` then names the chunk it is a copy of).
    public var chunkCopyIn: String?

    public init(path: String, root: String, relative: String, kind: SyncName, identity: FileIdentity,
                isFolder: Bool = false, chunkCopyIn: String? = nil) {
        self.path = path
        self.root = root
        self.relative = relative
        self.kind = kind
        self.identity = identity
        self.isFolder = isFolder
        self.chunkCopyIn = chunkCopyIn
    }

    var isConflictCopy: Bool { if case .conflictCopy = kind { true } else { false } }
}

/// A file's device and inode.
public struct FileIdentity: Hashable, Sendable {
    public var device: UInt64
    public var inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// Something found under a folder that a folder sync does not touch, and why.
public struct SkippedEntry: Equatable, Sendable {
    /// The folder it is in, and its name's bytes (a name that is not UTF-8 cannot be a `String`
    /// without naming another file): `path` joins them, `\xNN` for bytes that are not UTF-8
    /// when shown (the tools' `UTF8Bytes.shown`).
    public var folder: String
    public var nameBytes: [UInt8]
    public var reason: Reason

    /// Why an entry was skipped.
    public enum Reason: Equatable, Sendable {
        /// A folder that could not be listed (`strerror`'s text); `nameBytes` is empty, `folder` is it.
        case unreadableFolder(String)
        case symbolicLinkToFolder
        case symbolicLink
        /// A .peernote name that is no regular file (a FIFO, a device, a socket).
        case notRegularFile
        /// A name that is not valid UTF-8: a file (by its name's ending, a .peernote one) or a
        /// folder, which may hold some.
        case nameNotUTF8(isFolder: Bool)
    }

    /// The path, with a name that is not UTF-8 decoded as `String(decoding:)` does (U+FFFD); the
    /// tools show those bytes as `\xNN` instead.
    public var path: String {
        nameBytes.isEmpty ? folder : FolderScan.join(folder, String(decoding: nameBytes, as: UTF8.self))
    }
}

/// Walks sync folders: never follows symbolic links, skips hidden entries, notes what it passes over.
public struct FolderScan {
    public private(set) var files: [FoundFile] = []
    public private(set) var skipped: [SkippedEntry] = []
    /// Folders and .peernote files passed over because their names are not valid UTF-8 (also in `skipped`).
    public private(set) var namesNotUTF8: [SkippedEntry] = []
    /// The .peernote names that are symbolic links (by `root + "/" + relative`), and whether
    /// each leads to a folder: a conflict copy beside one says why it was kept.
    public private(set) var linksPassedOver: [String: Bool] = [:]
    /// How many of `namesNotUTF8` are .peernote files (the rest are folders).
    public private(set) var notebooksNamedNotUTF8 = 0
    /// The folders (`root + "\u{0}" + relative`, "" for the root itself) that hold a hidden file
    /// named as a writer's temporary file (`.NAME.tmp-XXXXXX`, `.swap-`, `.kept-`): a killed
    /// writer may have left it, so the notebooks there are looked at for leftovers.
    public private(set) var foldersWithLeftovers = Set<String>()
    /// The names of those hidden files, by folder (the keys of `foldersWithLeftovers`).
    private var leftoverNames: [String: [[UInt8]]] = [:]
    private var seen = Set<FileIdentity>()
    private var visited = Set<FileIdentity>()
    private let found: (Int) -> Void

    /// `found` is told the number of .peernote files found so far, after each one.
    public init(found: @escaping (Int) -> Void = { _ in }) { self.found = found }

    /// Scans every folder in `roots` (each must be a directory; a symbolic link given as a root is followed).
    public mutating func scan(_ roots: [String]) throws(FolderSyncError) {
        for root in roots {
            var st = stat()
            guard stat(root, &st) == 0 else {
                throw .rootUnreadable(.reading(root, errno: errno))
            }
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw .rootNotAFolder(root) }
        }
        for root in roots { walk(root: root, relative: "") }
    }

    /// One name in a folder, as the bytes the folder holds.
    private struct Entry {
        var bytes: [UInt8]
        /// The name, or nil when its bytes are not valid UTF-8 (a `String` of them would name another file).
        var name: String? {
            let decoded = String(decoding: bytes, as: UTF8.self)
            return decoded.utf8.elementsEqual(bytes) ? decoded : nil
        }
        var isHidden: Bool { bytes.first == UInt8(ascii: ".") }
        /// The order entries are searched and listed in: by name (a name that is not UTF-8 as it would decode).
        var sortKey: String { String(decoding: bytes, as: UTF8.self) }
        /// `dir/NAME` as a C path, for `lstat` and `stat` on any name.
        func path(in dir: String) -> [CChar] {
            var path = Array(dir.utf8)
            if !path.isEmpty && path.last != UInt8(ascii: "/") { path.append(UInt8(ascii: "/")) }
            return (path + bytes).map { CChar(bitPattern: $0) } + [0]
        }
    }

    /// Why a folder could not be listed (`strerror`'s text).
    private struct ListingError: Error { var text: String }

    /// The entries of `dir` (without `.` and `..`), or why they cannot be read.
    private static func entries(of dir: String) -> Result<[Entry], ListingError> {
        guard let stream = opendir(dir) else { return .failure(ListingError(text: FileStore.errnoText())) }
        defer { closedir(stream) }
        var entries: [Entry] = []
        while let entry = readdir(stream) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if bytes != [0x2E] && bytes != [0x2E, 0x2E] { entries.append(Entry(bytes: bytes)) }
        }
        return .success(entries)
    }

    private mutating func walk(root: String, relative: String) {
        let dir = relative.isEmpty ? root : Self.join(root, relative)
        // A folder reached twice (a DIR inside another, or given twice) is searched once.
        var st = stat()
        guard stat(dir, &st) == 0, visited.insert(FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))).inserted else { return }
        let entries: [Entry]
        switch Self.entries(of: dir) {
        case .success(let list): entries = list.map { ($0.sortKey, $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        case .failure(let why):
            skipped.append(SkippedEntry(folder: dir, nameBytes: [], reason: .unreadableFolder(why.text)))
            return
        }
        let temporaries = entries.filter { $0.isHidden && Self.looksLikeTemporary($0.bytes) }.map(\.bytes)
        if !temporaries.isEmpty {
            foldersWithLeftovers.insert(root + "\u{0}" + relative)
            leftoverNames[root + "\u{0}" + relative] = temporaries
        }
        for entry in entries where !entry.isHidden {
            guard let name = entry.name else {
                notUTF8(entry, in: dir)
                continue
            }
            let rel = relative.isEmpty ? name : relative + "/" + name
            let path = Self.join(root, rel)
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            let type = st.st_mode & S_IFMT
            let kind = SyncName.classify(name)
            if type == S_IFDIR && kind != nil {
                // A notebook folder is one copy of its notebook: not searched for other notebooks;
                // only the conflict copies a sync tool made of its chunk files are looked for.
                let identity = FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
                guard seen.insert(identity).inserted else { continue }
                files.append(FoundFile(path: path, root: root, relative: rel, kind: .notebook, identity: identity, isFolder: true))
                found(files.count)
                chunkCopies(in: path, root: root, relative: rel)
            } else if type == S_IFDIR {
                walk(root: root, relative: rel)
            } else if type == S_IFLNK {
                var target = stat()
                let pointsToDirectory = stat(path, &target) == 0 && (target.st_mode & S_IFMT) == S_IFDIR
                if kind != nil || pointsToDirectory {
                    skipped.append(SkippedEntry(folder: dir, nameBytes: entry.bytes, reason: pointsToDirectory ? .symbolicLinkToFolder : .symbolicLink))
                }
                if kind == .notebook { linksPassedOver[root + "/" + rel] = pointsToDirectory }
            } else if let kind {
                guard type == S_IFREG else {
                    skipped.append(SkippedEntry(folder: dir, nameBytes: entry.bytes, reason: .notRegularFile))
                    continue
                }
                let identity = FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
                guard seen.insert(identity).inserted else { continue }
                files.append(FoundFile(path: path, root: root, relative: rel, kind: kind, identity: identity))
                found(files.count)
            }
        }
    }

    /// The sync tools' conflict copies of chunk files in the notebook folder `folder` (regular
    /// files, not hidden, with UTF-8 names), as conflict copies of the chunk they name.
    private mutating func chunkCopies(in folder: String, root: String, relative: String) {
        guard case .success(let entries) = Self.entries(of: folder) else { return }
        for entry in entries.sorted(by: { $0.sortKey < $1.sortKey }) where !entry.isHidden {
            guard let name = entry.name, case .conflictCopy(let chunk, let tool)? = SyncName.classifyChunk(name) else { continue }
            let path = Self.join(folder, name)
            var st = stat()
            guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            let identity = FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
            guard seen.insert(identity).inserted else { continue }
            files.append(FoundFile(path: path, root: root, relative: relative + "/" + name, kind: .conflictCopy(original: chunk, tool: tool),
                                   identity: identity, chunkCopyIn: relative))
            found(files.count)
        }
    }

    /// An entry of `dir` whose name is not valid UTF-8: a path made from it would name another
    /// file, so it cannot be synced. A .peernote file (by its name's ending) or a folder, which
    /// may hold some, is skipped and reported; a symbolic link is never followed anyway; other
    /// files are not sync's business.
    private mutating func notUTF8(_ entry: Entry, in dir: String) {
        var st = stat()
        guard lstat(entry.path(in: dir), &st) == 0 else { return }
        let type = st.st_mode & S_IFMT
        let looksLikeNotebook = SyncName.classify(String(decoding: entry.bytes, as: UTF8.self)) != nil
        if type == S_IFLNK {
            var target = stat()
            let pointsToDirectory = stat(entry.path(in: dir), &target) == 0 && (target.st_mode & S_IFMT) == S_IFDIR
            if looksLikeNotebook || pointsToDirectory {
                skipped.append(SkippedEntry(folder: dir, nameBytes: entry.bytes, reason: pointsToDirectory ? .symbolicLinkToFolder : .symbolicLink))
            }
        } else if type == S_IFDIR || looksLikeNotebook {
            let skip = SkippedEntry(folder: dir, nameBytes: entry.bytes, reason: .nameNotUTF8(isFolder: type == S_IFDIR))
            skipped.append(skip)
            namesNotUTF8.append(skip)
            if type != S_IFDIR { notebooksNamedNotUTF8 += 1 }
        }
    }

    /// Whether the scan saw beside `file` a name its writers give their temporary files (what
    /// `FileStore.leftoverCandidates` lists, told from the scan's reading of the folder instead
    /// of a new one: a folder of n notebooks is not read again once per notebook).
    public func sawLeftovers(of file: FoundFile) -> Bool {
        let slash = file.relative.lastIndex(of: "/")
        let folder = slash.map { String(file.relative[..<$0]) } ?? ""
        guard let names = leftoverNames[file.root + "\u{0}" + folder] else { return false }
        let name = slash.map { String(file.relative[file.relative.index(after: $0)...]) } ?? file.relative
        let prefixes = [FileStore.temporaryInfix, FileStore.swapInfix, FileStore.keptInfix].map { Array(FileStore.temporaryPrefix(forName: name, infix: $0).utf8) }
        return names.contains { entry in
            prefixes.contains { prefix in
                entry.count == prefix.count + 6 && entry.starts(with: prefix) && entry.suffix(6).allSatisfy(FileStore.isASCIIAlphanumeric)
            }
        }
    }

    /// Whether `name` is named as a writer's temporary file: `.…tmp-XXXXXX`, `.…swap-XXXXXX` or
    /// `.…kept-XXXXXX`, six ASCII letters or digits at the end (see `FileStore.leftoverCandidates`).
    public static func looksLikeTemporary(_ bytes: [UInt8]) -> Bool {
        guard bytes.first == UInt8(ascii: "."), bytes.count > 11,
              bytes.suffix(6).allSatisfy(FileStore.isASCIIAlphanumeric) else { return false }
        let head = bytes.dropLast(6)
        return [".tmp-", ".swap-", ".kept-"].contains { head.count > $0.utf8.count && head.suffix($0.utf8.count).elementsEqual($0.utf8) }
    }

    /// The last component of a path inside a folder (`a/b` → `b`).
    static func lastComponent(_ rel: String) -> String { rel.split(separator: "/").last.map(String.init) ?? rel }

    static func join(_ root: String, _ rel: String) -> String { root.hasSuffix("/") ? root + rel : root + "/" + rel }
}
