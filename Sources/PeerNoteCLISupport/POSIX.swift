#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small POSIX services the tools use instead of Foundation's (which would bring ICU into every
/// process: about 4 ms and 7 MB at each start).
public enum POSIXText {
    /// The text of the current `errno`.
    public static func lastError() -> String { describe(errno) }

    /// The text of an `errno` value.
    public static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// Writes all of `bytes` to a file descriptor, retrying short writes and interruptions, and
/// waiting for room when the descriptor is non-blocking and full (a pipe some parent processes
/// hand over with O_NONBLOCK set would otherwise cut the output at its first full pipe buffer).
/// Returns the `errno` of a failure, nil on success.
@discardableResult
public func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32? {
    bytes.withUnsafeBytes { writeAll($0, to: fd) }
}

/// `writeAll(_:to:)` for bytes where they lie (a string's UTF-8).
@discardableResult
public func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32? {
    var written = 0
    while written < bytes.count {
        let n = write(fd, bytes.baseAddress.map { $0 + written }, bytes.count - written)
        if n > 0 {
            written += n
        } else if n < 0 && errno == EINTR {
            continue
        } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
            var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if poll(&ready, 1, -1) < 0 && errno != EINTR { return errno }
        } else {
            return n < 0 ? errno : EIO
        }
    }
    return nil
}

extension String {
    /// The string cut or padded with spaces to `length` characters (as `NSString.padding`).
    public func padded(toLength length: Int) -> String {
        count >= length ? String(prefix(length)) : self + String(repeating: " ", count: length - count)
    }

    /// The string without leading and trailing white space and line breaks.
    public var trimmingWhitespace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first ... last])
    }
}
