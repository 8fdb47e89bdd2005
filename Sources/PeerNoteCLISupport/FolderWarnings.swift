import PeerNote

/// The lines both tools print on standard error for the chunks a notebook folder's reading
/// skipped: the library's line for each, and for a damaged chunk whose chain up to it is
/// intact, how to get its intact part back.
public enum FolderWarnings {
    /// One line per skipped chunk or file (without the tool's `NAME: warning: ` prefix).
    public static func lines(_ reading: NotebookFolder.Reading, folder: String) -> [String] {
        let damaged = Set(reading.damaged)
        return zip(reading.warnings, reading.warningFiles).map { warning, file in
            line(warning, damagedChunk: damaged.contains(file) ? file : nil, folder: folder)
        }
    }

    /// One line: `warning`, and for a damaged chunk (`damagedChunk`, its file name) whose chain up
    /// to it is intact, how to get its intact part back.
    public static func line(_ warning: String, damagedChunk: String?, folder: String) -> String {
        guard let name = damagedChunk else { return warning }
        return warning + " (pnmerge salvage \(ShellQuote.path(NotebookFolder(folder).path + "/" + name)) -o OUT recovers its intact part; then merge OUT into the folder)"
    }
}
