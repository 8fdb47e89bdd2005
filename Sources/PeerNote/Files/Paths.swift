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
            throw .linkNotUTF8(path: path)
        }
        // Still a link after 40: a loop, whose links a rename would replace one by a file.
        var st = stat()
        if lstat(target, &st) == 0, st.st_mode & S_IFMT == S_IFLNK {
            throw .linkLoop(path: path)
        }
        return target
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
}
