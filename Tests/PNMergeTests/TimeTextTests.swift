import Foundation
import PeerNoteCLISupport
import Testing

/// The tools format times without Foundation's DateFormatter (which brings ICU into every
/// process); these check the result against DateFormatter, which the tests may still use.
@Suite("Time text")
struct TimeTextTests {
    /// Times across the calendar: the epoch, before it, leap days, year ends, far years (all
    /// after 1582: before it, DateFormatter counts in the Julian calendar, see `prolepticGregorian`).
    static let times: [TimeInterval] = [
        0, -1, 59.999, 951_782_400, 1_709_287_353, 1_709_287_353.75, 4_102_444_799, -2_208_988_800, 253_402_300_799,
        -12_219_206_400, 1_234_567_890, 1_700_000_000, 1_719_792_000, 1_735_689_599, -3_000_000_000,
    ]

    static func formatted(_ date: Date, _ pattern: String, _ zone: TimeZone) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = zone
        f.dateFormat = pattern
        return f.string(from: date)
    }

    @Test("UTC and fixed offsets give DateFormatter's en_US_POSIX text for every pattern the tools print")
    func fixedZones() throws {
        let zones: [(DisplayTimeZone, Int)] = [(.utc, 0), (.offset(seconds: 9 * 3600), 9 * 3600),
                                                (.offset(seconds: -(3 * 3600 + 30 * 60)), -(3 * 3600 + 30 * 60)),
                                                (.offset(seconds: 5 * 3600 + 45 * 60), 5 * 3600 + 45 * 60)]
        for (zone, seconds) in zones {
            let tz = try #require(TimeZone(secondsFromGMT: seconds))
            for t in Self.times {
                let d = Date(timeIntervalSince1970: t)
                #expect(TimeText.dateTime(d, in: zone) == Self.formatted(d, "yyyy-MM-dd HH:mm", tz), "\(t) \(zone)")
                #expect(TimeText.clock(d, in: zone) == Self.formatted(d, "HH:mm", tz), "\(t) \(zone)")
                #expect(TimeText.day(d, in: zone) == Self.formatted(d, "yyyy-MM-dd", tz), "\(t) \(zone)")
                #expect(TimeText.fullDateTime(d, in: zone) == Self.formatted(d, "yyyy-MM-dd HH:mm:ss Z", tz), "\(t) \(zone)")
            }
        }
    }

    @Test("Local time follows the system's zone, daylight saving included, as DateFormatter's current zone does")
    func localZone() {
        for t in Self.times where t >= -3_000_000_000 && t < 4_102_444_800 {
            let d = Date(timeIntervalSince1970: t)
            #expect(TimeText.fullDateTime(d, in: .local) == Self.formatted(d, "yyyy-MM-dd HH:mm:ss Z", .current), "\(t)")
        }
    }

    @Test("ISO 8601 in UTC matches ISO8601DateFormatter; a time beyond the calendar prints its seconds, not a crash")
    func iso() {
        let f = ISO8601DateFormatter()
        f.timeZone = TimeZone(identifier: "UTC")
        for t in Self.times {
            let d = Date(timeIntervalSince1970: t)
            #expect(TimeText.iso8601(d) == f.string(from: d), "\(t)")
        }
        #expect(TimeText.iso8601(Date(timeIntervalSince1970: 1e17)) == "@100000000000000000")
        #expect(TimeText.dateTime(Date(timeIntervalSince1970: -1e16), in: .utc) == "@-10000000000000000")
    }

    @Test("Before 1582 the calendar is the proleptic Gregorian one ISO 8601 asks for (DateFormatter switches to the Julian)")
    func prolepticGregorian() {
        // An offset with seconds (local mean time, e.g. Berlin's before 1893) prints them, as
        // DateFormatter did for named zones (its fixed-offset zones round to minutes).
        #expect(TimeText.fullDateTime(Date(timeIntervalSince1970: 0), in: .offset(seconds: 53 * 60 + 28)) == "1970-01-01 00:53:28 +005328")
        #expect(TimeText.iso8601(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00Z")
        #expect(TimeText.day(Date(timeIntervalSince1970: -12_219_292_801), in: .utc) == "1582-10-14")
    }

    @Test("parseISO8601 reads back what iso8601 writes, in whole seconds, and what ISO8601DateFormatter reads")
    func parseRoundTrip() {
        let f = ISO8601DateFormatter()
        f.timeZone = TimeZone(identifier: "UTC")
        let years: [TimeInterval] = [-62_135_596_800, -62_167_219_200, -62_198_755_200, -80_000_000_000, 1e14, -1e14, 999_999_999_999_999]
        for t in Self.times + years {
            let text = TimeText.iso8601(Date(timeIntervalSince1970: t))
            #expect(TimeText.parseISO8601(text) == Date(timeIntervalSince1970: t.rounded(.down)), "\(t) \(text)")
            if t > -62_135_596_800 && t < 253_402_300_800, let d = f.date(from: text) {
                #expect(TimeText.parseISO8601(text) == d, "\(text)")
            }
        }
        // The year 0 and before: a sign and at least four digits, as iso8601 writes them.
        #expect(TimeText.iso8601(Date(timeIntervalSince1970: -62_198_755_200)) == "-0001-01-01T00:00:00Z")
        #expect(TimeText.parseISO8601("@100000000000000000") == Date(timeIntervalSince1970: 1e17))
        #expect(TimeText.parseISO8601("@-4503599627370496") == Date(timeIntervalSince1970: -4_503_599_627_370_496))
    }

    @Test("parseISO8601 takes offsets, fractions and lowercase letters, and refuses days and times that do not exist")
    func parseForms() {
        let may = Date(timeIntervalSince1970: 1_714_555_800)  // 2024-05-01T09:30:00Z
        for text in ["2024-05-01T09:30:00Z", "2024-05-01t09:30:00z", "2024-05-01T11:30:00+02:00", "2024-05-01T05:00:00-04:30",
                     "2024-05-01T09:30:00.999Z", "2024-05-01T09:29:60Z", "+2024-05-01T09:30:00Z"] {
            #expect(TimeText.parseISO8601(text) == may, "\(text)")
        }
        #expect(TimeText.parseISO8601("2024-02-29T00:00:00Z") == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(TimeText.parseISO8601("2000-02-29T00:00:00Z") == Date(timeIntervalSince1970: 951_782_400))
        for text in ["", "2024-05-01", "2024-05-01 09:30:00Z", "2024-05-01T09:30:00", "2024-05-01T09:30Z", "24-05-01T09:30:00Z",
                     "2024-5-01T09:30:00Z", "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2023-02-29T00:00:00Z",
                     "1900-02-29T00:00:00Z", "2024-04-31T00:00:00Z", "2024-05-00T00:00:00Z", "2024-05-01T24:00:00Z",
                     "2024-05-01T09:60:00Z", "2024-05-01T09:30:61Z", "2024-05-01T09:30:00.Z", "2024-05-01T09:30:00+2:00",
                     "2024-05-01T09:30:00+24:00", "2024-05-01T09:30:00+02:60", "2024-05-01T09:30:00+0200", "2024-05-01T09:30:00Z ",
                     " 2024-05-01T09:30:00Z", "2024-05-01T09:30:00ZZ", "@", "@-", "@12a", "@1234567890123456789",
                     "2024\u{2010}05-01T09:30:00Z", "２０２４-05-01T09:30:00Z", "1234567890-01-01T00:00:00Z"] {
            #expect(TimeText.parseISO8601(text) == nil, "\(text)")
        }
    }
}
