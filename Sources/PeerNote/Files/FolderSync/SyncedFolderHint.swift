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

/// A service that syncs whole files between devices and settles a file changed on two devices
/// by keeping one and renaming the other to a conflict copy; known by the marker it keeps in
/// the folders it syncs.
public enum SyncService: String, Equatable, Sendable, CustomStringConvertible {
    /// `.stfolder` at the top of each synced folder.
    case syncthing = "Syncthing"
    /// `.dropbox` (a file; `~/.dropbox`, the client's settings folder, is no marker) and
    /// `.dropbox.cache` at the top of the Dropbox folder.
    case dropbox = "Dropbox"
    /// The client's journal, `.sync_*.db` or `._sync_*.db`, at the top of each synced folder.
    case nextcloud = "Nextcloud/ownCloud"

    public var description: String { rawValue }

    /// The service whose marker `name` (an entry of a folder) is, if any.
    static func marked(by name: String) -> SyncService? {
        switch name {
        case ".stfolder": return .syncthing
        case ".dropbox", ".dropbox.cache": return .dropbox
        default:
            if (name.hasPrefix(".sync_") || name.hasPrefix("._sync_")) && name.hasSuffix(".db") { return .nextcloud }
            return nil
        }
    }
}

/// Single-file notebooks a folder sync found in folders that a file-syncing service manages,
/// and how it knows: such a notebook, changed on two devices before they see each other's
/// change, becomes a conflict copy, and the service may cap, overwrite or skip those (docs/SYNC.md);
/// a notebook folder (peernote(5)), in which no two devices write one file, avoids it. The tools
/// turn it into one hint per run. `singleFiles` is never empty.
public struct SyncedFolderHint: Equatable, Sendable {
    /// What shows that a sync service manages the folder.
    public enum Evidence: Equatable, Sendable {
        /// The service's marker (`path`), in the notebook's folder or a folder above it.
        case marker(path: String, service: SyncService)
        /// Conflict copies a sync tool made beside the notebooks (`count`, the first one's maker).
        case conflictCopies(count: Int, tool: ConflictCopyMaker)
    }

    public var evidence: Evidence
    /// The single-file notebooks (`NAME.peernote` files, not conflict copies) in such folders, as found.
    public var singleFiles: [String]

    /// The hint for the files a scan found, or nil when none is a single-file notebook in a
    /// folder a service manages. Markers are looked for in each notebook's folder and every
    /// folder above it (a service marks the top of what it syncs, which may be above the folder
    /// given); conflict copies of rsync `--backup` and of interrupted writes are no evidence.
    static func find(_ files: [FoundFile]) -> SyncedFolderHint? {
        var notebooks: [String: FoundFile] = [:]
        for file in files where file.kind == .notebook && !file.isFolder { notebooks[file.path] = file }
        var single: [String] = []
        var listed = Set<String>()
        func add(_ path: String) { if listed.insert(path).inserted { single.append(path) } }

        var copies = 0
        var firstTool: ConflictCopyMaker?
        for file in files {
            guard case .conflictCopy(let original, let tool) = file.kind, tool != .rsyncBackup, tool != .keptAside, file.chunkCopyIn == nil else { continue }
            copies += 1
            if firstTool == nil { firstTool = tool }
            let parent = FolderSync.folder(of: file.path)
            let beside = parent.isEmpty ? original : FolderScan.join(parent, original)
            if notebooks[beside] != nil { add(beside) }
        }

        var markerOf: [String: (path: String, service: SyncService)?] = [:]
        var firstMarker: (path: String, service: SyncService)?
        for file in files where file.kind == .notebook && !file.isFolder {
            guard let folder = absoluteFolder(of: file.path), let found = marker(at: folder, cache: &markerOf) else { continue }
            if firstMarker == nil { firstMarker = found }
            add(file.path)
        }
        let ordered = files.map(\.path).filter { listed.contains($0) }
        guard !ordered.isEmpty else { return nil }
        if let firstMarker { return SyncedFolderHint(evidence: .marker(path: firstMarker.path, service: firstMarker.service), singleFiles: ordered) }
        guard let firstTool else { return nil }
        return SyncedFolderHint(evidence: .conflictCopies(count: copies, tool: firstTool), singleFiles: ordered)
    }

    /// The first service marker in `folder` or a folder above it (each folder listed once per run).
    private static func marker(at folder: String, cache: inout [String: (path: String, service: SyncService)?]) -> (path: String, service: SyncService)? {
        var walked: [String] = []
        var current = folder
        var result: (path: String, service: SyncService)?
        while true {
            if let known = cache[current] { result = known; break }
            walked.append(current)
            if let service = markerEntry(in: current) {
                result = (FolderScan.join(current, service.name), service.service)
                break
            }
            if current == "/" || current.isEmpty { break }
            let parent = FolderSync.folder(of: current)
            current = parent.isEmpty ? "/" : parent
        }
        for dir in walked { cache[dir] = result }
        return result
    }

    /// A service marker among `dir`'s entries: its name and service.
    private static func markerEntry(in dir: String) -> (name: String, service: SyncService)? {
        guard let stream = opendir(dir) else { return nil }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            guard bytes.first == UInt8(ascii: ".") else { continue }
            let name = String(decoding: bytes, as: UTF8.self)
            guard let service = SyncService.marked(by: name) else { continue }
            // `~/.dropbox` is the client's settings folder, not a synced folder's marker (a file).
            var st = stat()
            if name == ".dropbox", lstat(FolderScan.join(dir, name), &st) != 0 || (st.st_mode & S_IFMT) != S_IFREG { continue }
            return (name, service)
        }
        return nil
    }

    /// The absolute folder holding `path`, symbolic links resolved; nil when it cannot be resolved.
    private static func absoluteFolder(of path: String) -> String? {
        let parent = FolderSync.folder(of: path)
        guard let resolved = realpath(parent.isEmpty ? "." : parent, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
