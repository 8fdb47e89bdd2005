#if canImport(FoundationEssentials)
import FoundationEssentials
#else
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The time zone in which times are shown to people. JSON output always uses UTC.
public enum DisplayTimeZone: Sendable, Equatable {
    /// Coordinated Universal Time.
    case utc
    /// A fixed offset east of UTC, in seconds (`.offset(seconds: 9 * 3600)` for Tokyo).
    case offset(seconds: Int)
    /// The system's local time (`TZ`, else `/etc/localtime`), daylight saving included.
    case local

    /// Seconds east of UTC at `time` (whole seconds since 1970).
    func secondsFromUTC(at time: Int) -> Int {
        switch self {
        case .utc: return 0
        case .offset(let seconds): return seconds
        case .local:
            var t = time_t(time)
            var parts = tm()
            guard localtime_r(&t, &parts) != nil else { return 0 }
            return Int(parts.tm_gmtoff)
        }
    }
}

/// Times as text, in the fixed patterns the tools print (the `en_US_POSIX` patterns they used
/// with `DateFormatter`, which brought ICU into every process).
public enum TimeText {
    /// `2024-03-01 10:02`.
    public static func dateTime(_ date: Date, in zone: DisplayTimeZone) -> String {
        civil(date, zone).map { "\($0.day) \($0.hour):\($0.minute)" } ?? fallback(date)
    }

    /// `10:02`.
    public static func clock(_ date: Date, in zone: DisplayTimeZone) -> String {
        civil(date, zone).map { "\($0.hour):\($0.minute)" } ?? fallback(date)
    }

    /// `2024-03-01`.
    public static func day(_ date: Date, in zone: DisplayTimeZone) -> String {
        civil(date, zone).map(\.day) ?? fallback(date)
    }

    /// `2024-03-01 10:02:33 +0100` (`+005328` for an offset with seconds: local mean time
    /// before time zones, as DateFormatter printed it).
    public static func fullDateTime(_ date: Date, in zone: DisplayTimeZone) -> String {
        civil(date, zone).map { "\($0.day) \($0.hour):\($0.minute):\($0.second) \($0.offset)" } ?? fallback(date)
    }

    /// ISO 8601 in UTC: `2024-03-01T10:02:33Z`.
    public static func iso8601(_ date: Date) -> String {
        civil(date, .utc).map { "\($0.day)T\($0.hour):\($0.minute):\($0.second)Z" } ?? fallback(date)
    }

    /// A time too far from ours for the calendar functions: its seconds since 1970.
    private static func fallback(_ date: Date) -> String {
        let t = date.timeIntervalSince1970
        return t.isFinite && abs(t) < 9e18 ? "@\(Int64(t.rounded(.down)))" : "@\(t)"
    }

    private struct Civil {
        var day: String, hour: String, minute: String, second: String, offset: String
    }

    /// The date's fields in `zone`, zero-padded; nil when out of the calendar functions' range.
    private static func civil(_ date: Date, _ zone: DisplayTimeZone) -> Civil? {
        let interval = date.timeIntervalSince1970.rounded(.down)
        // About ±31 million years: far beyond any real note, within every time_t and tm_year.
        guard interval.isFinite, abs(interval) < 1e15 else { return nil }
        let time = Int(interval)
        let offset = zone.secondsFromUTC(at: time)
        var t = time_t(time + offset)
        var parts = tm()
        guard gmtime_r(&t, &parts) != nil else { return nil }
        let year = Int(parts.tm_year) + 1900
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60, seconds = abs(offset) % 60
        return Civil(day: "\(pad(year, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))",
                     hour: pad(Int(parts.tm_hour), 2), minute: pad(Int(parts.tm_min), 2), second: pad(Int(parts.tm_sec), 2),
                     offset: sign + pad(minutes / 60, 2) + pad(minutes % 60, 2) + (seconds == 0 ? "" : pad(seconds, 2)))
    }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let digits = String(abs(n))
        return (n < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
