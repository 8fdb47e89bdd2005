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
        civil(date, zone).map { c in c.text { $0.day(c); $0.byte(" "); $0.pad(c.hour, 2); $0.byte(":"); $0.pad(c.minute, 2) } } ?? fallback(date)
    }

    /// `10:02`.
    public static func clock(_ date: Date, in zone: DisplayTimeZone) -> String {
        civil(date, zone).map { c in c.text { $0.pad(c.hour, 2); $0.byte(":"); $0.pad(c.minute, 2) } } ?? fallback(date)
    }

    /// `2024-03-01`.
    public static func day(_ date: Date, in zone: DisplayTimeZone) -> String {
        civil(date, zone).map { c in c.text { $0.day(c) } } ?? fallback(date)
    }

    /// `2024-03-01 10:02:33 +0100` (`+005328` for an offset with seconds: local mean time
    /// before time zones, as DateFormatter printed it).
    public static func fullDateTime(_ date: Date, in zone: DisplayTimeZone) -> String {
        civil(date, zone).map { c in
            c.text {
                $0.day(c); $0.byte(" "); $0.pad(c.hour, 2); $0.byte(":"); $0.pad(c.minute, 2); $0.byte(":"); $0.pad(c.second, 2)
                $0.byte(" "); $0.offset(c.offset)
            }
        } ?? fallback(date)
    }

    /// ISO 8601 in UTC: `2024-03-01T10:02:33Z`.
    public static func iso8601(_ date: Date) -> String {
        civil(date, .utc).map { c in
            c.text { $0.day(c); $0.byte("T"); $0.pad(c.hour, 2); $0.byte(":"); $0.pad(c.minute, 2); $0.byte(":"); $0.pad(c.second, 2); $0.byte("Z") }
        } ?? fallback(date)
    }

    /// The time `iso8601` writes, read back in whole seconds (a fraction is dropped): an
    /// RFC 3339 date and time, `2024-03-01T10:02:33Z`, with `Z` or an offset (`+01:00`), an
    /// optional fraction of a second (`:33.25`), and a year of 4 to 9 digits with an optional
    /// sign; or `@SECONDS`, which `iso8601` writes for a time too far from ours for the
    /// calendar. `T` and `Z` may be lowercase. Nil for anything else, and for a day, hour,
    /// minute or second that does not exist (`2023-02-29`, `24:00:00`; second 60, a leap
    /// second, reads as the next minute's first).
    public static func parseISO8601(_ text: String) -> Date? {
        let b = Array(text.utf8)
        var i = 0
        func digits(min: Int, max: Int) -> Int64? {
            let start = i
            var value: Int64 = 0
            while i < b.count, i - start < max, (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(b[i]) {
                value = value * 10 + Int64(b[i] - UInt8(ascii: "0"))
                i += 1
            }
            return i - start >= min ? value : nil
        }
        func take(_ c: Character) -> Bool {
            guard i < b.count, let a = c.asciiValue, b[i] == a || (c.isLetter && b[i] == a | 0x20) else { return false }
            i += 1
            return true
        }
        if take("@") {
            let negative = take("-")
            guard let n = digits(min: 1, max: 18), i == b.count else { return nil }
            return Date(timeIntervalSince1970: TimeInterval(negative ? -n : n))
        }
        let negative = take("-")
        if !negative { _ = take("+") }
        guard let y = digits(min: 4, max: 9), take("-"), let month = digits(min: 2, max: 2), take("-"),
              let day = digits(min: 2, max: 2), take("T"), let hour = digits(min: 2, max: 2), take(":"),
              let minute = digits(min: 2, max: 2), take(":"), let second = digits(min: 2, max: 2) else { return nil }
        if take(".") { guard digits(min: 1, max: Int.max) != nil else { return nil } }
        var offset: Int64 = 0
        if !take("Z") {
            let sign: Int64 = take("+") ? 1 : take("-") ? -1 : 0
            guard sign != 0, let oh = digits(min: 2, max: 2), take(":"), let om = digits(min: 2, max: 2),
                  oh <= 23, om <= 59 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        }
        let year = negative ? -y : y
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard i == b.count, (1 ... 12).contains(month), day >= 1, day <= monthDays[Int(month) - 1],
              hour <= 23, minute <= 59, second <= 60 else { return nil }
        // Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
        let yy = month <= 2 ? year - 1 : year
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yearOfEra = yy - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second - offset))
    }

    /// A time too far from ours for the calendar functions: its seconds since 1970.
    private static func fallback(_ date: Date) -> String {
        let t = date.timeIntervalSince1970
        return t.isFinite && abs(t) < 9e18 ? "@\(Int64(t.rounded(.down)))" : "@\(t)"
    }

    /// A time's calendar fields in a zone, written as text without a string a field: a list of
    /// 20,000 notes writes 20,000 times.
    private struct Civil {
        var year: Int, month: Int, mday: Int, hour: Int, minute: Int, second: Int
        /// Seconds east of UTC.
        var offset: Int

        /// The text `write` makes (at most 64 bytes: a year has at most nine digits here).
        func text(_ write: (inout Writer) -> Void) -> String {
            String(unsafeUninitializedCapacity: 64) { buffer in
                var w = Writer(buffer: buffer)
                write(&w)
                return w.count
            }
        }

        struct Writer {
            let buffer: UnsafeMutableBufferPointer<UInt8>
            var count = 0

            mutating func byte(_ c: Unicode.Scalar) {
                buffer[count] = UInt8(ascii: c)
                count += 1
            }

            /// `n` zero-padded to `width` digits, after a minus for a negative `n`.
            mutating func pad(_ n: Int, _ width: Int) {
                if n < 0 { byte("-") }
                var m = n.magnitude
                var digits = 1
                var rest = m / 10
                while rest > 0 { digits += 1; rest /= 10 }
                for _ in 0 ..< max(0, width - digits) { byte("0") }
                count += digits
                var at = count - 1
                for _ in 0 ..< digits {
                    buffer[at] = UInt8(ascii: "0") + UInt8(m % 10)
                    m /= 10
                    at -= 1
                }
            }

            /// `2024-03-01`.
            mutating func day(_ c: Civil) {
                pad(c.year, 4); byte("-"); pad(c.month, 2); byte("-"); pad(c.mday, 2)
            }

            /// `+0100`, `-0530`, `+005328` (with seconds: local mean time before time zones).
            mutating func offset(_ offset: Int) {
                byte(offset < 0 ? "-" : "+")
                let minutes = abs(offset) / 60, seconds = abs(offset) % 60
                pad(minutes / 60, 2); pad(minutes % 60, 2)
                if seconds != 0 { pad(seconds, 2) }
            }
        }
    }

    /// The date's fields in `zone`; nil when out of the calendar functions' range.
    private static func civil(_ date: Date, _ zone: DisplayTimeZone) -> Civil? {
        let interval = date.timeIntervalSince1970.rounded(.down)
        // About ±31 million years: far beyond any real note, within every time_t and tm_year.
        guard interval.isFinite, abs(interval) < 1e15 else { return nil }
        let time = Int(interval)
        let offset = zone.secondsFromUTC(at: time)
        var t = time_t(time + offset)
        var parts = tm()
        guard gmtime_r(&t, &parts) != nil else { return nil }
        return Civil(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, mday: Int(parts.tm_mday),
                     hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec), offset: offset)
    }
}
