/// The check every writer makes before it replaces or creates a notebook: no save that does
/// not load is ever written.
extension Document {
    /// Throws, naming `path`, when `bytes` (a save about to be written there) would not load:
    /// they are read back as `Document.load` reads them, with the same checks and limits, the
    /// integration work a file of their size allows included. Every writer of this library and
    /// of the tools calls it (or `checkSaveLoads`, which reads less of an appending save) before
    /// it replaces or creates anything, so no save that does not load is written
    /// (`FileError.resultWouldNotLoad`). A full read, not an estimate: the state a copy holds in
    /// memory was built in the order its changes came (loads, merges, edits), and a reader of the
    /// file builds it from the file's rows; the work the reader takes, and so whether it stays
    /// within the budget, is known only by doing it.
    public static func checkLoadable(_ bytes: [UInt8], writingTo path: String) throws(FileError) {
        _ = try checkedLoad(bytes, writingTo: path)
    }

    /// `checkLoadable(bytes, writingTo: path)`, returning the document the check read (for a
    /// caller that lets go of it at another time: a tool ending its process).
    package static func checkedLoad(_ bytes: [UInt8], writingTo path: String) throws(FileError) -> Document {
        do throws(PeerNoteError) { return try Document.load(bytes) } catch {
            throw wouldNotLoad(error, path)
        }
    }

    /// `checkLoadable(bytes, writingTo: path)` for a save of this document, reading only what is
    /// new when it can: when `bytes` are the bytes this document's file was verified as (read by
    /// `load`, or checked here before) with blocks appended (an incremental save: `peernote`
    /// edits, `write`, a merge in place), only those blocks are read, from the reader's state
    /// after the verified ones (`checkAppended`); otherwise (a compact save, a file the reader
    /// replays canonically) the whole save is read. Either way the verdict is a full load's.
    /// The reader's state after a passing check is kept (`Persisted.verified`) when `bytes` are
    /// this document's record of its file, so that the next appending save is checked from there.
    ///
    /// Why any other save is read whole (a compact save: `compact`, a new file; `merge -o` reads
    /// its result whole through `checkLoadable`), each part of the read being what makes the verdict:
    /// - Decoding: the bytes are a new encoding of the whole history (one block, its columns,
    ///   its compression); which of them the reader's decoder accepts, and within which limits
    ///   (the new file's size sets them), is known only by decoding them.
    /// - Replay: a compact save holds the changes in canonical order, while the document's state
    ///   was built in the order they came (loads, merges, edits). The state the reader builds,
    ///   and the integration work it takes against the budget of the new file's size (a compact
    ///   file is usually smaller than the one it replaces, so its budget is smaller), are known
    ///   only by replaying; an honest history gives the document's state, a crafted one need not.
    /// - The state section: it is written from the document's state and checked against the
    ///   reader's replay, which is the check that a reader of the section alone
    ///   (`readNotebook`) sees the notebook the history gives.
    /// A compact save's bytes are a function of the document's changes, so the one compact save
    /// that needs no reading is one whose bytes are already verified: the bytes of the file the
    /// document was loaded from (`checkAppended` returns the record for bytes equal to it).
    ///
    /// - Complexity: for an appending save, proportional to what the appended blocks hold and do
    ///   (their decoding, checks and integration), plus a comparison and a CRC-32 of the verified
    ///   bytes (memory speed); else that of `load(bytes)`.
    func checkSaveLoads(_ bytes: [UInt8], writingTo path: String) throws(FileError) {
        // Taken out of the record while it is read on, so that the replay appends to arrays
        // nothing else holds (the ops the load adopted, which the document shares, are never
        // appended to: `OpStore`); it is used up by the check (a failed check leaves none: the
        // next save is read in full).
        // Moved, never copied: a second reference to its log would make the replay copy it.
        let verified = persisted?.verified
        persisted?.verified = nil
        let next: VerifiedFile?
        do throws(PeerNoteError) {
            if let file = consume verified, let checked = try Self.checkAppended(bytes, after: consume file) {
                next = checked.record
            } else {
                next = try Document.load(bytes).persisted?.verified
            }
        } catch {
            throw Self.wouldNotLoad(error, path)
        }
        if persisted?.bytes == bytes { persisted?.verified = next }
    }

    private static func wouldNotLoad(_ error: PeerNoteError, _ path: String) -> FileError {
        .wouldNotLoad(path: path, error)
    }

    /// `save(mode)`, checked with `checkSaveLoads` before it is returned; when it would not load,
    /// the document's record of its file is left as it was (nothing is written).
    func loadableSave(_ mode: SaveMode, writingTo path: String) throws(FileError) -> [UInt8] {
        // Without the verified state, which the check takes (a copy here would make it copy the log).
        var file = persisted
        file?.verified = nil
        let bytes = save(mode)
        do throws(FileError) { try checkSaveLoads(bytes, writingTo: path) } catch {
            persisted = file
            throw error
        }
        return bytes
    }
}
