#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNoteCLISupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a file name says about a file for `sync`: a notebook, a conflict copy a sync tool left beside one, or neither.
enum SyncName: Equatable {
    /// `NAME.peernote`.
    case notebook
    /// A copy a sync tool made when two devices changed `original` (a name in the same folder).
    case conflictCopy(original: String, tool: String)

    /// Classifies a file name (not a path); nil when it is not a .peernote name.
    ///
    /// - Syncthing: `NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.peernote`
    /// - Dropbox: `NAME (Someone's conflicted copy YYYY-MM-DD).peernote`; Nextcloud: `NAME (conflicted copy YYYY-MM-DD HHMMSS).peernote`
    /// - Nextcloud before 3.x: `NAME_conflict-YYYYMMDD-HHMMSS.peernote`
    /// - Unison (`copyonconflict`): `NAME (conflict_on_YYYY-MM-DD).peernote`, `NAME (conflict #1_on_…)`
    /// - rsync `--backup`: `NAME.peernote~`
    ///
    /// A copy of a conflict copy (two devices changed the conflict copy itself: Syncthing names
    /// it `NAME.sync-conflict-A.sync-conflict-B.peernote`, syncthing issue #1658; a Dropbox copy of
    /// a Syncthing copy, an rsync backup of either, a backup of a backup `NAME.peernote~~`) carries
    /// every marker: all are stripped, so `original` is always the notebook's own name. `tool`
    /// names the outermost marker, the tool that made this file.
    static func classify(_ name: String) -> SyncName? {
        guard let outer = peel(name) else {
            let ext = ".peernote"
            return name.hasSuffix(ext) && name.count > ext.count ? .notebook : nil
        }
        // Each step strips a marker, so the name gets shorter and the loop ends.
        var original = outer.original
        while let inner = peel(original) { original = inner.original }
        return .conflictCopy(original: original, tool: outer.tool)
    }

