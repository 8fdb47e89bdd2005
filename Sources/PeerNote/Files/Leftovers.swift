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
import CFileSystem

extension FileStore {

    /// Temporary files are named `.NAME` + this + 6 characters of `mkstemp`.
    static let temporaryInfix = ".tmp-"

    /// `.NAME.tmp-`, the start of the temporary files' names for the file NAME. A name too long
    /// for that to fit in a file name (255 bytes with mkstemp's six characters) is cut to its
    /// first 243 bytes (at a character boundary), so that a file with a name of up to 255 bytes
    /// can still be written.
    static func temporaryPrefix(forName name: String, infix: String = temporaryInfix) -> String {
        let room = 255 - 1 - infix.utf8.count - 6
        var kept = Substring(name)
        while kept.utf8.count > room { kept = kept.dropLast() }
        return "." + kept + infix
    }

    /// What a temporary file is renamed to just before it is exchanged with the file it replaces
    /// (see `replace(_:at:expecting:)`): `.NAME.swap-XXXXXX`.
    static let swapInfix = ".swap-"

    /// Where `replace(_:at:expecting:)` keeps another writer's version it took out of place
    /// (`ReplaceOutcome.changedTwice`) until its caller has written a file that includes it:
    /// `.NAME.kept-XXXXXX`.
    static let keptInfix = ".kept-"

    /// Removes the temporary files that writers of `path` (of the file it points to, when it is a
    /// symbolic link) left behind when they were killed mid-write: `.NAME.tmp-XXXXXX` beside it,
    /// regular files of this user, unmodified for `minimumAge` seconds, on which no process holds
    /// a lock (a live writer holds one on its temporary file until it is renamed into place; the
    /// age rule also covers the moment between its creation and its lock, and writers that do not
    /// lock). The same goes for `.NAME.swap-XXXXXX`, what a writer killed in the middle of
    /// `replace(_:at:expecting:)` left, but only when the document holds every change it holds
    /// or it holds every change of the document (see `isLeftoverSwapSafeToRemove`); otherwise it
    /// is another program's version, and it is renamed to a conflict copy beside the document
    /// (`NAME.sync-conflict-…-peernote.EXT`, which `pnmerge sync` merges). And for
    /// `.NAME.kept-XXXXXX`, another writer's version a killed writer had taken out of place
    /// (`ReplaceOutcome.changedTwice`), only when the document holds every change it holds;
    /// otherwise it becomes a conflict copy. Anything else is left alone. Returns the paths
    /// removed. Called by `FileLock` (see `cleanUpLeftovers(of:minimumAge:dryRun:)`, which says
    /// what became of each file).
    @discardableResult
    public static func removeStaleTemporaries(of path: String, minimumAge: TimeInterval = 10) -> [String] {
        cleanUpLeftovers(of: path, minimumAge: minimumAge).removed
    }

    /// What `cleanUpLeftovers(of:minimumAge:dryRun:)` did (or, in a dry run, would do) with the
    /// files killed writers left beside a document. Paths are full paths beside the document.
    public struct LeftoverCleanup: Equatable, Sendable {
        /// Removed: temporary files, and `.swap-`/`.kept-` files whose changes the document has.
        public var removed: [String] = []
        /// `.swap-`/`.kept-` files holding changes the document lacks, renamed to conflict copies
        /// (which `pnmerge sync` merges).
        public var keptAsConflictCopies: [KeptCopy] = []
        /// Left where they are: modified less than `minimumAge` seconds ago or held by a live
        /// writer (a write in progress), or a conflict copy could not be made of them.
        public var left: [String] = []

        public init() {}

        /// Whether nothing was found to do anything with.
        public var isEmpty: Bool { removed.isEmpty && keptAsConflictCopies.isEmpty && left.isEmpty }

        /// A leftover with changes the document lacks, and the conflict copy it became (nil in a dry run).
        public struct KeptCopy: Equatable, Sendable {
            public var from: String
            public var to: String?
        }
    }

