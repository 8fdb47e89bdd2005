#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program found on `PATH`, with standard input from `/dev/null`, and collects what it
/// prints; both streams are read together, so a chatty child cannot block on a full pipe.
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
        public var description: String
        /// Whether the program was not found on `PATH`.
        public var notFound = false
    }

    /// Runs `arguments[0]` (looked up on `PATH`) with `arguments`, and waits for it to end.
    public static func run(_ arguments: [String]) throws(LaunchError) -> Result {
        guard let program = arguments.first else { throw LaunchError(description: "no program named") }
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        guard pipe(&outPipe) == 0 else { throw LaunchError(description: "cannot make a pipe: \(POSIXText.lastError())") }
        guard pipe(&errPipe) == 0 else {
            let why = POSIXText.lastError()
            close(outPipe[0]); close(outPipe[1])
            throw LaunchError(description: "cannot make a pipe: \(why)")
        }
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t?
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        for fd in outPipe + errPipe { posix_spawn_file_actions_addclose(&actions, fd) }

        // The child starts with every signal at its default and none blocked (as Foundation's
        // Process did), whatever this process ignores or blocks.
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
        defer { argv.forEach { free($0) } }
        var argvC = argv + [nil]
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, program, &actions, &attributes, &argvC, environ)
        close(outPipe[1]); close(errPipe[1])
        guard spawned == 0 else {
            close(outPipe[0]); close(errPipe[0])
            throw LaunchError(description: "cannot run \(program): \(String(cString: strerror(spawned)))", notFound: spawned == ENOENT)
        }
        let (out, err) = drain(outPipe[0], errPipe[0])
        close(outPipe[0]); close(errPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno == EINTR { continue }
            throw LaunchError(description: "cannot wait for \(program): \(POSIXText.lastError())")
        }
        let signalNumber = status & 0x7F
        return Result(status: signalNumber == 0 ? (status >> 8) & 0xFF : 128 + signalNumber, out: out, err: err)
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