    /// The name one conflict marker was added to, and the tool that adds it; nil when `name`
    /// carries none (a notebook's name, or not a .peernote name).
    private static func peel(_ name: String) -> (original: String, tool: String)? {
        let ext = ".peernote"
        if name.hasSuffix("~") {
            // rsync --backup's copy of a .peernote name (a notebook, a conflict copy, or another backup).
            let original = String(name.dropLast())
            return classify(original) != nil ? (original, "rsync backup") : nil
        }
        guard name.hasSuffix(ext), name.count > ext.count else { return nil }
        let stem = String(name.dropLast(ext.count))
        if let base = match(stem, #/(.+)\.sync-conflict-[0-9]{8}-[0-9]{6}-[A-Za-z0-9]+/#) {
            // pnmerge and peernote name a version they found mid-write and kept aside (see
            // FileStore.removeStaleTemporaries) with Syncthing's pattern and device "peernote"
            // ("peernote2" and on for a second one in the same second).
            let keptAside = stem.wholeMatch(of: #/.*-peernote[0-9]*/#) != nil
            return (base + ext, keptAside ? "copy kept aside by an interrupted write" : "Syncthing conflict copy")
        }
        if let base = match(stem, #/(.+)_conflict-[0-9]{8}-[0-9]{6}/#) {
            return (base + ext, "Nextcloud conflict copy")
        }
        if let (base, inner) = parenthesized(stem) {
            let lower = inner.lowercased()
            let dated = lower.contains(#/[0-9]{4}-[0-9]{2}-[0-9]{2}/#)
            if dated && lower.contains("conflicted copy") {
                return (base + ext, "Dropbox/Nextcloud conflicted copy")
            }
            if dated && lower.hasPrefix("conflict") {
                return (base + ext, "Unison conflict copy")
            }
        }
        return nil
    }

    /// The first capture group when `pattern` matches all of `text`.
    private static func match(_ text: String, _ pattern: Regex<(Substring, Substring)>) -> String? {
        text.wholeMatch(of: pattern).map { String($0.output.1) }
    }

    /// `NAME (INNER)` split at the outermost final parenthesis that holds "conflict": (NAME, INNER).
    /// INNER may itself hold parentheses (Dropbox adds ` (1)` to repeated copies).
    private static func parenthesized(_ stem: String) -> (String, String)? {
        guard stem.hasSuffix(")") else { return nil }
        var search = stem.startIndex ..< stem.endIndex
        while let open = stem[search].ranges(of: " (").last {
            let inner = String(stem[open.upperBound ..< stem.index(before: stem.endIndex)])
            let base = String(stem[..<open.lowerBound])
            if !base.isEmpty && inner.lowercased().contains("conflict") { return (base, inner) }
            search = stem.startIndex ..< open.lowerBound
        }
        return nil
    }
}

/// One `.peernote` file (or conflict copy) found under a sync folder.
struct FoundFile {
    /// The path as shown: the folder as given, then the path inside it.
    var path: String
    /// The folder it was found under, as given.
    var root: String
    /// The path inside the folder (`sub/notes.peernote`).
    var relative: String
    var kind: SyncName
    /// Device and inode, to notice one file reached twice (nested or repeated folders).
    var identity: FileIdentity
}

/// A file's device and inode.
struct FileIdentity: Hashable {
    var device: UInt64
    var inode: UInt64
}

/// Something found under a folder that `sync` does not touch, and why.
struct SkippedEntry {
    var path: String
    var reason: String
}

/// Walks sync folders: never follows symbolic links, skips hidden entries, notes what it passes over.
struct SyncScanner {
    var files: [FoundFile] = []
    var skipped: [SkippedEntry] = []
    /// Folders and .peernote files passed over because their names are not valid UTF-8 (also in `skipped`).
    var namesNotUTF8: [SkippedEntry] = []
    /// The .peernote names that are symbolic links (by `root + "/" + relative`), with what they link
    /// to: a conflict copy beside one says why it was kept.
    var linksPassedOver: [String: String] = [:]
    /// How many of `namesNotUTF8` are .peernote files (the rest are folders).
    var notebooksNamedNotUTF8 = 0
    /// The folders (`root + "\u{0}" + relative`, "" for the root itself) that hold a hidden file
    /// named as a writer's temporary file (`.NAME.tmp-XXXXXX`, `.swap-`, `.kept-`): a killed
    /// writer may have left it, so the notebooks there are looked at for leftovers.
    var foldersWithLeftovers = Set<String>()
    private var seen = Set<FileIdentity>()
    private var visited = Set<FileIdentity>()
    private var progress: SyncProgress?

    init(progress: SyncProgress?) { self.progress = progress }

    /// Scans every folder in `roots` (each must be a directory; a symbolic link given as a root is followed).
    mutating func scan(_ roots: [String]) throws(CLIFailure) {
        for root in roots {
            var st = stat()
            guard stat(root, &st) == 0 else {
                throw CLIFailure(.noInput, "\(root): \(String(cString: strerror(errno)))")
            }
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw CLIFailure(.noInput, "\(root): is not a directory") }
        }
        for root in roots { walk(root: root, relative: "") }
    }

    private mutating func walk(root: String, relative: String) {
        let dir = relative.isEmpty ? root : join(root, relative)
        // A folder reached twice (a DIR inside another, or given twice) is searched once.
        var st = stat()
        guard stat(dir, &st) == 0, visited.insert(FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))).inserted else { return }
        let entries: [PathText.DirectoryEntry]
        switch PathText.entriesOfDirectory(dir) {
        case .success(let list): entries = list.map { ($0.sortKey, $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        case .failure(let why):
            skipped.append(SkippedEntry(path: dir, reason: "cannot read the folder (\(why))"))
            return
        }
        if entries.contains(where: { $0.isHidden && Self.looksLikeTemporary($0.bytes) }) {
            foldersWithLeftovers.insert(root + "\u{0}" + relative)
        }
        for entry in entries where !entry.isHidden {
            guard let name = entry.name else {
                notUTF8(entry, in: dir)
                continue
            }
            let rel = relative.isEmpty ? name : relative + "/" + name
            let path = join(root, rel)
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            let type = st.st_mode & S_IFMT
            let kind = SyncName.classify(name)
            if type == S_IFDIR {
                walk(root: root, relative: rel)
            } else if type == S_IFLNK {
                var target = stat()
                let pointsToDirectory = stat(path, &target) == 0 && (target.st_mode & S_IFMT) == S_IFDIR
                if kind != nil || pointsToDirectory {
                    skipped.append(SkippedEntry(path: path, reason: pointsToDirectory ? "symbolic link to a folder, not followed" : "symbolic link, not followed"))
                }
                if kind == .notebook { linksPassedOver[root + "/" + rel] = pointsToDirectory ? "symbolic link to a folder" : "symbolic link" }
            } else if let kind {
                guard type == S_IFREG else {
                    skipped.append(SkippedEntry(path: path, reason: "not a regular file"))
                    continue
                }
                let identity = FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
                guard seen.insert(identity).inserted else { continue }
                files.append(FoundFile(path: path, root: root, relative: rel, kind: kind, identity: identity))
                progress?.update("scanning: \(files.count) .peernote files found")
            }
        }
    }

    /// An entry of `dir` whose name is not valid UTF-8: a path made from it would name another
    /// file, so it cannot be synced. A .peernote file (by its name's ending) or a folder, which
    /// may hold some, is skipped and reported; a symbolic link is never followed anyway; other
    /// files are not sync's business.
    private mutating func notUTF8(_ entry: PathText.DirectoryEntry, in dir: String) {
        var st = stat()
        guard lstat(entry.path(in: dir), &st) == 0 else { return }
        let type = st.st_mode & S_IFMT
        let shownPath = join(dir, entry.shown)
        let looksLikeNotebook = SyncName.classify(String(decoding: entry.bytes, as: UTF8.self)) != nil
        if type == S_IFLNK {
            var target = stat()
            let pointsToDirectory = stat(entry.path(in: dir), &target) == 0 && (target.st_mode & S_IFMT) == S_IFDIR
            if looksLikeNotebook || pointsToDirectory {
                skipped.append(SkippedEntry(path: shownPath, reason: pointsToDirectory ? "symbolic link to a folder, not followed" : "symbolic link, not followed"))
            }
        } else if type == S_IFDIR || looksLikeNotebook {
            let what = type == S_IFDIR ? "folder" : "file"
            let entry = SkippedEntry(path: shownPath, reason: "name is not valid UTF-8 (bytes shown as \\xNN); rename the \(what) to a UTF-8 name to sync \(type == S_IFDIR ? "the notebooks in it" : "it")")
            skipped.append(entry)
            namesNotUTF8.append(entry)
            if type != S_IFDIR { notebooksNamedNotUTF8 += 1 }
        }
    }

    /// Whether `name` is named as a writer's temporary file: `.…tmp-XXXXXX`, `.…swap-XXXXXX` or
    /// `.…kept-XXXXXX`, six ASCII letters or digits at the end (see `FileStore.leftoverCandidates`).
    static func looksLikeTemporary(_ bytes: [UInt8]) -> Bool {
        guard bytes.first == UInt8(ascii: "."), bytes.count > 11,
              bytes.suffix(6).allSatisfy({ (0x30 ... 0x39).contains($0) || (0x41 ... 0x5A).contains($0) || (0x61 ... 0x7A).contains($0) }) else { return false }
        let head = bytes.dropLast(6)
        return [".tmp-", ".swap-", ".kept-"].contains { head.count > $0.utf8.count && head.suffix($0.utf8.count).elementsEqual($0.utf8) }
    }

    private func join(_ root: String, _ rel: String) -> String { root.hasSuffix("/") ? root + rel : root + "/" + rel }
}

extension PathText.DirectoryEntry {
    /// The order entries are searched and listed in: by name (a name that is not UTF-8 as it would decode).
    fileprivate var sortKey: String { name ?? String(decoding: bytes, as: UTF8.self) }
}

/// A progress line on standard error, only when it is a terminal and only once work has taken a moment.
final class SyncProgress {
    private let start = Date()
    private var last = Date.distantPast
    private var shown = false

    /// A progress line when standard error is a terminal and the process's own streams are in use; else nil.
    static func forCurrentConsole() -> SyncProgress? {
        guard Console.current is StandardStreams, isatty(2) == 1 else { return nil }
        return SyncProgress()
    }

    func update(_ text: String) {
        let now = Date()
        guard now.timeIntervalSince(start) > 0.3, now.timeIntervalSince(last) > 0.1 else { return }
        last = now
        shown = true
        writeAll(Array(("\r\u{1B}[K" + text).utf8), to: 2)
    }

    /// Clears the line (if one was shown) before the summary is printed.
    func finish() {
        if shown { writeAll(Array("\r\u{1B}[K".utf8), to: 2) }
        shown = false
    }
}