    /// The files beside the document at `path` (beside the file it points to, when it is a
    /// symbolic link) named as its writers name their temporary files: `.NAME.tmp-XXXXXX`,
    /// `.NAME.swap-XXXXXX` and `.NAME.kept-XXXXXX`, whatever they are and whoever holds them.
    /// One read of the folder and nothing opened: how a caller that does not write the
    /// document tells whether to take its lock to clean up (`pnmerge sync`, which has read every
    /// folder already, asks its scan instead: `FolderScan.sawLeftovers(of:)`).
    public static func leftoverCandidates(of path: String) -> [String] {
        let target = resolvingSymlink(path)
        let dir = directory(of: target)
        return leftoverNames(in: dir, of: lastComponent(of: target)).map { dir + "/" + $0.name }.sorted()
    }

    /// The names in `dir` of leftovers of the file `name` (see `leftoverCandidates(of:)`), each
    /// with its infix, in the order the cleanup takes them: the temporary files, then the swapped
    /// versions, then the kept ones, each kind sorted by name.
    /// - Complexity: one pass over the folder (`namesInDirectory`): a folder of thousands of
    ///   files costs each write that takes the lock one listing, not one per kind.
    private static func leftoverNames(in dir: String, of name: String) -> [(name: String, infix: String)] {
        let infixes = [temporaryInfix, swapInfix, keptInfix]
        let prefixes = infixes.map { temporaryPrefix(forName: name, infix: $0) }
        // One pass over the folder, with the start the three prefixes share (`.NAME.`, or less of a
        // very long NAME, which each prefix cuts to fit its infix).
        var common = prefixes[0]
        for prefix in prefixes.dropFirst() { while !prefix.hasPrefix(common) { common.removeLast() } }
        return leftoverNames(among: namesInDirectory(dir, withPrefix: common), of: name)
    }

    /// Those of `entries` (names in one folder) that are leftovers of the file `name` there, as
    /// `leftoverNames(in:of:)` orders them.
    private static func leftoverNames(among entries: [String], of name: String) -> [(name: String, infix: String)] {
        let infixes = [temporaryInfix, swapInfix, keptInfix]
        let prefixes = infixes.map { temporaryPrefix(forName: name, infix: $0) }
        var found: [[String]] = infixes.map { _ in [] }
        for entry in entries {
            // mkstemp's six letters and digits, nothing more (`.NAME.tmp-abcdef.keep` is not ours).
            guard let k = prefixes.firstIndex(where: { prefix in
                guard entry.hasPrefix(prefix) else { return false }
                let suffix = entry.utf8.dropFirst(prefix.utf8.count)
                return suffix.count == 6 && suffix.allSatisfy(isASCIIAlphanumeric)
            }) else { continue }
            found[k].append(entry)
        }
        return zip(infixes, found).flatMap { infix, names in names.sorted().map { (name: $0, infix: infix) } }
    }

    /// Which of `paths` (documents; a symbolic link stands for the file it points to) have a name
    /// their writers leave beside them (`leftoverCandidates(of:)`), told from one reading of each
    /// folder they are in: for a command that writes many documents of one folder (`pnmerge
    /// compact *.peernote`), which takes the lock of the others without looking again
    /// (`FileLock(for:cleaningUp:)`) instead of reading the folder once per document.
    public static func pathsWithLeftovers(_ paths: [String]) -> Set<String> {
        var byFolder: [String: [(path: String, name: String)]] = [:]
        for path in paths {
            let target = resolvingSymlink(path)
            byFolder[directory(of: target), default: []].append((path, lastComponent(of: target)))
        }
        var found = Set<String>()
        for (dir, files) in byFolder {
            let hidden = namesInDirectory(dir, withPrefix: ".")
            for file in files where !leftoverNames(among: hidden, of: file.name).isEmpty { found.insert(file.path) }
        }
        return found
    }

