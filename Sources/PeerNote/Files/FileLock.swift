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
    ///
    /// `cleaningUp: false` takes the lock without looking for what killed writers left, for a
    /// caller that has just read the document's folder and found nothing of the kind there
    /// (`pnmerge sync`, which writes many notebooks of one folder: a look per write would read
    /// the folder once per notebook in it). Its `leftoverCleanup` is then empty.
    public convenience init(for path: String, cleaningUp: Bool = true, waiting: ((String) -> Void)? = nil) throws(FileError) {
        guard let (fd, lockPath) = try Self.acquire(path, blocking: true, waiting: waiting) else {
            throw .cannotLock(path: path, errno: nil)
        }
        self.init(holding: fd, lockPath: lockPath, of: path, cleaningUp: cleaningUp)
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
        if let dir = Environment.value("PEERNOTE_LOCK_DIR"), !dir.isEmpty, !dir.hasPrefix("/") {
            throw .lockFolderNotAbsolute(path: path, folder: dir)
        }
        let lockPath = FileLock.lockFile(for: path)
        let dir = FileStore.directory(of: lockPath)
        if mkdir(dir, 0o700) != 0 && errno != EEXIST {
            throw .cannotCreateLockFolder(path: path, folder: dir, errno: errno)
        }
        if let problem = Self.unsafeFolderProblem(dir) {
            throw .unsafeLockFolder(path: path, folder: dir, problem)
        }
        var said = false
        while true {
            let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw .cannotCreateLockFile(path: path, lockFile: lockPath, errno: errno) }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                if errno == EWOULDBLOCK && !blocking {
                    // Not held: the file is left as it is (its holder removes it).
                    close(fd)
                    return nil
                }
                if errno == EWOULDBLOCK && !said { said = true; waiting?(lockPath) }
                while flock(fd, LOCK_EX) != 0 {
                    if errno == EINTR { continue }
                    let e = errno
                    close(fd)
                    throw .cannotLock(path: path, errno: e)
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

    /// Holding the lock on `fd` (`lockPath`): cleans up what killed writers left beside `path`,
    /// unless told not to.
    private init(holding fd: Int32, lockPath: String, of path: String, cleaningUp: Bool = true) {
        self.fd = fd
        self.lockPath = lockPath
        leftoverCleanup = cleaningUp ? FileStore.cleanUpLeftovers(of: path) : FileStore.LeftoverCleanup()
    }

    deinit {
        // Removed while still held: a waiter that gets this file's lock next sees it is gone.
        unlink(lockPath)
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// Why the lock folder `dir` cannot be trusted, or nil: it must be a folder itself (not a
    /// link to one), owned by this process's user, and not writable by group or others.
    static func unsafeFolderProblem(_ dir: String) -> FileError.LockFolderProblem? {
        var st = stat()
        guard lstat(dir, &st) == 0 else { return .unreadable(errno: errno) }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            return (st.st_mode & S_IFMT) == S_IFLNK ? .symbolicLink : .notAFolder
        }
        guard st.st_uid == geteuid() else { return .otherOwner(owner: UInt32(st.st_uid), user: UInt32(geteuid())) }
        guard st.st_mode & 0o022 == 0 else { return .writableByOthers(mode: UInt32(st.st_mode)) }
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
            // `new.peernote`, `./new.peernote` and a link to it share one lock.
            absolute = String(cString: folder) + "/" + FileStore.lastComponent(of: target)
            free(folder)
        } else if !target.hasPrefix("/") {
            absolute = FileManager.default.currentDirectoryPath + "/" + target
        }
        var base = "/tmp/peernote-locks-\(getuid())"
        // PEERNOTE_LOCK_DIR must be absolute: writers in different folders would otherwise use
        // different locks for one document.
        if let dir = Environment.value("PEERNOTE_LOCK_DIR"), dir.hasPrefix("/") {
            base = dir
            while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        }
        return base + "/" + LockName.hash(absolute) + ".lock"
    }
}
