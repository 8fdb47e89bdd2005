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
/// at its peak for `pnmerge validate`, 1.32 GB for `show`), with room for what the commands
/// build on top of a loaded document (a body as a string and its lines for `show`, `list` and
/// `export`; the merged result and its encoding for `merge`): at 12 bytes, the load's own need,
/// a body of 280-310 million characters passed this check and then exhausted memory in
/// `show`, `list` and `merge`. What may be used is the least of the machine's physical memory
/// and swap, what the address-space limit (`ulimit -v`) leaves this process, and the memory
/// limits of its control groups (Linux, v1 and v2), less what the process already holds (the
/// first of the two documents a merge reads). The estimate errs low rather than high: a
/// document refused here would not have loaded, while one it lets through may still run out
/// (the system's other users are not counted).
enum MemoryBudget {
    static let bytesPerInflatedByte: UInt64 = 16
    static let baseline: UInt64 = 16 << 20

    /// The memory reading sections that inflate to `inflated` bytes in all needs, by the estimate.
    static func needed(inflating inflated: UInt64) -> UInt64 {
        let (product, overflow) = inflated.multipliedReportingOverflow(by: bytesPerInflatedByte)
        return overflow ? .max : product.addingReportingOverflow(baseline).overflow ? .max : product + baseline
    }

    /// The least of physical memory and swap and (Linux) the memory limits of the process's
    /// control groups, less the memory the process already holds (resident), and what
    /// `RLIMIT_AS` leaves beside the address space already mapped.
    static func available() -> UInt64 {
        var least = physicalMemory()
        #if os(Linux)
        if let text = readText("/proc/self/cgroup", limit: 4096) {
            least = min(least, cgroupLimit(text, root: "/sys/fs/cgroup") ?? .max)
        }
        #endif
        let resident = residentBytes()
        least = least > resident ? least - resident : 0
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
        return least
    }

    /// The least memory limit set on the control groups that `procSelfCgroup` (the text of
    /// `/proc/self/cgroup`) names, or on any group above them, under `root`: cgroup v2's
    /// `memory.max` (line `0::/PATH`), cgroup v1's `memory.limit_in_bytes` (a line whose
    /// controllers include `memory`). Only limits: what the group uses already counts the
    /// page cache, which the kernel gives back, so it is not taken off (a container's
    /// `memory.current` sits near its limit after a build). Nil when none is set.
    static func cgroupLimit(_ procSelfCgroup: String, root: String) -> UInt64? {
        var least: UInt64?
        func consider(_ directory: String, file: String) {
            // The group and each one above it, up to the mount's root (a limit there applies too).
            var path = directory
            while true {
                if let value = readNumber(root + path + "/" + file), value < (1 << 62) { least = min(least ?? .max, value) }
                guard let slash = path.lastIndex(of: "/"), !path.isEmpty else { break }
                path = String(path[..<slash])
            }
        }
        for line in procSelfCgroup.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            let group = parts[2] == "/" ? "" : String(parts[2])
            if parts[0] == "0" && parts[1].isEmpty {
                consider(group, file: "memory.max")
            } else if parts[1].split(separator: ",").contains("memory") {
                consider("/memory" + group, file: "memory.limit_in_bytes")
            }
        }
        return least
    }

    private static func physicalMemory() -> UInt64 {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, size > 0 else { return .max }
        var total = UInt64(pages) * UInt64(size)
        #if os(Linux)
        // Swap counts: a machine that can finish the load by swapping is not refused.
        if let info = readText("/proc/meminfo", limit: 8192),
           let line = info.split(separator: "\n").first(where: { $0.hasPrefix("SwapTotal:") }),
           let kb = line.split(separator: " ").dropFirst().first.flatMap({ UInt64($0) }) {
            total += kb * 1024
        }
        #endif
        return total
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

    /// The process's resident memory (`/proc/self/statm`'s second field, in pages); 0 where it
    /// cannot be read.
    static func residentBytes() -> UInt64 {
        #if os(Linux)
        guard let text = readText("/proc/self/statm") else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = UInt64(fields[1]) else { return 0 }
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

    /// A small file's text (its first `limit` bytes), or nil.
    private static func readText(_ path: String, limit: Int = 256) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: limit)
        var count = 0
        while count < limit {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress.map { $0 + count }, limit - count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            count += n
        }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0 ..< count], as: UTF8.self)
    }

    /// `bytes` for a message: `1.2 GB`, `980 MB`.
    static func megabytes(_ bytes: UInt64) -> String {
        let mb = Double(bytes) / 1_000_000
        if mb >= 1_000 { return "\(Double(Int((mb / 100).rounded())) / 10) GB" }
        return "\(Int(mb.rounded(.up))) MB"
    }
}
