/// The check every writer makes before it replaces or creates a notebook: no save that does
/// not load is ever written.
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
            var failure = FileError(path: path, problem: "the result would not load (\(error.description))",
                                    aftermath: .notWritten(hint: "nothing was changed"))
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
}
