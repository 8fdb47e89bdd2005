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
            throw .cannotMakeConflictCopy(path: path)
        }
        syncDirectory(of: target)
        return kept
    }


    /// Renames the file at `path` (a version of `target` another program wrote) to a conflict
    /// copy beside `target`, `NAME.sync-conflict-YYYYMMDD-HHMMSS-peernote.EXT` (`…-peernote2.EXT` and on
    /// when that name is taken, as when two are kept in one second), which the user sees and
    /// `pnmerge sync` merges back in; returns the new name, or `path` itself when that fails,
    /// where cleanup keeps it until the document has all of it. A NAME too long for the marks to
    /// fit in a file name (255 bytes) is cut to its first characters that do: sync groups copies
    /// by document id, not by name.
    static func keep(_ path: String, beside target: String, link: (String, String) -> Int32 = { link($0, $1) }) -> String {
        let (stem, ext) = conflictCopyParts(of: lastComponent(of: target))
        // (A name that would be cut to nothing would be hidden, which sync passes over.)
        guard !stem.isEmpty else { return path }
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

    /// The NAME and .EXT of the file `name`, as a conflict copy of it made by `keep` shows them
    /// around its marks: NAME cut to its first characters when NAME, the marks (at most 41
    /// bytes) and .EXT would not fit in a file name (255 bytes); empty when nothing of it fits.
    static func conflictCopyParts(of name: String) -> (stem: Substring, ext: String) {
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        var stem = Substring(dot.map { String(name[..<$0]) } ?? name)
        let ext = dot.map { String(name[$0...]) } ?? ""
        // ".sync-conflict-" + YYYYMMDD-HHMMSS + "-peernote" + up to two digits.
        let marks = 15 + 15 + 9 + 2
        while !stem.isEmpty && stem.utf8.count + marks + ext.utf8.count > 255 { stem = stem.dropLast() }
        return (stem, ext)
    }

    /// The name a conflict copy of the file `name` made by `keep` leads back to once its marks
    /// are taken out: `name` itself, or its shortened form when it is too long for them.
    public static func nameBehindConflictCopy(of name: String) -> String {
        let (stem, ext) = conflictCopyParts(of: name)
        return stem + ext
    }

    /// What `place` did.
    enum Placement: Equatable {
        case placed
        /// Something (even a dangling link) is at the destination; nothing was changed.
        case exists
        /// The link or rename failed with this `errno`.
        case failed(Int32)
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
            return rename(from, to) == 0 ? .placed : .failed(errno)
        default:
            return .failed(errno)
        }
    }
}
