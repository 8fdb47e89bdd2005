#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PeerNote

/// The way back for a damaged notebook, said on its error line: when `pnmerge salvage` recovers
/// something (an intact base block anywhere in the file: damage after intact blocks, or junk
/// before, between or after them), the tools end the line with the command and what it would
/// recover. Only on the error path: it salvages the bytes to count.
public enum SalvageHint {
    /// `; 'pnmerge salvage FILE -o NEW.peernote' recovers its N intact changes`, or "" when
    /// `error` is not damage or nothing can be recovered (`path` as the user gave it; `-` for
    /// standard input, whose bytes were `bytes`). No hint for a pipe (`<(command)`): the
    /// command would name a pipe that is gone by the time it runs. For `-`, the hint comes only
    /// when `standardInputIsFile` (standard input redirected from a file, `< FILE`, which the
    /// user can give again): standard input that is a pipe (`git cat-file … | pnmerge validate -`,
    /// as the pre-commit hook runs it), a socket or a terminal would make `pnmerge salvage -`
    /// read nothing useful.
    public static func suffix(for error: PeerNoteError, bytes: [UInt8], path: String, standardInputIsFile: Bool = false) -> String {
        var st = stat()
        if path == "-" {
            if !standardInputIsFile { return "" }
        } else if stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFIFO {
            return ""
        }
        guard case .invalidDocument = error, !bytes.isEmpty,
              let rescue = try? Document.salvage(bytes), !rescue.isIntact else { return "" }
        let n = rescue.document.changeCount
        let file = ShellQuote.path(path)
        return "; 'pnmerge salvage \(file) -o NEW.peernote' recovers its \(n) intact change\(n == 1 ? "" : "s")"
    }

    /// `suffix(for:bytes:path:)` for a file not read yet (read again here; "" when it cannot be).
    public static func suffix(for error: PeerNoteError, path: String) -> String {
        guard case .invalidDocument = error, path != "-", let bytes = try? FileStore.read(path) else { return "" }
        return suffix(for: error, bytes: bytes, path: path)
    }

    /// Whether this process's standard input is a regular file (`< FILE`), the only kind of
    /// standard input that `pnmerge salvage -` can be given again.
    public static func standardInputIsFile() -> Bool {
        var st = stat()
        return fstat(0, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }
}
