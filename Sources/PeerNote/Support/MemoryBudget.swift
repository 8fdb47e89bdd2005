#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A document that needs more memory to read than the process can use (`MemoryBudget`).
struct MemoryShortfall: Equatable, Sendable {
    var needed: UInt64
    var available: UInt64
}

/// How much memory reading a document may take, checked before its compressed sections are
/// inflated: a file of a few megabytes may inflate to a thousand times its size (DEFLATE's own
/// limit, which the format allows, peernote(5)), and a loaded character takes about a dozen
/// bytes (its scalar, its element in the list, its share of the op log), so such a file would
/// need tens of gigabytes. Without this check the process is killed by the system, or stops
/// with a fatal error under a memory limit, instead of saying what is wrong.
///
/// The estimate is `bytesPerInflatedByte` for each byte the file's sections declare they inflate
/// to, plus `baseline`: measured on a notebook whose 100 MB body compresses to 98 KB (1.22 GB
/// at its peak for `pnmerge validate`, 1.32 GB for `show`). What may be used is the least of the
/// machine's physical memory, what the address-space limit (`ulimit -v`) leaves this process,
/// and what its control group's memory limit leaves (Linux).
enum MemoryBudget {
    static let bytesPerInflatedByte: UInt64 = 12
    static let baseline: UInt64 = 16 << 20

    /// The memory reading sections that inflate to `inflated` bytes in all needs, by the estimate.
    static func needed(inflating inflated: UInt64) -> UInt64 {
        let (product, overflow) = inflated.multipliedReportingOverflow(by: bytesPerInflatedByte)
        return overflow ? .max : product.addingReportingOverflow(baseline).overflow ? .max : product + baseline
    }

    /// Throws when `inflated` bytes of sections need more memory than this process may use.
    /// `offset`: where the section that crosses the line starts.
    static func check(inflating inflated: UInt64, offset: Int?) throws(FormatError) {
        let need = needed(inflating: inflated)
        // Most documents are far below any machine's memory: no system call for them.
        guard need > 32 << 20 else { return }
        let can = available()
        guard need > can else { return }
        throw FormatError(offset: offset, message: "reading it needs about \(megabytes(need)) of memory (its sections inflate to \(megabytes(inflated))), more than the \(megabytes(can)) this process can use",
                          memory: MemoryShortfall(needed: need, available: can))
    }

    /// The least of physical memory, what `RLIMIT_AS` leaves beside the address space already
    /// mapped, and (Linux) what the control group's `memory.max` leaves beside its use.
    static func available() -> UInt64 {
        var least = physicalMemory()
        var limit = rlimit()
        #if os(Linux)
        let resource = Int32(RLIMIT_AS.rawValue), unlimited = rlim_t.max
        #else
        let resource = RLIMIT_AS, unlimited = RLIM_INFINITY
        #endif
        if getrlimit(resource, &limit) == 0, limit.rlim_cur != unlimited {
            let mapped = mappedBytes()
            least = min(least, UInt64(limit.rlim_cur) > mapped ? UInt64(limit.rlim_cur) - mapped : 0)
        }
        #if os(Linux)
        if let max = readNumber("/sys/fs/cgroup/memory.max") {
            let used = readNumber("/sys/fs/cgroup/memory.current") ?? 0
            least = min(least, max > used ? max - used : 0)
        }
        #endif
        return least
    }

    private static func physicalMemory() -> UInt64 {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, size > 0 else { return .max }
        return UInt64(pages) * UInt64(size)
    }

    /// The process's mapped address space (`/proc/self/statm`'s first field, in pages); 0 where
    /// it cannot be read.
    private static func mappedBytes() -> UInt64 {
        #if os(Linux)
        guard let text = readText("/proc/self/statm"), let first = text.split(separator: " ").first, let pages = UInt64(first) else { return 0 }
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? pages * UInt64(size) : 0
        #else
        return 0
        #endif
    }

    /// A file holding one decimal number (`max` reads as no limit: nil).
    private static func readNumber(_ path: String) -> UInt64? {
        guard let text = readText(path) else { return nil }
        return text.split(whereSeparator: { $0 == "\n" || $0 == " " }).first.flatMap { UInt64($0) }
    }

    /// A small file's text (at most 256 bytes), or nil.
    private static func readText(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        return String(decoding: buffer[0 ..< n], as: UTF8.self)
    }

    /// `bytes` for a message: `1.2 GB`, `980 MB`.
    static func megabytes(_ bytes: UInt64) -> String {
        let mb = Double(bytes) / 1_000_000
        if mb >= 1_000 { return "\(Double(Int(mb / 100)) / 10) GB" }
        return "\(Int(mb.rounded(.up))) MB"
    }
}
