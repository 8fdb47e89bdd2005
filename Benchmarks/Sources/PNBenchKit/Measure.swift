#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock timing with `ContinuousClock`, reported in milliseconds.
enum Timing {
    static let clock = ContinuousClock()

    static func milliseconds(_ d: Duration) -> Double {
        let c = d.components
        return Double(c.seconds) * 1000 + Double(c.attoseconds) / 1e15
    }

    /// The median of `values` (the mean of the middle two for an even count).
    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}

/// Resident memory of this process, from /proc/self/status (Linux) or getrusage.
enum Memory {
    /// Peak resident set size in MiB: VmHWM on Linux (which `resetPeak` can lower), else ru_maxrss.
    static func peakMB() -> Double {
        if let kb = statusField("VmHWM") { return Double(kb) / 1024 }
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024  // KiB on Linux
        #else
        getrusage(RUSAGE_SELF, &usage)
        return Double(usage.ru_maxrss) / (1024 * 1024)  // bytes on macOS
        #endif
    }

    /// Current resident set size in MiB (nil where /proc is missing).
    static func currentMB() -> Double? { statusField("VmRSS").map { Double($0) / 1024 } }

    /// Returns freed heap memory to the system (glibc `malloc_trim`) and resets the peak
    /// (writing 5 to /proc/self/clear_refs, Linux 4.0+), so that the next `peakMB` covers
    /// only what follows, not the trace parse. False when the peak could not be reset.
    @discardableResult
    static func resetPeak() -> Bool {
        #if os(Linux)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: MallocTrim.self)(0) }
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
        #else
        return false
        #endif
    }

    /// A "kB" line of /proc/self/status.
    private static func statusField(_ name: String) -> Int? {
        guard let data = FileManager.default.contents(atPath: "/proc/self/status"),
              let text = String(data: data, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
            return Int(digits)
        }
        return nil
    }
}

/// A JSON value whose objects keep their key order, so benchmark output reads the same every time.
enum JSON {
    case null
    case bool(Bool)
    case int(Int)
    /// A number printed with three decimals (milliseconds, MiB).
    case number(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    func rendered(indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent + 1), end = String(repeating: "  ", count: indent)
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .number(let d): return d.isFinite ? fixed(d, 3) : "null"
        case .string(let s): return Self.quoted(s)
        case .array(let items):
            if items.isEmpty { return "[]" }
            return "[\n" + items.map { pad + $0.rendered(indent: indent + 1) }.joined(separator: ",\n") + "\n\(end)]"
        case .object(let fields):
            if fields.isEmpty { return "{}" }
            return "{\n" + fields.map { pad + Self.quoted($0.0) + ": " + $0.1.rendered(indent: indent + 1) }
                .joined(separator: ",\n") + "\n\(end)}"
        }
    }

    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where u.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count) + String(u.value, radix: 16)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    subscript(key: String) -> JSON? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == key }?.1
    }

    var doubleValue: Double? {
        switch self {
        case .number(let d): d
        case .int(let i): Double(i)
        default: nil
        }
    }
}

/// "release" or "debug": which build produced the figures.
let buildConfiguration: String = {
    #if DEBUG
    return "debug"
    #else
    return "release"
    #endif
}()

/// `value` with `places` decimals, rounded half away from zero (what `%.3f` printed; the
/// benchmark links FoundationEssentials only, which has no `String(format:)`).
func fixed(_ value: Double, _ places: Int) -> String {
    guard value.isFinite else { return String(value) }
    var scale = 1
    for _ in 0 ..< places { scale *= 10 }
    let scaled = (abs(value) * Double(scale)).rounded()
    guard scaled < 9e15 else { return String(value) }
    let n = Int(scaled)
    let fraction = String(n % scale)
    let sign = value < 0 && n != 0 ? "-" : ""
    return sign + String(n / scale) + (places > 0 ? "." + String(repeating: "0", count: places - fraction.count) + fraction : "")
}
