#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's environment, read one variable at a time (`getenv`). Foundation's
/// `ProcessInfo.environment` makes a dictionary of every variable at each call: at the start
/// of every command, for the one or two variables it reads, that was a cost of its own.
public enum Environment {
    /// The value of the variable `name`, if it is set (bytes that are not UTF-8 are read as
    /// replacement characters, as `ProcessInfo` reads them).
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The variables among `names` that are set, with their values.
    public static func values(_ names: [String]) -> [String: String] {
        var out: [String: String] = [:]
        for name in names { if let v = value(name) { out[name] = v } }
        return out
    }
}
