#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A short option written with its value glued on, as POSIX tools take it: `-mFIX` for
/// `-m FIX`, `-oOUT.peernote` for `-o OUT.peernote`. ArgumentParser reads `-mhi` as the
/// flags `-m -h -i` and shows help (exit 0, nothing recorded), and `-oout.peernote` as unknown
/// flags; the tools split such an argument before parsing, for the subcommands that have the
/// option.
public enum GluedShortOption {
    /// `arguments` with every argument before `--` that starts with one of `options` (short
    /// options that take a value, such as "-m") and goes on split into the option and the rest,
    /// and the arguments that were split. Left whole: the values of `valueOptions` (options
    /// whose value is taken as it is: `--title -mhi` keeps the title "-mhi") and of `options`
    /// given apart, an argument naming a file that exists, and one `keepWhole` says to keep
    /// (given the argument and the option it starts with: `-mbook.peernote` reads as a file
    /// name, which `DashFileName` then refuses with how to write it).
    public static func split(_ arguments: [String], options: Set<String>, valueOptions: Set<String>,
                             keepWhole: (String, String) -> Bool = { _, _ in false }) -> (arguments: [String], split: [String]) {
        guard !options.isEmpty else { return (arguments, []) }
        var out: [String] = [], split: [String] = []
        out.reserveCapacity(arguments.count)
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            if arg == "--" {
                out.append(contentsOf: arguments[i...])
                break
            }
            if valueOptions.contains(arg) || options.contains(arg) {
                out.append(arg)
                if i + 1 < arguments.count { out.append(arguments[i + 1]) }
                i += 2
                continue
            }
            if !arg.hasPrefix("--"), arg.unicodeScalars.count > 2,
               let option = options.first(where: { arg.unicodeScalars.starts(with: $0.unicodeScalars) }),
               !keepWhole(arg, option), !exists(arg) {
                out += [option, String(arg.unicodeScalars.dropFirst(option.unicodeScalars.count))]
                split.append(arg)
            } else {
                out.append(arg)
            }
            i += 1
        }
        return (out, split)
    }

    /// The end of a usage error's message when `split` (words read as an option and its value)
    /// may be why: how a note or other value that starts with '-' is written.
    public static func hint(_ split: [String]) -> String {
        guard let first = split.first else { return "" }
        let option = String(String.UnicodeScalarView(first.unicodeScalars.prefix(2)))
        let rest = String(String.UnicodeScalarView(first.unicodeScalars.dropFirst(2)))
        return "; \(DisplayText.oneLine(first)) was read as \(option) \(DisplayText.oneLine(ShellQuote.word(rest))) "
            + "(a note or other value that starts with '-' goes last, after the options and --: -- \(DisplayText.oneLine(ShellQuote.word(first))))"
    }

    /// The refusal (without the tool's prefix) for the first word before `--` that starts with
    /// one `-`, is longer than a flag and holds an `h`, such as `-mhi` where a command has no
    /// `-m`, or a note `-hello`: ArgumentParser reads it as single-letter flags, takes `-h`,
    /// shows the help and exits 0 with nothing done. The values of `valueOptions` are skipped.
    /// Nil when there is none.
    public static func helpTrap(_ arguments: [String], valueOptions: Set<String>) -> String? {
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            if arg == "--" { return nil }
            if valueOptions.contains(arg) {
                i += 2
                continue
            }
            if arg.hasPrefix("-"), !arg.hasPrefix("--"), arg.unicodeScalars.count > 2, arg.unicodeScalars.dropFirst().contains("h") {
                return "unknown option '\(DisplayText.oneLine(arg))' (read as single-letter options, it would only show the help); "
                    + "a note or other value that starts with '-' goes last, after the options and --: -- \(DisplayText.oneLine(ShellQuote.word(arg)))"
            }
            i += 1
        }
        return nil
    }

    private static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }
}
