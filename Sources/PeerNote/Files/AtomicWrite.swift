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
import CFileSystem

private func sysRead(_ fd: Int32, _ buf: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, buf, n) }
private func sysWrite(_ fd: Int32, _ buf: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, buf, n) }

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
        guard stat(path, &st) == 0 else { throw .reading(path, errno: errno) }
        let kind = st.st_mode & S_IFMT
        if kind == S_IFDIR { throw .isDirectory(path: path) }
        guard kind == S_IFREG || (pipes && kind == S_IFIFO) else {
            throw .notRegularFile(path: path, pipesAllowed: pipes)
        }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw .reading(path, errno: errno) }
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
    /// anything is read (else a 3 GB file would be read to its first gigabyte, and under a memory
    /// limit the process would die allocating it), and the bytes are read into one buffer of that
    /// size. A pipe, or a file that grows while it is read, is refused once it has given more
    /// than `maxFileSize` bytes.
    static func readToEnd(_ fd: Int32, path: String) throws(FileError) -> [UInt8] {
        func tooLarge() -> FileError { .tooLarge(path: path, limit: maxFileSize) }
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
                throw .reading(path, errno: errno)
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
        try putInPlace(try writeTemporary(bytes, beside: target, reportingAs: path, permissionsLike: source), at: target, reportingAs: path)
    }

    /// `writeAtomically(bytes, to: path, permissionsLike: source)`, putting the file in place only
    /// once `check` has passed: `check` runs on this thread while the temporary file is written
    /// and flushed on another, and the rename follows when both are done. When `check` throws,
    /// the temporary file is removed, nothing is replaced, and its error is thrown (before any
    /// error of the write's). Meant for a check that reads the bytes back
    /// (`Document.checkLoadable`): the flush, which waits on the disk (longest on a USB stick),
    /// is made while the check runs, and the write adds the rename alone.
    /// A character device or a FIFO is written into only after `check` has passed: what is
    /// written there cannot be taken back.
    @discardableResult
    public static func writeAtomically<T>(_ bytes: [UInt8], to path: String, permissionsLike source: String? = nil,
                                          checkedAlongside check: () throws(FileError) -> T) throws(FileError) -> T {
        if try isSpecial(path) {
            let value = try check()
            try writeInto(bytes, special: path)
            return value
        }
        let target = try writeTarget(path)
        let (value, tmp) = try writeTemporary(bytes, beside: target, reportingAs: path, permissionsLike: source, checkedAlongside: check)
        try putInPlace(tmp, at: target, reportingAs: path)
        return value
    }

    /// `writeTemporary(bytes, beside: path, …)` on another thread while `check` runs on this one;
    /// the temporary file is returned only when `check` passed. When it throws, the file is
    /// removed and its error thrown (before any error of the write's).
    static func writeTemporary<T>(_ bytes: [UInt8], beside path: String, reportingAs shown: String, permissionsLike source: String? = nil,
                                  infix: String = temporaryInfix,
                                  checkedAlongside check: () throws(FileError) -> T) throws(FileError) -> (T, Temporary) {
        let (checked, written) = Concurrently.run({ Result { () throws(FileError) in try check() } }, alongside: {
            Result { () throws(FileError) in try writeTemporary(bytes, beside: path, reportingAs: shown, permissionsLike: source, infix: infix) }
        })
        let value: T
        do { value = try checked.get() } catch {
            if case .success(let tmp) = written {
                unlink(tmp.path)
                tmp.release()
            }
            throw error
        }
        return (value, try written.get())
    }

    /// Renames `tmp` over `target` and flushes the directory; releases `tmp` either way (and
    /// removes it when the rename fails).
    private static func putInPlace(_ tmp: Temporary, at target: String, reportingAs path: String) throws(FileError) {
        defer { tmp.release() }
        guard rename(tmp.path, target) == 0 else {
            let e = errno
            unlink(tmp.path)
            throw .failed(path: path, .rename, errno: e)
        }
        syncDirectory(of: target)
    }

    /// Whether `path` is a character device or a FIFO (written into, not replaced); throws when it
    /// is a file that must not be replaced: read-only, not writable by this user, a folder, or
    /// neither a regular file nor one of those. A missing file is fine (it will be created).
    static func isSpecial(_ path: String) throws(FileError) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0 else { return false }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            // Replacing the file by renaming would ignore its mode: a file made read-only
            // (for everyone, or for this user) is left alone, as an editor would.
            if st.st_mode & 0o222 == 0 {
                throw .readOnly(path: path)
            }
            if access(path, W_OK) != 0 {
                throw .notWritable(path: path, errno: errno)
            }
            return false
        case S_IFCHR, S_IFIFO: return true
        case S_IFDIR: throw .isDirectory(path: path)
        default: throw .notReplaceable(path: path)
        }
    }


    /// Writes `bytes` into the character device or FIFO at `path` (opened as it is, never created).
    static func writeInto(_ bytes: [UInt8], special path: String) throws(FileError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpenForWriting(path: path, errno: errno) }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { buf in sysWrite(fd, buf.baseAddress.map { $0 + written }, bytes.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .failed(path: path, .write, errno: errno)
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
        if lstat(path, &st) == 0 { throw .alreadyExists(path: path) }
        let tmp = try writeTemporary(bytes, beside: path, reportingAs: path, permissionsLike: source)
        defer { tmp.release() }
        switch place(tmp.path, at: path, link: link) {
        case .placed:
            syncDirectory(of: path)
        case .exists:
            unlink(tmp.path)
            throw .alreadyExists(path: path)
        case .failed(let e):
            unlink(tmp.path)
            throw .cannotCreate(path: path, errno: e)
        }
    }

    /// A complete, fsynced temporary file, and a descriptor that holds its `flock` (`release()`
    /// once the file has been renamed or linked into place, or removed).
    struct Temporary: Sendable {
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
    /// `infix` goes between the name and mkstemp's six characters (`.NAME.tmp-XXXXXX` by default).
    static func writeTemporary(_ bytes: [UInt8], beside path: String, reportingAs shown: String,
                                       permissionsLike source: String? = nil, infix: String = temporaryInfix) throws(FileError) -> Temporary {
        let dir = directory(of: path)
        let name = lastComponent(of: path)
        var template = Array("\(dir)/\(temporaryPrefix(forName: name, infix: infix))XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buf in buf.baseAddress.map { mkstemp($0) } ?? -1 }
        guard fd >= 0 else {
            // The usual mistakes said plainly: a folder that is not there, or a file in its place.
            let problem = errno
            var st = stat()
            if problem == ENOENT && stat(dir, &st) != 0 { throw .folderMissing(path: shown, folder: dir) }
            if problem == ENOTDIR { throw .folderNotAFolder(path: shown, folder: dir) }
            throw .cannotCreateTemporary(path: shown, folder: dir, errno: problem)
        }
        let tmpPath = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Removed by the tools' signal handler if the process is interrupted before it is released.
        let slot = template.withUnsafeBufferPointer { buf in buf.baseAddress.map { peernote_temporary_register($0) } ?? -1 }
        // Held until the caller closes `lock`: while it is held, no cleanup removes the file. A new
        // file is never taken for a stale one (see removeStaleTemporaries), so this cannot block;
        // where flock is not supported, the age rule alone protects it.
        _ = flock(fd, LOCK_EX | LOCK_NB)
        func fail(_ call: FileError.SystemCall) -> FileError {
            let e = errno
            close(fd)
            unlink(tmpPath)
            peernote_temporary_unregister(slot)
            return .failed(path: shown, call, errno: e)
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
                throw fail(.write)
            }
            written += n
        }
        guard fsync(fd) == 0 else { throw fail(.fsync) }
        // A second descriptor of the same open file keeps the lock after `fd` is closed.
        let lock = dup(fd)
        guard lock >= 0 else { throw fail(.dup) }
        guard close(fd) == 0 else {
            let e = errno
            unlink(tmpPath)
            close(lock)
            peernote_temporary_unregister(slot)
            throw .failed(path: shown, .close, errno: e)
        }
        return Temporary(path: tmpPath, lock: lock, slot: slot)
    }

    static func isASCIIAlphanumeric(_ c: UInt8) -> Bool {
        (0x30 ... 0x39).contains(c) || (0x41 ... 0x5A).contains(c) || (0x61 ... 0x7A).contains(c)
    }

    /// A file's modification time.
    static func modificationTime(_ st: stat) -> timespec {
        #if canImport(Darwin)
        st.st_mtimespec
        #else
        st.st_mtim
        #endif
    }

    /// A file's status-change time: when it arrived in its folder on this machine (a sync tool
    /// sets the modification time to the sender's, not this).
    static func changeTime(_ st: stat) -> timespec {
        #if canImport(Darwin)
        st.st_ctimespec
        #else
        st.st_ctim
        #endif
    }

    /// Whether a file time `t` is at least `age` seconds ago. An age of zero or less holds for
    /// every file. Both sides are read to the nanosecond: a file's time may come from a finer
    /// clock than `time()`, so a file written a moment ago can carry the next second.
    static func isAtLeast(_ age: Double, secondsAgo t: timespec) -> Bool {
        guard age > 0 else { return true }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let elapsed = Double(now.tv_sec - t.tv_sec) + Double(now.tv_nsec - t.tv_nsec) / 1e9
        return elapsed >= age
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }

    static func syncDirectory(of path: String) {
        let dfd = open(directory(of: path), O_RDONLY)
        if dfd >= 0 { fsync(dfd); close(dfd) }
    }

    static func currentUmask() -> mode_t {
        let m = umask(0)
        umask(m)
        return m
    }
}
