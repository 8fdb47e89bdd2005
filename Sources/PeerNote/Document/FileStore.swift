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

private func sysRead(_ fd: Int32, _ buf: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, buf, n) }
private func sysWrite(_ fd: Int32, _ buf: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, buf, n) }

/// Why a file could not be read or written. Messages name the file.
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    /// The `errno` of the system call that failed, where one did: `ENOENT` when the file (or
    /// a folder on its path) does not exist (`isMissing`), `EACCES` when it may not be read.
    public var code: Int32?
    /// Whether the write was refused because the bytes it would write do not load
    /// (`Document.checkLoadable`): nothing was written, and the input is at fault, not the disk.
    public var resultWouldNotLoad = false

    public init(path: String, message: String, code: Int32? = nil) {
        self.path = path
        self.message = message
        self.code = code
    }

    /// Whether the file does not exist (an app's "open, or create it if missing").
    public var isMissing: Bool { code == ENOENT }
    public var description: String { "\(path): \(message)" }
}

/// Reading and atomically writing document files.
///
/// Writes go to a temporary file in the same directory, are flushed with
/// fsync, and renamed over the target (then the directory is fsynced), so a
/// crash leaves either the old file or the new one, never a mix. The
/// original's permissions are kept.
///
/// The temporary file is `.NAME.tmp-XXXXXX`. Its writer holds an exclusive
/// `flock` on it until it is renamed or linked into place, so a temporary file
/// nobody holds belongs to a writer that is gone (killed mid-write); taking a
/// document's `FileLock` removes those (`removeStaleTemporaries`).
public enum FileStore {
    /// The largest file this library reads (a bound on memory for hostile input).
    public static let maxFileSize = 1 << 30

    /// The bytes of the regular file at `path`. With `pipes`, a FIFO is read too (to its end):
    /// a shell's process substitution (`--body-file <(command)`) or a named pipe, for inputs
    /// that are read once. Anything else that is not a regular file (a folder, a device, a
    /// socket) is refused. A file larger than `maxFileSize` is refused at once, from its size,
    /// before anything is read (and one that grows past it while it is read, once it has).
    public static func read(_ path: String, pipes: Bool = false) throws(FileError) -> [UInt8] {
        var st = stat()
        guard stat(path, &st) == 0 else { let e = errno; throw FileError(path: path, message: errnoText(), code: e) }
        let kind = st.st_mode & S_IFMT
        if kind == S_IFDIR { throw FileError(path: path, message: "is a directory") }
        guard kind == S_IFREG || (pipes && kind == S_IFIFO) else {
            throw FileError(path: path, message: pipes ? "is not a regular file or a pipe" : "is not a regular file")
        }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { let e = errno; throw FileError(path: path, message: errnoText(), code: e) }
        defer { close(fd) }
        return try readToEnd(fd, path: path)
    }

    /// Reads all of standard input (at most `maxFileSize` bytes; a regular file redirected to it
    /// that is larger is refused at once, from its size).
    public static func readStandardInput() throws(FileError) -> [UInt8] {
        try readToEnd(0, path: "-")
    }

