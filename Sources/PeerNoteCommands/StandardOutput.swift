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
        try write(bytes: Array(text.utf8))
    }

    /// `write(text)` for text already encoded as UTF-8 (`JSONValue.renderedBytes`).
    static func write(bytes: [UInt8]) throws(CLIFailure) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { buf in sysWrite(1, buf.baseAddress.map { $0 + written }, bytes.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIFailure(.ioError, "standard output: \(String(cString: strerror(errno)))")
            }
            written += n
        }
    }
}
