/// The spelling of a FILE or OUT argument, checked before anything is read or written. An
/// empty name names no file, and a name that ends in `/` names a folder (no file can be read or
/// written there): both are usage errors (exit 64), which the tools reported as a file that is
/// missing (66) or could not be written (74, "rename failed").
public enum FileNameArgument {
    /// What is wrong with `path` as the name of a document (without the tool's prefix), or nil.
    /// `-` (standard input or output) and every other name pass.
    public static func problem(_ path: String) -> String? {
        if path.isEmpty { return "the file name is empty: name a .peernote file" }
        if path.hasSuffix("/") {
            return "\(DisplayText.oneLine(path)): a name ending in '/' names a folder; name a .peernote file"
        }
        return nil
    }

    /// The first problem among `paths` (see `problem(_:)`), or nil.
    public static func problem(_ paths: [String]) -> String? {
        for path in paths { if let p = problem(path) { return p } }
        return nil
    }
}