    /// Everything left to read from `fd`, at most `maxFileSize` bytes. When `fd` is a regular
    /// file, what is left of it is known from `fstat`: more than `maxFileSize` is refused before
    /// anything is read (a 3 GB file used to be read to its first gigabyte, and under a memory
    /// limit the process died allocating it), and the bytes are read into one buffer of that
    /// size. A pipe, or a file that grows while it is read, is refused once it has given more
    /// than `maxFileSize` bytes.
    static func readToEnd(_ fd: Int32, path: String) throws(FileError) -> [UInt8] {
        func tooLarge() -> FileError {
            FileError(path: path, message: path == "-" ? "input is larger than \(maxFileSize) bytes" : "is larger than \(maxFileSize) bytes")
        }
        var out: [UInt8] = []
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG {
            let offset = lseek(fd, 0, SEEK_CUR)
            let left = Int(st.st_size) - (offset > 0 ? Int(offset) : 0)
            if left > maxFileSize { throw tooLarge() }
            // One byte more, so that reading to the end of a file that did not grow allocates nothing further.
            out.reserveCapacity(max(left, 0) + 1)
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            // Never more than one byte past the limit.
            let want = min(chunk.count, maxFileSize + 1 - out.count)
            let n = chunk.withUnsafeMutableBytes { sysRead(fd, $0.baseAddress, want) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, message: errnoText())
            }
            if n == 0 { break }
            out.append(contentsOf: chunk[0 ..< n])
            if out.count > maxFileSize { throw tooLarge() }
        }
        return out
    }

    /// Replaces `path` with `bytes` atomically (see the type's documentation). When `path`
    /// is a symbolic link, the file it points to is replaced and the link kept.
    ///
    /// A read-only file is refused. A character device or a FIFO (`/dev/null`, a named pipe) is
    /// written into, not replaced: renaming a regular file over it would destroy it. Any other
    /// file that is not a regular file (a folder, a socket, a block device) is refused.
    ///
    /// A new file gets 0666 less the umask, or with `permissionsLike`, the permission bits of that
    /// file less the umask (as `cp` gives them): a merge of a private notebook stays private.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, permissionsLike source: String? = nil) throws(FileError) {
        if try isSpecial(path) { return try writeInto(bytes, special: path) }
        let target = try writeTarget(path)
        let tmp = try writeTemporary(bytes, beside: target, reportingAs: path, permissionsLike: source)
        defer { tmp.release() }
        guard rename(tmp.path, target) == 0 else {
            let m = errnoText()
            unlink(tmp.path)
            throw FileError(path: path, message: "rename failed: \(m)")
        }
        syncDirectory(of: target)
    }

    /// Whether `path` is a character device or a FIFO (written into, not replaced); throws when it
    /// is a file that must not be replaced: read-only, not writable by this user, a folder, or
    /// neither a regular file nor one of those. A missing file is fine (it will be created).
    private static func isSpecial(_ path: String) throws(FileError) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0 else { return false }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            // Replacing the file by renaming would ignore its mode: a file made read-only
            // (for everyone, or for this user) is left alone, as an editor would.
            if st.st_mode & 0o222 == 0 {
                throw FileError(path: path, message: "is read-only; not changed (chmod u+w makes it writable)")
            }
            if access(path, W_OK) != 0 {
                throw FileError(path: path, message: "cannot be written: \(errnoText()); not changed")
            }
            return false
        case S_IFCHR, S_IFIFO: return true
        case S_IFDIR: throw FileError(path: path, message: "is a directory")
        default: throw FileError(path: path, message: "is not a regular file; refusing to replace it")
        }
    }

    /// How `replace(_:at:expecting:)` ended.
    public enum ReplaceOutcome: Equatable, Sendable {
        /// The file now holds the new bytes.
        case replaced
        /// The file no longer held the bytes the caller had read from it (another program, such
        /// as a sync client, wrote it in the meantime). It was left as it is; it holds `current`.
        case changed(current: [UInt8])
        /// As `changed`, and more: while the new file was being taken out again, yet another
        /// version (`displaced`) had been put in place, and taking the new file out took that
        /// version out too (two writers that share no lock wrote at once). It is kept, with
        /// nothing lost, at `keptAt` (a `.NAME.kept-XXXXXX` file beside the document): write a
        /// file that includes it, then remove `keptAt`, or, if that cannot be done, make it a
        /// conflict copy the user and `pnmerge sync` see (`keepAsConflictCopy`). Left there (its
        /// writer was killed), a later writer's cleanup removes it once it is 10 seconds old if
        /// the document holds all of it, and otherwise makes it a conflict copy.
        case changedTwice(current: [UInt8], displaced: [UInt8], keptAt: String)
        /// The file the caller read is gone: another program moved it away or deleted it (a sync
        /// client moves a file aside before putting another device's copy in its place, which a
        /// file put there now would be overwritten by). Nothing was written.
        case missing
    }

    /// Replaces `path` with `bytes` as `writeAtomically` does, but only while it still holds
    /// `expected` (what the caller read from it): a read-modify-write that a program not
    /// taking `FileLock` (a sync client) raced is told so instead of overwriting that
    /// program's file. A missing file is created when `expected` is empty (nothing was read);
    /// else it is `.missing`, and nothing is written.
    ///
    /// Where the system can exchange two files atomically (Linux's `renameat2`, Apple's
    /// `renamex_np`), the new file is swapped in and the file it displaced compared with
    /// `expected`; if they differ, the two are swapped back, so no moment exists in which a
    /// write by another program can be lost. Elsewhere the file is compared just before the
    /// rename (`exchange: false` forces this), which leaves a window of a few microseconds.
    ///
    /// Either way, a file whose size is no longer `expected`'s once the new file is ready is
    /// taken as changed at once (`.changed`, nothing swapped): one `stat` sees almost every race,
    /// and the new file is then never in place, so no other writer can have read it or be
    /// taken out of place by putting back what it displaced.
    public static func replace(_ bytes: [UInt8], at path: String, expecting expected: [UInt8],
                               exchange: Bool = true) throws(FileError) -> ReplaceOutcome {
        try replace(bytes, at: path, expecting: expected, exchange: exchange, beforePuttingBack: {})
    }

    /// `replace(_:at:expecting:exchange:)`; `beforeExchanging` runs once the file's size was
    /// found unchanged, just before the new file is swapped in (or renamed), and
    /// `beforePuttingBack` when the file turned out to have changed, just before the new file is
    /// taken out again (tests use them to write meanwhile).
    static func replace(_ bytes: [UInt8], at path: String, expecting expected: [UInt8], exchange: Bool,
                        beforeExchanging: () -> Void = {}, beforePuttingBack: () -> Void) throws(FileError) -> ReplaceOutcome {
        if try isSpecial(path) {
            // A FIFO or a device where the caller read a file: written into, it would hang on a
            // FIFO no one reads, or send the notebook to the device, and the change would be lost.
            guard expected.isEmpty else {
                throw FileError(path: path, message: "is no longer a regular file (a FIFO or a device took its place)")
            }
            try writeInto(bytes, special: path)
            return .replaced
        }
        let target = try writeTarget(path)
        let tmp = try writeTemporary(bytes, beside: target, reportingAs: path)
        defer { tmp.release() }
        // The new file is exchanged from a `.NAME.swap-XXXXXX` name: if this process dies between
        // the exchange and the end, what the file held (perhaps a sync client's copy) is left
        // under that name, which cleanup only removes once the document has all of it
        // (see removeStaleTemporaries), never under the temporary name, which it removes unread.
        var source = tmp.path
        var sized = stat()
        if stat(target, &sized) == 0, (sized.st_mode & S_IFMT) == S_IFREG, Int(sized.st_size) != expected.count {
            // Changed since it was read (a file that grew or shrank): nothing to swap.
            unlink(tmp.path)
            return .changed(current: try read(target))
        }
        beforeExchanging()
        let swap = directory(of: target) + "/" + temporaryPrefix(forName: lastComponent(of: target), infix: swapInfix) + String(tmp.path.suffix(6))
        if exchange && rename(tmp.path, swap) == 0 {
            source = swap
            if peernote_exchange_files(swap, target) == 0 {
                // `swap` now leads to what `target` held.
                let displaced: Result<[UInt8], FileError>
                do { displaced = .success(try read(swap)) } catch { displaced = .failure(error) }
                if case .success(let held) = displaced, held == expected {
                    unlink(swap)
                    syncDirectory(of: target)
                    return .replaced
                }
                // Another program wrote the file meanwhile (or it cannot be read back): put it back.
                beforePuttingBack()
                guard peernote_exchange_files(swap, target) == 0 else {
                    let m = errnoText()
                    let kept = keep(swap, beside: target)
                    throw FileError(path: path, message: "changed while being written, and could not be put back (\(m)); the version written meanwhile is kept as \(kept)")
                }
                syncDirectory(of: target)
                var ours = stat(), there = stat()
                guard fstat(tmp.lock, &ours) == 0, lstat(swap, &there) == 0,
                      ours.st_dev == there.st_dev, ours.st_ino == there.st_ino else {
                    // Replaced a second time between the two exchanges (another writer's exchange,
                    // or its own putting back): that version came back here, and is kept until
                    // the caller has written a file that includes it. Under a name of its own:
                    // cleanup may remove a `.swap-` file that holds everything the document holds
                    // (a dead writer's own result), which this version, another writer's, may
                    // well do; a `.kept-` file goes only once the document holds all of it.
                    let keptAt = directory(of: target) + "/" + temporaryPrefix(forName: lastComponent(of: target), infix: keptInfix) + String(tmp.path.suffix(6))
                    if case .success = displaced, let other = try? read(swap), let now = try? read(target), rename(swap, keptAt) == 0 {
                        return .changedTwice(current: now, displaced: other, keptAt: keptAt)
                    }
                    let kept = keep(swap, beside: target)
                    throw FileError(path: path, message: "changed twice while being written; not written (a version written meanwhile is kept as \(kept))")
                }
                unlink(swap)
                switch displaced {
                case .success(let held): return .changed(current: held)
                case .failure(let error): throw FileError(path: path, message: "changed while being written, and \(error.message); not written")
                }
            }
        }
        // No atomic exchange here (or no file to exchange with): compare, then rename.
        var st = stat()
        if lstat(target, &st) != 0 && errno == ENOENT && !expected.isEmpty {
            // Read, and gone since: written now, it would be overwritten by what a sync client
            // that moved it aside puts in its place.
            unlink(source)
            return .missing
        }
        if lstat(target, &st) == 0 {
            let now: [UInt8]
            do { now = try read(target) } catch {
                unlink(source)
                throw error
            }
            if now != expected {
                unlink(source)
                return .changed(current: now)
            }
        }
        guard rename(source, target) == 0 else {
            let m = errnoText()
            unlink(source)
            throw FileError(path: path, message: "rename failed: \(m)")
        }
        syncDirectory(of: target)
        return .replaced
    }

    /// Makes the version `replace` kept at `keptAt` (see `ReplaceOutcome.changedTwice`) a
    /// conflict copy beside the document at `path`, and returns its name (see `keep`).
    public static func keepAsConflictCopy(_ keptAt: String, of path: String) -> String {
        keep(keptAt, beside: notebookBeside(path))
    }

    /// Writes `bytes` (complete and fsynced, with the document's permissions) as a new conflict
    /// copy beside the document at `path` (see `keep`), and returns its name: where a write that
    /// could not be put in place leaves what it would have written, for the user and `pnmerge
    /// sync` to see. Throws, leaving nothing, when that cannot be done.
    public static func keepAsConflictCopy(bytes: [UInt8], of path: String) throws(FileError) -> String {
        let target = notebookBeside(path)
        let tmp = try writeTemporary(bytes, beside: target, reportingAs: path)
        defer { tmp.release() }
        let kept = keep(tmp.path, beside: target)
        guard kept != tmp.path else {
            unlink(tmp.path)
            throw FileError(path: path, message: "cannot make a conflict copy beside it")
        }
        syncDirectory(of: target)
        return kept
    }

    /// How a write that finds its file changed by writers that share no lock with it goes on
    /// (`Document.write(over:loaded:)`, `pnmerge sync`): it merges what it found and tries again,
    /// after a random wait that doubles with each try (up to 64 ms, so that writers that keep
    /// meeting fall out of step), until it is written or `patience` seconds have passed.
    ///
    /// Giving up early would be wrong: a writer whose new file was in place for a moment (see
    /// `replace(_:at:expecting:)`) may have been read, and built on, by another writer, and one
    /// that took another writer's file out of place (`ReplaceOutcome.changedTwice`) holds a
    /// version that writer was told is written. Only writing a file that includes them puts them
    /// back; a writer that must stop leaves them as a conflict copy instead.
    public struct Contention: Sendable {
        /// Seconds a write goes on trying while other writers keep changing its file.
        public static let patience: Double = 60
        /// Seconds a write waits for a file that went missing since it was read to come back
        /// (a sync client puts another device's copy in place right after moving it aside).
        public static let missingPatience: Double = 10

        private let deadline: Double
        private var tries = 0

        public init(patience: Double = Contention.patience) {
            deadline = Contention.now() + patience
        }

        /// Waits a random while, longer after each call (up to 64 ms); false, without
        /// waiting, once the patience has run out.
        public mutating func wait() -> Bool {
            guard Contention.now() < deadline else { return false }
            let cap = UInt32(1_000) << UInt32(min(tries, 6))
            tries += 1
            usleep(UInt32.random(in: cap / 4 ... cap))
            return true
        }

        private static func now() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
        }
    }

    /// Renames the file at `path` (a version of `target` another program wrote) to a conflict
    /// copy beside `target`, `NAME.sync-conflict-YYYYMMDD-HHMMSS-peernote.EXT` (`…-peernote2.EXT` and on
    /// when that name is taken, as when two are kept in one second), which the user sees and
    /// `pnmerge sync` merges back in; returns the new name, or `path` itself when that fails (a
    /// name too long), where cleanup keeps it until the document has all of it.
    static func keep(_ path: String, beside target: String, link: (String, String) -> Int32 = { link($0, $1) }) -> String {
        let name = lastComponent(of: target)
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let stem = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        var t = time_t(time(nil))
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let stamp = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))-\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))"
        for n in 1 ... 20 {
            let kept = directory(of: target) + "/" + stem + ".sync-conflict-" + stamp + "-peernote" + (n == 1 ? "" : "\(n)") + ext
            // Never replaces a conflict copy another writer made meanwhile.
            switch place(path, at: kept, link: link) {
            case .placed: return kept
            case .exists: continue
            case .failed: return path
            }
        }
        return path
    }

    /// What `place` did.
    enum Placement: Equatable {
        case placed
        /// Something (even a dangling link) is at the destination; nothing was changed.
        case exists
        case failed(String)
    }

    /// Moves the file at `from` to `to` unless something (even a dangling link) is there, and
    /// never replaces what is: link(2), then the old name removed; where the file system has no
    /// hard links (FAT and exFAT on a USB stick, some network file systems), a rename that
    /// refuses to replace (`peernote_rename_noreplace`); where the system has neither, a rename
    /// once the name is seen free (a file another program puts there in between is replaced:
    /// only there). `link` is link(2) (tests make it fail as such file systems do).
    static func place(_ from: String, at to: String, link: (String, String) -> Int32) -> Placement {
        if link(from, to) == 0 {
            unlink(from)
            return .placed
        }
        if errno == EEXIST { return .exists }
        if peernote_rename_noreplace(from, to) == 0 { return .placed }
        switch errno {
        case EEXIST:
            return .exists
        case ENOSYS, EINVAL, ENOTSUP, EOPNOTSUPP:
            var st = stat()
            if lstat(to, &st) == 0 { return .exists }
            return rename(from, to) == 0 ? .placed : .failed(errnoText())
        default:
            return .failed(errnoText())
        }
    }

    /// Writes `bytes` into the character device or FIFO at `path` (opened as it is, never created).
    private static func writeInto(_ bytes: [UInt8], special path: String) throws(FileError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: path, message: "cannot open for writing: \(errnoText())") }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { buf in sysWrite(fd, buf.baseAddress.map { $0 + written }, bytes.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, message: "write failed: \(errnoText())")
            }
            written += n
        }
    }

    /// Creates `path` with `bytes`, refusing if anything (even a dangling link) is there.
    /// Atomic: the complete file appears under its name at once, via link(2). Its permissions
    /// are as `writeAtomically` gives a new file.
    public static func create(_ bytes: [UInt8], at path: String, permissionsLike source: String? = nil) throws(FileError) {
        try create(bytes, at: path, permissionsLike: source, link: { link($0, $1) })
    }

    /// `create`, with link(2) given (tests make it fail as on a file system without hard links).
    static func create(_ bytes: [UInt8], at path: String, permissionsLike source: String? = nil,
                       link: (String, String) -> Int32) throws(FileError) {
        var st = stat()
        if lstat(path, &st) == 0 { throw FileError(path: path, message: "already exists; refusing to overwrite it") }
        let tmp = try writeTemporary(bytes, beside: path, reportingAs: path, permissionsLike: source)
        defer { tmp.release() }
        switch place(tmp.path, at: path, link: link) {
        case .placed:
            syncDirectory(of: path)
        case .exists:
            unlink(tmp.path)
            throw FileError(path: path, message: "already exists; refusing to overwrite it")
        case .failed(let reason):
            unlink(tmp.path)
            throw FileError(path: path, message: "cannot create: \(reason)")
        }
    }

    /// A complete, fsynced temporary file, and a descriptor that holds its `flock` (`release()`
    /// once the file has been renamed or linked into place, or removed).
    private struct Temporary {
        var path: String
        var lock: Int32
        /// Its slot in the list the tools' signal handler removes (see `removeTemporariesOnSignals`).
        var slot: Int32

        /// Lets go of the file: its lock, and its place in the signal handler's list.
        func release() {
            peernote_temporary_unregister(slot)
            close(lock)
        }
    }

    /// Makes SIGINT, SIGTERM and SIGHUP remove the `.NAME.tmp-XXXXXX` files this process is
    /// writing before it ends as the signal would end it (a C handler: it only unlinks the paths
    /// kept in a fixed table, then re-raises the signal with its default action). A signal that is
    /// ignored (a background job's SIGINT, `nohup`) or already handled is left as it is. For the
    /// command-line tools, once, at start; an application handles its signals itself. Not covered:
    /// SIGKILL, and a file already renamed to `.NAME.swap-XXXXXX` for the exchange (it may hold what
    /// the document held, perhaps another program's version, which only the cleanup's checks may
    /// remove): those are left to the next writer's cleanup (`cleanUpLeftovers`).
    public static func removeTemporariesOnSignals() {
        _ = peernote_remove_temporaries_on_signals()
    }

    /// Writes a complete, fsynced temporary file in `path`'s directory, locked (see `Temporary`).
    private static func writeTemporary(_ bytes: [UInt8], beside path: String, reportingAs shown: String,
                                       permissionsLike source: String? = nil) throws(FileError) -> Temporary {
        let dir = directory(of: path)
        let name = lastComponent(of: path)
        var template = Array("\(dir)/\(temporaryPrefix(forName: name))XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buf in buf.baseAddress.map { mkstemp($0) } ?? -1 }
        guard fd >= 0 else {
            // The usual mistakes said plainly: a folder that is not there, or a file in its place.
            let problem = errno
            var st = stat()
            let message = if problem == ENOENT && stat(dir, &st) != 0 { "the folder \(dir) does not exist" }
                else if problem == ENOTDIR { "\(dir) is not a folder" }
                else { "cannot create a temporary file in \(dir): \(String(cString: strerror(problem)))" }
            throw FileError(path: shown, message: message)
        }
        let tmpPath = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Removed by the tools' signal handler if the process is interrupted before it is released.
        let slot = template.withUnsafeBufferPointer { buf in buf.baseAddress.map { peernote_temporary_register($0) } ?? -1 }
        // Held until the caller closes `lock`: while it is held, no cleanup removes the file. A new
        // file is never taken for a stale one (see removeStaleTemporaries), so this cannot block;
        // where flock is not supported, the age rule alone protects it.
        _ = flock(fd, LOCK_EX | LOCK_NB)
        func fail(_ what: String) -> FileError {
            let m = errnoText()
            close(fd)
            unlink(tmpPath)
            peernote_temporary_unregister(slot)
            return FileError(path: shown, message: "\(what) failed: \(m)")
        }
        var st = stat()
        let replacing = stat(path, &st) == 0
        if replacing && (st.st_uid != geteuid() || st.st_gid != getegid()) {
            // The file keeps its owner and group where this user may give them (root, or a group
            // the user is in): a shared notebook stays the group's, root's edit stays the user's.
            if fchown(fd, st.st_uid, st.st_gid) != 0 { _ = fchown(fd, uid_t.max, st.st_gid) }
        }
        // After fchown, which may clear the set-id bits. A new file gets 0666 (or the source's
        // permission bits) less the umask.
        var like = stat()
        let newMode: mode_t = source.flatMap { stat($0, &like) == 0 && (like.st_mode & S_IFMT) == S_IFREG ? like.st_mode & 0o666 : nil } ?? 0o666
        let mode: mode_t = replacing ? st.st_mode & 0o7777 : newMode & ~currentUmask()
        fchmod(fd, mode)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { buf in sysWrite(fd, buf.baseAddress.map { $0 + written }, bytes.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw fail("write")
            }
            written += n
        }
        guard fsync(fd) == 0 else { throw fail("fsync") }
        // A second descriptor of the same open file keeps the lock after `fd` is closed.
        let lock = dup(fd)
        guard lock >= 0 else { throw fail("dup") }
        guard close(fd) == 0 else {
            let m = errnoText()
            unlink(tmpPath)
            close(lock)
            peernote_temporary_unregister(slot)
            throw FileError(path: shown, message: "close failed: \(m)")
        }
        return Temporary(path: tmpPath, lock: lock, slot: slot)
    }

    private static func isASCIIAlphanumeric(_ c: UInt8) -> Bool {
        (0x30 ... 0x39).contains(c) || (0x41 ... 0x5A).contains(c) || (0x61 ... 0x7A).contains(c)
    }

    private static func modificationSeconds(_ st: stat) -> Int {
        #if canImport(Darwin)
        Int(st.st_mtimespec.tv_sec)
        #else
        Int(st.st_mtim.tv_sec)
        #endif
    }

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
    /// document (`pnmerge sync` on an up-to-date copy) tells whether to take its lock to clean up.
    public static func leftoverCandidates(of path: String) -> [String] {
        let target = resolvingSymlink(path)
        let dir = directory(of: target)
        let name = lastComponent(of: target)
        let prefixes = [temporaryInfix, swapInfix, keptInfix].map { temporaryPrefix(forName: name, infix: $0) }
        // One pass over the folder, with the start the three prefixes share (`.NAME.`, or less of a
        // very long NAME, which each prefix cuts to fit its infix).
        var common = prefixes[0]
        for prefix in prefixes.dropFirst() { while !prefix.hasPrefix(common) { common.removeLast() } }
        return namesInDirectory(dir, withPrefix: common).filter { entry in
            prefixes.contains { prefix in
                guard entry.hasPrefix(prefix) else { return false }
                let suffix = entry.utf8.dropFirst(prefix.utf8.count)
                return suffix.count == 6 && suffix.allSatisfy(isASCIIAlphanumeric)
            }
        }.sorted().map { dir + "/" + $0 }
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
        for infix in [temporaryInfix, swapInfix, keptInfix] {
            let prefix = temporaryPrefix(forName: name, infix: infix)
            for entry in namesInDirectory(dir, withPrefix: prefix) {
                let suffix = entry.utf8.dropFirst(prefix.utf8.count)
                // mkstemp's six letters and digits, nothing more (`.NAME.tmp-abcdef.keep` is not ours).
                guard suffix.count == 6, suffix.allSatisfy(isASCIIAlphanumeric) else { continue }
                let candidate = dir + "/" + entry
                var st = stat()
                guard lstat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid() else { continue }
                guard Date().timeIntervalSince1970 - Double(modificationSeconds(st)) >= minimumAge else {
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
        }
        return result
    }

    /// Whether a `.NAME.swap-XXXXXX` file a dead writer left (see `replace(_:at:expecting:)`) can go
    /// without losing anything: the document at `document` holds every change it holds (it is
    /// what the document held before that writer's write, now merged), or it holds every change
    /// of the document (it is that writer's own result, which never got into place: its command
    /// failed, and the file is as it was). Anything else (another program's version, or
    /// something that does not load) is not.
    /// Whether the document at `document` holds every change the file at `path` holds (false
    /// when either does not load).
    static func documentHasAll(of path: String, document: String) -> Bool {
        guard let bytes = try? read(path), let documentBytes = try? read(document),
              let version = try? Document.load(bytes), let current = try? Document.load(documentBytes),
              let hasAll = try? current.merge(version).isUpToDate else { return false }
        return hasAll
    }

    static func isLeftoverSwapSafeToRemove(_ swap: String, document: String) -> Bool {
        guard let swapBytes = try? read(swap), let documentBytes = try? read(document),
              let left = try? Document.load(swapBytes), let current = try? Document.load(documentBytes),
              let documentHasAll = try? current.merge(left).isUpToDate else { return false }
        if documentHasAll { return true }
        guard let again = try? Document.load(documentBytes), let swapHasAll = try? left.merge(again).isUpToDate else { return false }
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

    /// The file a symbolic link finally points to (the path itself when it is no link).
    /// Where a conflict copy of the document at `path` goes beside: the file a symbolic link
    /// leads to when it leads to a file (the notebook lives there), else `path` itself (a link
    /// left dangling or put to a folder meanwhile: a copy named after its target, elsewhere,
    /// would not be found as this notebook's).
    static func notebookBeside(_ path: String) -> String {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG ? resolvingSymlink(path) : path
    }

    /// `linkTarget(path)`, or `path` itself when a link on the way names its target in bytes
    /// that are not UTF-8 (the writers refuse such a path: `writeTarget`).
    public static func resolvingSymlink(_ path: String) -> String {
        linkTarget(path) ?? path
    }

    /// The file a chain of symbolic links at `path` leads to (`path` when it is no link; where a
    /// dangling link points, so that a write creates that file), or nil when a link's target is
    /// not valid UTF-8: a `String` of it would replace those bytes with U+FFFD and name another
    /// file. Each relative target is joined to its link's folder as given, not made absolute
    /// (`realpath` would also take in the names of the folders above, which may not be UTF-8
    /// either, and the kernel resolves `folder/target` as it resolves the link).
    public static func linkTarget(_ path: String) -> String? {
        var current = path
        // As the kernel's limit on links followed in one lookup (`writeTarget` refuses a chain
        // still going after it: a loop).
        for _ in 0 ..< 40 {
            var st = stat()
            guard lstat(current, &st) == 0, (st.st_mode & S_IFMT) == S_IFLNK else { return current }
            var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buf, buf.count - 1)
            guard n > 0 else { return current }
            let bytes = buf[0 ..< n].map { UInt8(bitPattern: $0) }
            // Decoding replaces bytes that are not UTF-8 with U+FFFD: the round trip shows it.
            let dest = String(decoding: bytes, as: UTF8.self)
            guard dest.utf8.elementsEqual(bytes) else { return nil }
            current = dest.hasPrefix("/") ? dest : directory(of: current) + "/" + dest
        }
        return current
    }

    /// The file a write to `path` replaces (`linkTarget`), or an error naming `path` when a link
    /// on the way names its target in bytes that are not UTF-8.
    static func writeTarget(_ path: String) throws(FileError) -> String {
        guard let target = linkTarget(path) else {
            throw FileError(path: path, message: "is a symbolic link to a name that is not valid UTF-8; not written (rename the file it points to)")
        }
        // Still a link after 40: a loop, whose links a rename would replace one by a file.
        var st = stat()
        if lstat(target, &st) == 0, st.st_mode & S_IFMT == S_IFLNK {
            throw FileError(path: path, message: "is a symbolic link that leads back to itself (\(String(cString: strerror(ELOOP)))); not written")
        }
        return target
    }

    private static func syncDirectory(of path: String) {
        let dfd = open(directory(of: path), O_RDONLY)
        if dfd >= 0 { fsync(dfd); close(dfd) }
    }

    /// The directory part of a file path: `a/b/c` → `a/b`, `c` → `.`, `/c` → `/` (trailing and
    /// repeated slashes ignored, as `NSString.deletingLastPathComponent` does).
    static func directory(of path: String) -> String {
        let parts = pathParts(path)
        guard !parts.components.isEmpty else { return parts.absolute ? "/" : "." }
        let dir = parts.components.dropLast().joined(separator: "/")
        return parts.absolute ? "/" + dir : (dir.isEmpty ? "." : dir)
    }

    /// The last component of a file path: `a/b/c` → `c` (trailing slashes ignored; `/` for `/`).
    static func lastComponent(of path: String) -> String {
        let parts = pathParts(path)
        return parts.components.last ?? (parts.absolute ? "/" : "")
    }

    private static func pathParts(_ path: String) -> (absolute: Bool, components: [String]) {
        (path.hasPrefix("/"), path.split(separator: "/", omittingEmptySubsequences: true).map(String.init))
    }

    private static func currentUmask() -> mode_t {
        let m = umask(0)
        umask(m)
        return m
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// An exclusive advisory lock on a document, held while a read-modify-write runs,
/// so that two processes editing one document never lose a change.
///
/// The lock file lives outside the document's folder (so sync tools never see
/// it): in `/tmp/peernote-locks-UID` (or `$PEERNOTE_LOCK_DIR`), named by a hash of
/// the document's real path. Not in `$XDG_RUNTIME_DIR`: a login session sets it and
/// cron, `sudo -u` or ssh commands often do not, and runs of one user that took their
/// locks in different folders would not keep each other out. Once the lock is held, stale
/// temporary files of the document are removed (`FileStore.removeStaleTemporaries`).
///
/// The holder removes the lock file when it lets go (so they do not pile up, one per
/// document ever written). Whoever then gets the `flock` of the removed file finds that
/// the name no longer leads to it, and starts again on the file now at that name: the lock
/// is only held on the file the name leads to, and only its holder removes it.
public final class FileLock {
    private let fd: Int32
    private let lockPath: String
    /// What taking the lock did with the files killed writers had left beside the document
    /// (`FileStore.cleanUpLeftovers(of:minimumAge:dryRun:)`).
    public let leftoverCleanup: FileStore.LeftoverCleanup

    /// Blocks until the lock on `path` is held. When another process holds it, `waiting` is
    /// called once (with the lock file's path) before blocking, so that a tool can say why it waits.
    ///
    /// The lock folder must be a real folder (not a link) owned by this user and writable by
    /// no one else, and the lock file is opened without following links: in a shared `/tmp`,
    /// another user could otherwise create the folder first and plant links or hold locks in it.
    public convenience init(for path: String, waiting: ((String) -> Void)? = nil) throws(FileError) {
        guard let (fd, lockPath) = try Self.acquire(path, blocking: true, waiting: waiting) else {
            throw FileError(path: path, message: "cannot lock")
        }
        self.init(holding: fd, lockPath: lockPath, of: path)
    }

    /// The lock on `path` if no other process holds it now, else nil at once, without waiting:
    /// for work that can be put off, such as cleaning up what killed writers left beside a
    /// document that `pnmerge sync` does not otherwise write.
    public static func ifFree(for path: String) throws(FileError) -> FileLock? {
        guard let (fd, lockPath) = try acquire(path, blocking: false, waiting: nil) else { return nil }
        return FileLock(holding: fd, lockPath: lockPath, of: path)
    }

    /// Takes the lock (see `init(for:waiting:)`); its descriptor and the lock file's path, or nil
    /// when another process holds it and `blocking` is false.
    private static func acquire(_ path: String, blocking: Bool, waiting: ((String) -> Void)?) throws(FileError) -> (Int32, String)? {
        // A relative folder would be a different one for runs in different folders, which would
        // then not keep each other out: refused, not passed over for the default (which runs that
        // see the relative value would be told they use).
        if let dir = ProcessInfo.processInfo.environment["PEERNOTE_LOCK_DIR"], !dir.isEmpty, !dir.hasPrefix("/") {
            throw FileError(path: path, message: "PEERNOTE_LOCK_DIR is not an absolute path (\(dir)): set it to one, such as \"$HOME/.peernote-locks\", or unset it")
        }
        let lockPath = FileLock.lockFile(for: path)
        let dir = FileStore.directory(of: lockPath)
        if mkdir(dir, 0o700) != 0 && errno != EEXIST {
            throw FileError(path: path, message: "cannot create the lock folder \(dir): \(FileStore.errnoText())")
        }
        if let problem = Self.unsafeFolderProblem(dir) {
            throw FileError(path: path, message: "refusing the lock folder \(dir): \(problem) (remove it, or set PEERNOTE_LOCK_DIR to a private folder for every run)")
        }
        var said = false
        while true {
            let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw FileError(path: path, message: "cannot create lock file \(lockPath): \(FileStore.errnoText())") }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                if errno == EWOULDBLOCK && !blocking {
                    // Not held: the file is left as it is (its holder removes it).
                    close(fd)
                    return nil
                }
                if errno == EWOULDBLOCK && !said { said = true; waiting?(lockPath) }
                while flock(fd, LOCK_EX) != 0 {
                    if errno == EINTR { continue }
                    let m = FileStore.errnoText()
                    close(fd)
                    throw FileError(path: path, message: "cannot lock: \(m)")
                }
            }
            // The previous holder may have removed the file while this one waited for it.
            var held = stat(), named = stat()
            if fstat(fd, &held) == 0, lstat(lockPath, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino {
                return (fd, lockPath)
            }
            close(fd)
        }
    }

    /// Holding the lock on `fd` (`lockPath`): cleans up what killed writers left beside `path`.
    private init(holding fd: Int32, lockPath: String, of path: String) {
        self.fd = fd
        self.lockPath = lockPath
        leftoverCleanup = FileStore.cleanUpLeftovers(of: path)
    }

    deinit {
        // Removed while still held: a waiter that gets this file's lock next sees it is gone.
        unlink(lockPath)
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// Why the lock folder `dir` cannot be trusted, or nil: it must be a folder itself (not a
    /// link to one), owned by this process's user, and not writable by group or others.
    static func unsafeFolderProblem(_ dir: String) -> String? {
        var st = stat()
        guard lstat(dir, &st) == 0 else { return "cannot read it: \(FileStore.errnoText())" }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            return (st.st_mode & S_IFMT) == S_IFLNK ? "it is a symbolic link" : "it is not a folder"
        }
        guard st.st_uid == geteuid() else { return "it belongs to user \(st.st_uid), not to user \(geteuid())" }
        guard st.st_mode & 0o022 == 0 else { return "others can write to it (mode \(String(st.st_mode & 0o777, radix: 8)))" }
        return nil
    }

    /// Where the lock for `path` is kept.
    public static func lockFile(for path: String) -> String {
        let target = FileStore.resolvingSymlink(path)
        var absolute = target
        if let real = realpath(target, nil) {
            absolute = String(cString: real)
            free(real)
        } else if let folder = realpath(FileStore.directory(of: target), nil) {
            // A file not made yet (a new OUT): its folder's real path and its name, so that
            // `new.peernote`, `./new.peernote` and a link to it share one lock (review finding).
            absolute = String(cString: folder) + "/" + FileStore.lastComponent(of: target)
            free(folder)
        } else if !target.hasPrefix("/") {
            absolute = FileManager.default.currentDirectoryPath + "/" + target
        }
        let env = ProcessInfo.processInfo.environment
        var base = "/tmp/peernote-locks-\(getuid())"
        // PEERNOTE_LOCK_DIR must be absolute: writers in different folders would otherwise use
        // different locks for one document.
        if let dir = env["PEERNOTE_LOCK_DIR"], dir.hasPrefix("/") {
            base = dir
            while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        }
        return base + "/" + LockName.hash(absolute) + ".lock"
    }
}

extension Document {
    /// Throws, naming `path`, when `bytes` (a save about to be written there) would not load:
    /// they are read back as `Document.load` reads them, with the same checks and limits, the
    /// integration work a file of their size allows included. Every writer of this library and
    /// of the tools calls it before it replaces or creates anything, so no save that does not
    /// load is written (`FileError.resultWouldNotLoad`). A full read, not an estimate: the state
    /// a copy holds in memory was built in the order its changes came (loads, merges, edits), and
    /// a reader of the file builds it from the file's rows; the work the reader takes, and so
    /// whether it stays within the budget, is known only by doing it.
    public static func checkLoadable(_ bytes: [UInt8], writingTo path: String) throws(FileError) {
        do throws(PeerNoteError) { _ = try Document.load(bytes) } catch {
            var failure = FileError(path: path, message: "not written: the result would not load (\(error.description)); nothing was changed")
            failure.resultWouldNotLoad = true
            throw failure
        }
    }

    /// `save(mode)`, checked with `checkLoadable` before it is returned; when it would not load,
    /// the document's record of its file is left as it was (nothing is written).
    func loadableSave(_ mode: SaveMode, writingTo path: String) throws(FileError) -> [UInt8] {
        let file = persisted
        let bytes = save(mode)
        do throws(FileError) { try Self.checkLoadable(bytes, writingTo: path) } catch {
            persisted = file
            throw error
        }
        return bytes
    }

    /// Loads a document from a file; errors name the file. (`path` is always a file name: `-`
    /// is the file named `-`, not standard input.) `author` is recorded on the changes made
    /// through the document (`author`); a loaded document has none until it is set.
    public static func open(_ path: String, author: String = "") throws(DocumentFileError) -> Document {
        let bytes: [UInt8]
        do { bytes = try FileStore.read(path) } catch { throw .file(error) }
        let document: Document
        do { document = try load(bytes) } catch { throw .document(path: path, error) }
        if !author.isEmpty { document.author = author }
        return document
    }

    /// Writes the document to `path` atomically, without losing what the file holds: when it
    /// holds a copy of this notebook with changes this document lacks (another device's edits,
    /// brought by a sync client since the document was read, or another program's), they are
    /// merged into this document first, and written with it (`mergedMeanwhile` then counts the
    /// merges; read the document again to show them). A file that does not load (a damaged
    /// notebook, `pnmerge salvage`'s case, or other bytes) is not lost either: the changes of
    /// this notebook that can be read from it are merged in the same way, and its bytes are kept
    /// beside it as a conflict copy, named by `WriteOutcome.keptDamaged`. A file of a newer
    /// format version is not replaced (the write throws). Another notebook is replaced, as
    /// "Save As" replaces it: check first where that must not happen. An empty or missing file
    /// is written.
    ///
    /// `.incremental` (the default) appends the changes since the file was read or last saved,
    /// so sync tools move little; `Document.readNotebook`'s fast path needs a compact file
    /// (`.compact`, or `pnmerge compact`).
    @discardableResult
    public func write(to path: String, mode: SaveMode = .incremental) throws(FileError) -> WriteOutcome {
        guard let current = try? FileStore.read(path) else {
            let bytes = try loadableSave(mode, writingTo: path)
            try FileStore.writeAtomically(bytes, to: path)
            return WriteOutcome(byteCount: bytes.count, mergedMeanwhile: 0)
        }
        var merged = 0
        var keptDamaged: String?
        if current != persisted?.bytes {
            func mergeFound(_ other: Document) throws(FileError) {
                guard other.id == id else { return }
                do throws(PeerNoteError) {
                    if try !merge(other).isUpToDate { merged = 1 }
                } catch {
                    // Another notebook that happens to share the id (no shared history) is replaced;
                    // anything else (a transaction is open) must not be overwritten.
                    if case .unrelated = error {} else {
                        throw FileError(path: path, message: "holds changes of this notebook that cannot be merged now (\(error)); not written")
                    }
                }
            }
            switch Result(catching: { () throws(PeerNoteError) in try Document.load(current) }) {
            case .success(let other):
                try mergeFound(other)
            case .failure(let error) where Self.unreadableHere(error) != nil:
                throw FileError(path: path, message: (Self.unreadableHere(error) ?? "") + "; not written")
            case .failure(let damage) where !current.isEmpty:
                // A damaged notebook (a sync client that stopped mid-copy, a bad disk; its first
                // bytes too): its intact changes, if it is this notebook, are merged in, and its
                // bytes are kept beside it (`keptDamaged`), so that nothing it held is lost by
                // writing over it. Bytes that are no notebook at all are kept the same way: a
                // damaged one cannot always be told from them.
                if let rescued = try? Document.salvage(current).document { try mergeFound(rescued) }
                do { keptDamaged = try FileStore.keepAsConflictCopy(bytes: current, of: path) } catch {
                    throw FileError(path: path, message: "holds a damaged notebook (\(damage)) that could not be kept aside (\(error.message)); not written")
                }
            case .failure:
                break
            }
        }
        var outcome = try write(over: path, loaded: current, mode: mode)
        outcome.mergedMeanwhile += merged
        outcome.keptDamaged = keptDamaged
        return outcome
    }

    /// Why a file whose load failed with `error` holds a notebook this library must not write
    /// over, though it is not damaged: a newer writer's format (replacing it would throw away what
    /// this one cannot read), or one too large for this process's memory. Nil for damage.
    static func unreadableHere(_ error: PeerNoteError) -> String? {
        switch error {
        case .unsupportedVersion(let version):
            "holds a notebook of format version \(version), newer than this library reads (\(Format.version))"
        case .needsMoreMemory:
            "holds a notebook this process cannot read (\(error))"
        default:
            nil
        }
    }

    /// Writes the document over `path`, which held `loaded` when the document was read from it,
    /// without losing what another program wrote there in the meantime: a program that does
    /// not take `FileLock`, such as a sync client bringing another device's copy. If the file
    /// changed, the notebook it now holds is merged into this document and the write is tried
    /// again (see `FileStore.replace(_:at:expecting:)`), after a short random wait, for as long
    /// as other writers keep changing it, up to `FileStore.Contention.patience` seconds. Throws,
    /// writing nothing, when the file now holds something that is not a copy of this notebook.
    /// `saved`, when given, is what `save(mode)` returns now (so that a caller that already made
    /// it does not save twice).
    ///
    /// Two writers that share no lock (two users' runs on a shared folder) can take each other's
    /// file out while each puts back what it displaced (`FileStore.ReplaceOutcome.changedTwice`);
    /// the version taken out is merged in too, so that it is in the file written, and its kept
    /// copy is removed then. Its writer was told it is written, and the new file of this one may
    /// have been read and built on while it was in place: so this write does not give up while
    /// other writers keep changing the file, but goes on until it is in place. If the file still
    /// keeps changing after `patience` seconds, this document (this change, and every version
    /// taken out, merged) is written as a conflict copy beside the file, and the error names it.
    /// If the write fails otherwise, a version taken out is left as a conflict copy, named in the
    /// error.
    @discardableResult
    public func write(over path: String, loaded: [UInt8], mode: SaveMode = .incremental,
                      saved: [UInt8]? = nil) throws(FileError) -> WriteOutcome {
        try write(over: path, loaded: loaded, mode: mode, saved: saved) { (bytes, expected) throws(FileError) in
            try FileStore.replace(bytes, at: path, expecting: expected)
        }
    }

    /// `write(over:loaded:mode:saved:)` with `replace` in place of `FileStore.replace` and a
    /// `patience` of its own (tests race writers through them).
    func write(over path: String, loaded: [UInt8], mode: SaveMode, saved: [UInt8]?,
               patience: Double = FileStore.Contention.patience,
               replace: ([UInt8], [UInt8]) throws(FileError) -> FileStore.ReplaceOutcome) throws(FileError) -> WriteOutcome {
        var expected = loaded
        // Versions `replace` took out and kept aside, merged into this document: removed once it is written.
        var keptAside: [String] = []
        func fail(_ message: String) -> FileError {
            let kept = keptAside.map { FileStore.keepAsConflictCopy($0, of: path) }
            let also = kept.isEmpty ? "" : " (a version written meanwhile is kept as \(kept.joined(separator: ", ")))"
            return FileError(path: path, message: message + also)
        }
        // This document, kept as a conflict copy beside the file when the file it was to go over
        // became something it cannot be written over: the error then names the copy.
        func keptInstead(_ reason: String) -> FileError {
            let reason = reason.hasSuffix("; not written") ? String(reason.dropLast("; not written".count)) : reason
            do throws(FileError) {
                let copy = try FileStore.keepAsConflictCopy(bytes: save(.compact), of: path)
                return fail("\(reason); what was being written is kept in \(copy) instead")
            } catch {
                return fail("\(reason); not written (and it could not be kept aside: \(error.message))")
            }
        }
        func mergeIn(_ bytes: [UInt8]) throws(FileError) {
            do throws(PeerNoteError) {
                _ = try merge(Document.load(bytes))
            } catch {
                let what: String
                switch error {
                case .unrelated: what = "another notebook"
                default: what = "a file that cannot be merged (\(error))"
                }
                throw keptInstead("was replaced by \(what) while this was being written")
            }
        }
        var contention = FileStore.Contention(patience: patience)
        // While the file is missing (or empty): how long to wait for it to come back.
        var missing: FileStore.Contention?
        var merges = 0
        // Waits a moment for a file that is missing or empty to come back; merges it in when it
        // has, unless it came back as it was read (moved away and back: nothing to report).
        // False once the wait is over (`missingPatience`).
        func awaitFile() throws(FileError) -> Bool {
            var wait = missing ?? FileStore.Contention(patience: min(patience, FileStore.Contention.missingPatience))
            guard wait.wait() else { return false }
            missing = wait
            if let now = try? FileStore.read(path), !now.isEmpty {
                if now != expected {
                    try mergeIn(now)
                    merges += 1
                }
                expected = now
                missing = nil
            }
            return true
        }
        while true {
            let fileBefore = persisted
            let bytes = merges == 0 ? saved ?? save(mode) : save(mode)
            do throws(FileError) { try Self.checkLoadable(bytes, writingTo: path) } catch {
                persisted = fileBefore
                throw error
            }
            let outcome: FileStore.ReplaceOutcome
            do { outcome = try replace(bytes, expected) } catch {
                // The file changed under this write (a version merged in, gone and back, or no
                // longer a file): what is in hand is more than anyone else holds.
                var st = stat()
                if merges > 0 || missing != nil || stat(path, &st) != 0 || (st.st_mode & S_IFMT) != S_IFREG {
                    throw keptInstead(error.message)
                }
                if keptAside.isEmpty { throw error }
                throw fail(error.message)
            }
            switch outcome {
            case .replaced:
                for kept in keptAside { unlink(kept) }
                return WriteOutcome(byteCount: bytes.count, mergedMeanwhile: merges)
            case .changed(let current) where current.isEmpty:
                // Emptied (a program that rewrites a file in place truncates it first): waited for
                // as a missing file is; still empty after that, it holds nothing to keep, and the
                // next try writes over it.
                if try !awaitFile() {
                    expected = current
                    missing = nil
                }
                continue
            case .changed(let current):
                try mergeIn(current)
                expected = current
            case .changedTwice(let current, let displaced, let keptAt):
                keptAside.append(keptAt)
                try mergeIn(displaced)
                try mergeIn(current)
                expected = current
            case .missing:
                // Moved aside or deleted since it was read: wait for a file to come back, and
                // merge what it holds (written now, this change would be overwritten by it).
                guard try awaitFile() else { throw vanished(from: path, after: min(patience, FileStore.Contention.missingPatience), fail: fail) }
                continue
            }
            merges += 1
            guard contention.wait() else { throw parked(at: path, after: patience, keptAside: keptAside, fail: fail) }
            // The wait let other writers finish: start from what the file holds now.
            if let now = try? FileStore.read(path), now != expected {
                try mergeIn(now)
                expected = now
            }
        }
    }

    /// The error of a write whose file went missing after it was read and did not come back
    /// within `seconds`: this document, which holds this change, is kept as a conflict copy
    /// beside where the file was (which `pnmerge sync` merges in wherever the file comes back).
    private func vanished(from path: String, after seconds: Double, fail: (String) -> FileError) -> FileError {
        let wait = seconds >= 1 ? "\(Int(seconds)) s" : "\(Int(seconds * 1_000)) ms"
        let reason = "disappeared while this was being written (another program moved or deleted it) and did not come back in \(wait)"
        do throws(FileError) {
            let copy = try FileStore.keepAsConflictCopy(bytes: save(.compact), of: path)
            return fail("\(reason); what was being written is kept in \(copy) instead (pnmerge sync merges it in)")
        } catch {
            return fail("\(reason), and this change could not be kept aside (\(error.message)); not written")
        }
    }

    /// The error of a write that gave up after `patience` seconds of other
    /// writers changing the file: this document, which holds this change and every version taken
    /// out (`keptAside`, removed then), is kept as a conflict copy the error names. Its change may
    /// be in the file too (the new file was in place at moments, and other writers may have built
    /// on it), so the error says so instead of "not written".
    private func parked(at path: String, after patience: Double, keptAside: [String], fail: (String) -> FileError) -> FileError {
        let seconds = patience >= 1 ? "\(Int(patience)) s" : "\(Int(patience * 1_000)) ms"
        let reason = "other writers kept changing it for \(seconds) while this was being written"
        do throws(FileError) {
            let copy = try FileStore.keepAsConflictCopy(bytes: save(.compact), of: path)
            for kept in keptAside { unlink(kept) }
            return FileError(path: path, message: "\(reason); what was being written is kept in \(copy) instead (pnmerge sync merges it in; it may be in the file already, so do not make it again)")
        } catch {
            return fail("\(reason), and it could not be kept aside (\(error.message)); it may be in the file or not")
        }
    }
}

/// What `Document.write(over:loaded:mode:)` did.
public struct WriteOutcome: Equatable, Sendable {
    /// The size of the file written.
    public var byteCount: Int
    /// How many times the file had changed since it was read (another program wrote it), so
    /// that what it then held was merged in before writing; almost always 0.
    public var mergedMeanwhile: Int
    /// Where the damaged notebook the file held was kept (`write(to:)`), if it held one: a
    /// conflict copy beside it, whose readable changes of this notebook are merged in already.
    /// Tell the user: `pnmerge salvage` may recover more from it by hand.
    public var keptDamaged: String? = nil
}

// The errors' messages, for `localizedDescription` (what Foundation, SwiftUI and AppKit show).
extension FileError: LocalizedError {
    public var errorDescription: String? { description }
}

extension DocumentFileError: LocalizedError {
    public var errorDescription: String? { description }
}

/// A failure to open a document file: the file itself, or its contents.
public enum DocumentFileError: Error, Equatable, Sendable, CustomStringConvertible {
    case file(FileError)
    case document(path: String, PeerNoteError)

    /// `FILE: offset N: what is wrong` or `FILE: what is wrong`.
    public var description: String {
        switch self {
        case .file(let e): e.description
        case .document(let path, let e): "\(path): \(e)"
        }
    }
}
