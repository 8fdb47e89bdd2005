#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private func sysWrite(_ fd: Int32, _ buf: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, buf, n) }

/// Edits a text with the user's editor: `$VISUAL`, else `$EDITOR`, else `vi`, run as
/// `/bin/sh -c '$EDITOR "$1"' sh FILE` on a temporary `.md` file, in the foreground with
/// the terminal's standard input and output (while it runs, peernote ignores SIGINT and
/// SIGQUIT, as system(3) does, so Ctrl-C reaches only the editor). Its messages start with the
/// notebook's name, as every error does (`NOTEBOOK: the editor (vi) exited with status 1; …`).
struct EditorSession {
    /// The temporary file the editor works on.
    let file: String
    /// The notebook whose note is edited, as given: what its messages name first.
    let notebook: String
    let editor: String
    private let environment: [String: String]
    /// The bytes the file started with.
    private let original: [UInt8]

    /// The editor command the environment asks for.
    static func command(environment: [String: String]) -> String {
        for key in ["VISUAL", "EDITOR"] {
            if let value = environment[key], !value.trimmingWhitespace.isEmpty { return value }
        }
        return "vi"
    }

    /// Refuses (64) to fall back to `vi` without a terminal: with neither VISUAL nor EDITOR set
    /// and standard input or output not a terminal (a script, a pipe, cron), vi cannot be used,
    /// and would fill the output with screen codes before failing. `terminal`: whether both are
    /// terminals.
    static func requireUsableEditor(environment: [String: String], terminal: Bool, notebook: String) throws(CLIFailure) {
        guard !terminal, ["VISUAL", "EDITOR"].allSatisfy({ environment[$0]?.trimmingWhitespace.isEmpty ?? true }) else { return }
        throw CLIFailure(.usage, "\(notebook): no editor to run: neither VISUAL nor EDITOR is set, and vi needs a terminal, which standard input or output is not; set EDITOR, or give the text with --body or --body-file")
    }

    /// Writes `text` to a new temporary file (mode 0600), for a note of `notebook`.
    init(text: String, notebook: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(CLIFailure) {
        try Self.requireUsableEditor(environment: environment, terminal: isatty(0) == 1 && isatty(1) == 1, notebook: notebook)
        self.notebook = notebook
        self.environment = environment
        self.editor = Self.command(environment: environment)
        var dir = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        while dir.count > 1 && dir.hasSuffix("/") { dir.removeLast() }
        var template = Array("\(dir)/peernote-XXXXXX.md".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buf in buf.baseAddress.map { mkstemps($0, 3) } ?? -1 }
        guard fd >= 0 else { throw CLIFailure(.ioError, "\(notebook): cannot create a temporary file in \(dir) for the editor: \(String(cString: strerror(errno)))") }
        file = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let bytes = Array(text.utf8)
        original = bytes
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { buf in sysWrite(fd, buf.baseAddress.map { $0 + written }, bytes.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                let message = String(cString: strerror(errno))
                close(fd)
                unlink(file)
                throw CLIFailure(.ioError, "\(notebook): cannot write the note's text to \(file) for the editor: \(message)")
            }
            written += n
        }
        close(fd)
    }

    /// Runs the editor to its end and returns how long it ran. A failing editor is an error (exit
    /// 66), and so is one that exits 0 but leaves no file to read (`EDITOR=rm`, or an editor that
    /// saves by renaming and failed halfway): the text to record, the input, is missing.
    @discardableResult
    func run() throws(CLIFailure) -> Duration {
        let start = ContinuousClock.now
        let status = try spawnAndWait()
        guard status == 0 else {
            let how = status < 0 ? "was killed by signal \(-status)" : "exited with status \(status)"
            throw CLIFailure(.noInput, "\(notebook): the editor (\(editor)) \(how); nothing was recorded")
        }
        guard DocumentFile.exists(file) else {
            throw CLIFailure(.noInput, "\(notebook): the editor (\(editor)) removed \(file); nothing was recorded")
        }
        return ContinuousClock.now - start
    }

    /// An editor that returns in less than this without changing the file most likely opened a
    /// window and did not wait for it (`code`, `subl`, `gedit` without their wait flag).
    static let returnedAtOnce: Duration = .seconds(1)

    /// The hint for an editor that returned at once and changed nothing.
    var returnedAtOnceHint: String {
        "\(notebook): the editor (\(editor)) returned at once; if it opens a window, make it wait until the window is closed (for example EDITOR=\"code --wait\" or \"subl -w\")"
    }

    /// The file's text (UTF-8, else exit 65 naming the offset).
    func read() throws(CLIFailure) -> String {
        let bytes: [UInt8]
        // A regular file only: an editor that left a FIFO in its place would block the read.
        do { bytes = try FileStore.read(file) } catch {
            throw CLIFailure(.noInput, "\(notebook): cannot read the edited text: \(error.description)")
        }
        if let offset = UTF8Bytes.firstInvalid(bytes) {
            throw CLIFailure(.invalidInput, "\(notebook): the edited text is not valid UTF-8 at offset \(offset); nothing was recorded")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether the file is there and holds other bytes than it started with (or cannot be read:
    /// then it is not deleted either).
    var wasChanged: Bool {
        guard DocumentFile.exists(file) else { return false }
        guard let now = try? FileStore.read(file) else { return true }
        return now != original
    }

    /// Whether the file is there and a regular file (an editor may leave anything in its place).
    var isRegularFile: Bool { kind == S_IFREG }

    /// Removes what an editor left in the file's place that is not a regular file: a FIFO, a
    /// socket, a symbolic link, an empty folder (a folder with something in it stays).
    /// Returns what to add to the error: "" when nothing is left, else that it was left.
    func removeLeftover() -> String {
        switch kind {
        case S_IFDIR: rmdir(file)
        case nil, S_IFREG: break
        default: unlink(file)
        }
        return kind == nil ? "" : " (the editor left \(file), not a file; it is left as it is)"
    }

    private var kind: mode_t? {
        var st = stat()
        return lstat(file, &st) == 0 ? st.st_mode & S_IFMT : nil
    }

    /// Deletes the temporary file.
    func remove() {
        unlink(file)
    }

    /// The editor's exit status, or minus the signal that killed it.
    private func spawnAndWait() throws(CLIFailure) -> Int32 {
        let oldInt = signal(SIGINT, SIG_IGN)
        let oldQuit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, oldInt)
            signal(SIGQUIT, oldQuit)
        }
        do {
            switch try Subprocess.runAttached(["/bin/sh", "-c", "\(editor) \"$1\"", "sh", file], environment: environment) {
            case .code(let c): return c
            case .signal(let n): return -n
            }
        } catch {
            throw CLIFailure(.noInput, "\(notebook): cannot run the editor (\(editor)): \(error.reason)")
        }
    }
}
