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
import PeerNote

/// Output conventions shared by the command-line tools.
public enum Terminal {
    /// Colour only on a terminal, never when `NO_COLOR` is set (https://no-color.org) or `TERM=dumb`.
    public static func colorEnabled(fileDescriptor fd: Int32 = 1, environment: [String: String] = Environment.values(["NO_COLOR", "TERM"])) -> Bool {
        if let v = environment["NO_COLOR"], !v.isEmpty { return false }
        if environment["TERM"] == "dumb" { return false }
        return isatty(fd) == 1
    }

    /// Writes one line to standard error.
    public static func error(_ line: String) {
        writeAll(Array((line + "\n").utf8), to: 2)
    }

    public enum Style: String { case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", blue = "34", magenta = "35", cyan = "36" }

    public static func paint(_ text: String, _ style: Style, enabled: Bool) -> String {
        enabled ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }
}
