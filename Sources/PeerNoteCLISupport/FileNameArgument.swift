import PeerNote

/// The spelling of a FILE or OUT argument, checked before anything is read or written. An
/// empty name names no file, and a name that ends in `/` names a folder (no file can be read or
/// written there) unless it is a notebook folder: both are usage errors (exit 64), which the tools reported as a file that is
/// missing (66) or could not be written (74, "rename failed").
public enum FileNameArgument {
    /// What is wrong with `path` as the name of a file (without the tool's prefix), or nil;
    /// `expecting` says what to name instead ("a .peernote file"). `-` (standard input or
    /// output) and every other name pass.
    public static func problem(_ path: String, expecting: String = "a .peernote file") -> String? {
        if path.isEmpty { return "the file name is empty: name \(expecting)" }
        // A notebook folder is named as a folder (shells complete it with a '/').
        if path.hasSuffix("/") && !NotebookFolder.isFolder(path) {
            return "\(DisplayText.oneLine(path)): a name ending in '/' names a folder; name \(expecting)"
        }
        return nil
    }

    /// Refuses (a usage error, one line) the first of `paths` that names no file, and an `output`
    /// that does not (named as the output: `-o OUT`).
    public static func require(_ paths: [String], output: String? = nil) throws(CLIFailure) {
        for path in paths { if let p = problem(path) { throw CLIFailure(.usage, p) } }
        if let output, let p = problem(output, expecting: "the .peernote file to write") {
            throw CLIFailure(.usage, "-o: " + p)
        }
    }
}
