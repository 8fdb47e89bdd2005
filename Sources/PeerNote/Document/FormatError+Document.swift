// The format layer's error as the library's public error: Document maps it, so that
// Encoding names nothing of Document.

extension FormatError {
    /// The library's error for it: a newer version, too large for this machine, or damage.
    var documentError: PeerNoteError {
        if let v = unsupportedVersion { return .unsupportedVersion(v) }
        if let m = memory { return .needsMoreMemory(needed: m.needed, available: m.available) }
        return .invalidDocument(offset: offset, message: message)
    }
}
