#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file name that starts with `-`, given as it is: ArgumentParser reads `-sh.peernote` as the
/// short flags `-s -h …` and shows help (exit 0, nothing done: a damaged `-sh.peernote` would
/// "validate"), and `-foo.peernote` as unknown flags. The tools refuse it first, saying how to
/// write it.
public enum DashFileName {
    /// The refusal (without the tool's prefix) for the first argument before `--` that starts
    /// with one `-`, is longer than a flag, and reads as a file name: it names a file that exists,
    /// or ends in `.peernote`. (Not any other ending: `-Draft.md` may be a note's title.)
    /// Nil when there is none.
    public static func refusal(_ arguments: [String]) -> String? {
        for argument in arguments {
            if argument == "--" { return nil }
            guard argument.hasPrefix("-"), !argument.hasPrefix("--"), argument.unicodeScalars.count > 2 else { continue }
            let lower = argument.lowercased()
            var st = stat()
            guard lower.hasSuffix(".peernote") || stat(argument, &st) == 0 else { continue }
            return "\(DisplayText.oneLine(argument)): a file name that starts with '-' reads as options; "
                + "write it as \(DisplayText.oneLine(ShellQuote.path(argument))) (a note or other value: put -- before it)"
        }
        return nil
    }
}
