#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes that should be UTF-8 text (an argument, a file name) and may not be.
///
/// Swift's `CommandLine.arguments`, and so ArgumentParser, turns bytes that are not UTF-8 into
/// U+FFFD: a title would be stored as "�", and a file name would name another file (which then is
/// "missing"). The tools check the raw bytes instead and refuse what is not UTF-8.
public enum UTF8Bytes {
    /// Whether `bytes` is well-formed UTF-8 (no stray continuation byte, overlong form,
    /// surrogate, value above U+10FFFF or sequence cut short).
    public static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        firstInvalid(bytes) == nil
    }

    /// The offset of the first byte that is not part of well-formed UTF-8, or nil when all are.
    public static func firstInvalid(_ bytes: some Collection<UInt8>) -> Int? {
        // The usual case, valid text, is answered by the standard library's validation of
        // contiguous bytes (this function is not specialized for its callers' types, and a
        // parser's step a scalar through it took 70 ms for 5 MB); the walk below says where.
        if bytes.withContiguousStorageIfAvailable({ String(validating: $0, as: UTF8.self) != nil }) == true { return nil }
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// `bytes` for a one-line message: its UTF-8 parts as `DisplayText.oneLine` shows text
    /// (control characters made visible), each byte that is not part of valid UTF-8 as `\xFF`
    /// (two uppercase hex digits).
    public static func shown(_ bytes: some Collection<UInt8>) -> String {
        let all = Array(bytes)
        var iterator = all.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var out = ""
        var valid = String.UnicodeScalarView()
        var offset = 0
        func flush() {
            out += DisplayText.oneLine(String(valid))
            valid = String.UnicodeScalarView()
        }
        loop: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                valid.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                flush()
                for byte in all[offset ..< offset + length] { out += hexEscape(byte) }
                offset += length
            case .emptyInput:
                break loop
            }
        }
        flush()
        return out
    }

    /// `\xFF`.
    static func hexEscape(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "\\x" + (digits.count < 2 ? "0" : "") + digits
    }
}

/// The command line as the bytes the process was given, checked before ArgumentParser sees it.
public enum RawArguments {
    /// An argument that is not valid UTF-8.
    public struct Invalid: Equatable, Sendable {
        /// Its position after the program name: 1 for the first argument (as the shell's `$1`).
        public var position: Int
        public var bytes: [UInt8]
        /// The argument before it (say `--title` for a title's value), when there is one.
        public var previous: [UInt8]?

        public init(position: Int, bytes: [UInt8], previous: [UInt8]? = nil) {
            self.position = position
            self.bytes = bytes
            self.previous = previous
        }
    }

    /// This process's arguments as bytes (`argv`, the program name first).
    public static func ofProcess() -> [[UInt8]] {
        let argv = CommandLine.unsafeArgv
        return (0 ..< Int(CommandLine.argc)).map { i in
            guard let arg = argv[i] else { return [] }
            return UnsafeBufferPointer(start: arg, count: strlen(arg)).map { UInt8(bitPattern: $0) }
        }
    }

    /// The first argument after the program name (`argv[0]`, which is not an argument) that is
    /// not valid UTF-8; nil when all are.
    public static func firstInvalid(_ argv: [[UInt8]]) -> Invalid? {
        for position in argv.indices.dropFirst() where !UTF8Bytes.isValid(argv[position]) {
            return Invalid(position: position, bytes: argv[position], previous: position > 1 ? argv[position - 1] : nil)
        }
        return nil
    }

    /// Whether `bytes`, taken as a path, names something that exists (`lstat` on the bytes
    /// themselves, so a file whose name is not UTF-8 is found).
    public static func namesExistingFile(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty, !bytes.contains(0) else { return false }
        var st = stat()
        let path = bytes.map { CChar(bitPattern: $0) } + [0]
        return lstat(path, &st) == 0
    }

    /// The one line (without `TOOL: ` and line break) that refuses `invalid`: its position, the
    /// argument with the bytes that are not UTF-8 shown as `\xFF`, and what to do, which is to
    /// rename the file when the argument names one (`namesFile`).
    public static func message(_ invalid: Invalid, namesFile: Bool) -> String {
        var which = "argument \(invalid.position)"
        if let previous = invalid.previous, previous.first == UInt8(ascii: "-"), previous.count > 1, UTF8Bytes.isValid(previous) {
            which += " (after \(UTF8Bytes.shown(previous)))"
        }
        let what = namesFile
            ? "it names a file: rename the file to a UTF-8 name (for example with mv) and give that name"
            : "give it as UTF-8 text (for a file whose name is not UTF-8, rename the file first)"
        return "\(which) is not valid UTF-8: \(UTF8Bytes.shown(invalid.bytes)) (bytes that are not UTF-8 shown as \\xNN); \(what)"
    }

    /// `TOOL: MESSAGE` for the first argument in `argv` that is not valid UTF-8, nil when all are.
    public static func refusal(_ argv: [[UInt8]], tool: String,
                               namesFile: ([UInt8]) -> Bool = namesExistingFile) -> String? {
        firstInvalid(argv).map { "\(tool): " + message($0, namesFile: namesFile($0.bytes)) }
    }

    /// For a tool's `main.swift`, before the arguments are parsed: when an argument of this
    /// process is not valid UTF-8, writes one line on standard error and exits with the usage
    /// status (64). Returns when every argument is UTF-8.
    public static func requireUTF8(tool: String) {
        guard let line = refusal(ofProcess(), tool: tool) else { return }
        Terminal.error(line)
        exit(ExitStatus.usage.rawValue)
    }
}
