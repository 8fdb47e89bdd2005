import PeerNoteCLISupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private func sysWrite(_ fd: Int32, _ buf: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, buf, n) }

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

    /// Writes `bytes` whole; the failure, if one write fails.
    private static func write(_ bytes: UnsafeRawBufferPointer) -> CLIFailure? {
        var written = 0
        while written < bytes.count {
            let n = sysWrite(1, bytes.baseAddress.map { $0 + written }, bytes.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                return CLIFailure(.ioError, "standard output: \(String(cString: strerror(errno)))")
            }
            written += n
        }
        return nil
    }
}
