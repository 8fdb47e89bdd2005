import PeerNoteCLISupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing results to standard output, reporting a failed write (a full disk, a closed pipe) as exit 74.
enum StandardOutput {
    static func write(_ text: String) throws(CLIFailure) {
        // Its UTF-8 where the string holds it (no copy of a large text), unless it is stored
        // otherwise.
        var text = text
        if let failure = text.withUTF8({ write(UnsafeRawBufferPointer($0)) }) { throw failure }
    }

    /// A writer to standard output a chunk at a time, for results as large as a whole notebook.
    static func chunked() -> ChunkedWriter {
        ChunkedWriter { (bytes: [UInt8]) throws(CLIFailure) in try write(bytes: bytes) }
    }

    /// `write(text)` for text already encoded as UTF-8 (`JSONValue.renderedBytes`).
    static func write(bytes: [UInt8]) throws(CLIFailure) {
        if let failure = bytes.withUnsafeBytes({ write($0) }) { throw failure }
    }

    /// Writes `bytes` whole (`writeAll`); the failure, if one write fails, in the words
    /// `pnmerge` uses for it.
    private static func write(_ bytes: UnsafeRawBufferPointer) -> CLIFailure? {
        writeAll(bytes, to: 1).map { CLIFailure(.ioError, "standard output: write failed: \(POSIXText.describe($0))") }
    }
}
