#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs programs: one whose output is collected (git; both streams are read together, so a
/// chatty child cannot block on a full pipe), or one attached to the terminal (an editor).
/// Built on posix_spawn: the tools need no Foundation `Process` (nor the rest of Foundation).
public enum Subprocess {
    /// How a program ended and what it printed.
    public struct Result: Sendable {
        /// The exit status, or 128 + the signal that killed it (as shells report it).
        public var status: Int32
        public var out: [UInt8]
        public var err: [UInt8]
    }

    /// Why a program could not be run at all.
    public struct LaunchError: Error, CustomStringConvertible {
        /// What failed and why: `cannot run git: Permission denied`.
        public var description: String
        /// Why, alone: `Permission denied`.
        public var reason: String
        /// Whether the program was not found on `PATH`.
        public var notFound = false

        init(description: String, reason: String? = nil, notFound: Bool = false) {
            self.description = description
            self.reason = reason ?? description
            self.notFound = notFound
        }
    }

    /// How a child ended: its exit code, or the signal that killed it.
    public enum Exit: Sendable, Equatable {
        case code(Int32)
        case signal(Int32)
    }

    #if canImport(Darwin)
    typealias FileActions = posix_spawn_file_actions_t?
    #else
    typealias FileActions = posix_spawn_file_actions_t
    #endif

    /// Starts `arguments` (`arguments[0]` looked up on `PATH` unless it holds a slash) with
    /// `environment` (nil: this process's), every signal at its default disposition and none
    /// blocked (as Foundation's Process did, whatever this process ignores or blocks), after
    /// `actions` are applied to its descriptors. Returns the child's pid.
    static func spawn(_ arguments: [String], environment: [String: String]?, actions: inout FileActions) throws(LaunchError) -> pid_t {
        guard let program = arguments.first else { throw LaunchError(description: "no program named") }
        #if canImport(Darwin)
        var attributes: posix_spawnattr_t?
        #else
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = arguments.map { strdup($0) }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var argvC = argv + [nil]
        var pid: pid_t = 0
        let spawned: Int32
        if var envC = envp.map({ $0 + [nil] }) {
            spawned = posix_spawnp(&pid, program, &actions, &attributes, &argvC, &envC)
        } else {
            #if canImport(Darwin)
            spawned = posix_spawnp(&pid, program, &actions, &attributes, &argvC, _NSGetEnviron().pointee)
            #else
            spawned = posix_spawnp(&pid, program, &actions, &attributes, &argvC, environ)
            #endif
        }
        guard spawned == 0 else {
            let reason = String(cString: strerror(spawned))
            throw LaunchError(description: "cannot run \(program): \(reason)", reason: reason, notFound: spawned == ENOENT)
        }
        return pid
    }

    /// Waits for the child `pid` to end.
    static func wait(_ pid: pid_t, program: String) throws(LaunchError) -> Exit {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno == EINTR { continue }
            let reason = POSIXText.lastError()
            throw LaunchError(description: "cannot wait for \(program): \(reason)", reason: reason)
        }
        let signalNumber = status & 0x7F
        return signalNumber == 0 ? .code((status >> 8) & 0xFF) : .signal(signalNumber)
    }

    /// Runs `arguments` (as `spawn` starts them) with the terminal's standard input and output,
    /// and waits for it to end (an editor, in the foreground).
    public static func runAttached(_ arguments: [String], environment: [String: String]) throws(LaunchError) -> Exit {
        var actions = FileActions()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let pid = try spawn(arguments, environment: environment, actions: &actions)
        return try wait(pid, program: arguments.first ?? "")
    }

    /// Runs `arguments[0]` (looked up on `PATH`) with `arguments`, standard input from
    /// `/dev/null`, and waits for it to end, collecting what it prints.
    public static func run(_ arguments: [String]) throws(LaunchError) -> Result {
        let program = arguments.first ?? ""
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        guard pipe(&outPipe) == 0 else { throw LaunchError(description: "cannot make a pipe: \(POSIXText.lastError())") }
        guard pipe(&errPipe) == 0 else {
            let why = POSIXText.lastError()
            close(outPipe[0]); close(outPipe[1])
            throw LaunchError(description: "cannot make a pipe: \(why)")
        }
        var actions = FileActions()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        for fd in outPipe + errPipe { posix_spawn_file_actions_addclose(&actions, fd) }
        let pid: pid_t
        do {
            pid = try spawn(arguments, environment: nil, actions: &actions)
        } catch {
            close(outPipe[0]); close(outPipe[1]); close(errPipe[0]); close(errPipe[1])
            throw error
        }
        close(outPipe[1]); close(errPipe[1])
        let (out, err) = drain(outPipe[0], errPipe[0])
        close(outPipe[0]); close(errPipe[0])
        let status: Int32
        switch try wait(pid, program: program) {
        case .code(let c): status = c
        case .signal(let n): status = 128 + n
        }
        return Result(status: status, out: out, err: err)
    }

    /// Reads both descriptors to their ends, whichever has data first.
    private static func drain(_ a: Int32, _ b: Int32) -> ([UInt8], [UInt8]) {
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        var collected: [[UInt8]] = [[], []]
        var buffer = [UInt8](repeating: 0, count: 65536)
        while fds.contains(where: { $0.fd >= 0 }) {
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for i in fds.indices where fds[i].fd >= 0 && fds[i].revents != 0 {
                let fd = fds[i].fd
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    collected[i].append(contentsOf: buffer[0 ..< n])
                } else if n == 0 || errno != EINTR {
                    fds[i].fd = -1  // end of file, or an error: this stream is done
                }
            }
        }
        return (collected[0], collected[1])
    }
}