    /// `removeStaleTemporaries(of:minimumAge:)`, saying what became of each file: removed, made a
    /// conflict copy, or left (too young, or held by a live writer). With `dryRun`, nothing is
    /// removed or renamed; the result says what would be. Call it holding the document's
    /// `FileLock` (which calls it), unless `dryRun`.
    public static func cleanUpLeftovers(of path: String, minimumAge: TimeInterval = 10, dryRun: Bool = false) -> LeftoverCleanup {
        let target = resolvingSymlink(path)
        let dir = directory(of: target)
        let name = lastComponent(of: target)
        var result = LeftoverCleanup()
        for (entry, infix) in leftoverNames(in: dir, of: name) {
            let candidate = dir + "/" + entry
            var st = stat()
            guard lstat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid() else { continue }
            guard isAtLeast(minimumAge, secondsAgo: modificationTime(st)) else {
                result.left.append(candidate)
                continue
            }
            let fd = open(candidate, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var held = stat(), now = stat()
            // Ours alone (no writer holds it), and still the file at that name.
            guard fstat(fd, &held) == 0, held.st_dev == st.st_dev, held.st_ino == st.st_ino,
                  flock(fd, LOCK_EX | LOCK_NB) == 0,
                  lstat(candidate, &now) == 0, now.st_dev == st.st_dev, now.st_ino == st.st_ino else {
                result.left.append(candidate)
                continue
            }
            // Another writer's version, which a writer that took it out of place did not get
            // into the document (it was killed), or what the document held when a writer died
            // mid-exchange, with changes the document lacks (a sync client's copy): kept where
            // the user and sync see it.
            let keep = (infix == keptInfix && !documentHasAll(of: candidate, document: target))
                || (infix == swapInfix && !isLeftoverSwapSafeToRemove(candidate, document: target))
            if keep {
                if dryRun {
                    result.keptAsConflictCopies.append(.init(from: candidate, to: nil))
                    continue
                }
                let kept = self.keep(candidate, beside: target)
                if kept == candidate { result.left.append(candidate) } else { result.keptAsConflictCopies.append(.init(from: candidate, to: kept)) }
                continue
            }
            if dryRun || unlink(candidate) == 0 { result.removed.append(candidate) }
        }
        return result
    }

    /// Whether the document at `document` (a file, or a notebook folder that a single file
    /// became, its leftovers still beside it) holds every change the file at `path` holds
    /// (false when either does not load).
    static func documentHasAll(of path: String, document: String) -> Bool {
        guard let bytes = try? read(path), let version = try? Document.load(bytes), let current = try? Document.open(document),
              let hasAll = try? current.merge(version).isUpToDate else { return false }
        return hasAll
    }

    /// Whether a `.NAME.swap-XXXXXX` file a dead writer left (see `replace(_:at:expecting:)`) can go
    /// without losing anything: the document at `document` holds every change it holds (it is
    /// what the document held before that writer's write, now merged), or it holds every change
    /// of the document (it is that writer's own result, which never got into place: its command
    /// failed, and the file is as it was). Anything else (another program's version, or
    /// something that does not load) is not.
    static func isLeftoverSwapSafeToRemove(_ swap: String, document: String) -> Bool {
        guard let swapBytes = try? read(swap), let left = try? Document.load(swapBytes), let current = try? Document.open(document),
              let documentHasAll = try? current.merge(left).isUpToDate else { return false }
        if documentHasAll { return true }
        guard let again = try? Document.open(document), let swapHasAll = try? left.merge(again).isUpToDate else { return false }
        return swapHasAll
    }

    /// The names in `dir` that start with `prefix` (byte for byte), read with `readdir`: a
    /// folder of thousands of notes costs a byte comparison per name, not a `String` per name.
    /// Empty when the folder cannot be read.
    static func namesInDirectory(_ dir: String, withPrefix prefix: String) -> [String] {
        guard let stream = opendir(dir) else { return [] }
        defer { closedir(stream) }
        let want = Array(prefix.utf8)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name: String? = withUnsafePointer(to: &entry.pointee.d_name) { raw in
                raw.withMemoryRebound(to: UInt8.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) { bytes in
                    for (i, b) in want.enumerated() where bytes[i] != b { return nil }
                    return String(cString: bytes)
                }
            }
            if let name { names.append(name) }
        }
        return names
    }

}
