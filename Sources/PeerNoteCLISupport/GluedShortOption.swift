/// A short option written with its value glued on, as POSIX tools take it: `-mFIX` for
/// `-m FIX`, `-oOUT.peernote` for `-o OUT.peernote`. ArgumentParser reads `-mhi` as the
/// flags `-m -h -i` and shows help (exit 0, nothing recorded), and `-oout.peernote` as unknown
/// flags; the tools split such an argument before parsing.
public enum GluedShortOption {
    /// `arguments` with every argument before `--` that is one of `options` (short options that
    /// take a value, such as "-m") followed by more characters split into the option and the
    /// rest. The arguments after `valueOptions` (options whose value is taken as it is, long or
    /// short) are left whole: `--title -mhi` keeps the title "-mhi".
    public static func split(_ arguments: [String], options: Set<String>, valueOptions: Set<String>) -> [String] {
        var out: [String] = []
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
               let option = options.first(where: { arg.unicodeScalars.starts(with: $0.unicodeScalars) }) {
                out += [option, String(arg.unicodeScalars.dropFirst(option.unicodeScalars.count))]
            } else {
                out.append(arg)
            }
            i += 1
        }
        return out
    }
}
