#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Path text as `NSString` splits it (which the tools used before they dropped Foundation).
public enum PathText {
    /// `a/b/c` → `a/b`; `c` → `` (empty); `/c` → `/`; trailing and repeated slashes ignored.
    public static func deletingLastComponent(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard !parts.isEmpty else { return absolute ? "/" : "" }
        let dir = parts.dropLast().joined(separator: "/")
        return absolute ? "/" + dir : dir
    }

    /// Creates `path` and any missing directories above it (as `mkdir -p`). Returns why it
    /// failed, nil on success or when the directory is already there.
    public static func createDirectories(_ path: String) -> String? {
        var st = stat()
        if stat(path, &st) == 0 { return (st.st_mode & S_IFMT) == S_IFDIR ? nil : "a file is in the way" }
        let parent = deletingLastComponent(path)
        if !parent.isEmpty && parent != path, let why = createDirectories(parent) { return why }
        if mkdir(path, 0o777) == 0 || errno == EEXIST { return nil }
        return POSIXText.lastError()
    }

    /// One name in a directory, as the bytes the directory holds.
    public struct DirectoryEntry: Equatable, Sendable {
        /// The name's bytes.
        public var bytes: [UInt8]

        public init(bytes: [UInt8]) { self.bytes = bytes }

        /// The name, or nil when its bytes are not valid UTF-8: a `String` made from them would
        /// hold U+FFFD instead and so name another file, which does not exist.
        public var name: String? { UTF8Bytes.isValid(bytes) ? String(decoding: bytes, as: UTF8.self) : nil }

        /// The name for a one-line message, bytes that are not UTF-8 shown as `\xFF`.
        public var shown: String { UTF8Bytes.shown(bytes) }

        /// A hidden entry: its name starts with a dot.
        public var isHidden: Bool { bytes.first == UInt8(ascii: ".") }

        /// `dir/NAME` as a C path (NUL-terminated), for `lstat` and `stat` on any name.
        public func path(in dir: String) -> [CChar] {
            var path = Array(dir.utf8)
            if !path.isEmpty && path.last != UInt8(ascii: "/") { path.append(UInt8(ascii: "/")) }
            return (path + bytes).map { CChar(bitPattern: $0) } + [0]
        }
    }

    /// The entries of a directory (without `.` and `..`), names as bytes, or why it cannot be read.
    public static func entriesOfDirectory(_ path: String) -> Result<[DirectoryEntry], DirectoryError> {
        guard let dir = opendir(path) else { return .failure(DirectoryError(description: POSIXText.lastError())) }
        defer { closedir(dir) }
        var entries: [DirectoryEntry] = []
        while let entry = readdir(dir) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if bytes != [0x2E] && bytes != [0x2E, 0x2E] { entries.append(DirectoryEntry(bytes: bytes)) }
        }
        return .success(entries)
    }

    /// Why a directory could not be listed (`strerror`'s text).
    public struct DirectoryError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The user's home directory from the password database (`$HOME` is the caller's first choice).
    public static func homeDirectory() -> String {
        guard let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir else { return "/" }
        return String(cString: dir)
    }

    /// The running executable's absolute path, symbolic links resolved; nil when unknown.
    public static func currentExecutable() -> String? {
        #if os(Linux)
        if let path = realPath("/proc/self/exe") { return path }
        #endif
        guard let first = CommandLine.arguments.first, first.contains("/") else { return nil }
        return realPath(first)
    }

    /// `realpath(3)`: the absolute path with symbolic links, `.` and `..` resolved.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `dir` and `name` joined by one slash (`name` alone when `dir` is empty).
    public static func appending(_ name: String, to dir: String) -> String {
        if dir.isEmpty { return name }
        if name.isEmpty { return dir }
        return dir.hasSuffix("/") ? dir + name : dir + "/" + name
    }
}
