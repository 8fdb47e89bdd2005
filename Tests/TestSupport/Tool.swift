import Foundation

/// What a run of a tool did: its exit status and what it wrote.
public struct RunResult: Sendable {
    public var status: Int32
    public var out: String
    public var err: String
    public var outBytes: [UInt8]

    public init(status: Int32, out: String, err: String, outBytes: [UInt8]) {
        self.status = status
        self.out = out
        self.err = err
        self.outBytes = outBytes
    }
}

/// A tool this package builds (`.build/debug/NAME`), run as a separate process. Its standard
/// output and error go through files, so that large output cannot block it.
public struct Tool: Sendable {
    /// The package root, from this file's path: Tests/TestSupport/Tool.swift.
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    public static let pnmerge = Tool(name: "pnmerge")
    public static let peernote = Tool(name: "peernote")

    public let name: String
    /// The executable: `.build/debug/NAME` for the package's tools, else the path given.
    public var path: String { executable ?? Self.packageRoot.appendingPathComponent(".build/debug/\(name)").path }
    private let executable: String?

    init(name: String) {
        self.name = name
        executable = nil
    }

    /// Another program, at `path` (`/bin/sh` for the project's scripts), run as the tools are.
    public init(executable path: String) {
        name = URL(fileURLWithPath: path).lastPathComponent
        executable = path
    }

    /// What the process reads on standard input.
    public enum Input: Sendable {
        /// `/dev/null`.
        case nullDevice
        /// A regular file holding these bytes.
        case file([UInt8])
        /// A pipe these bytes are written to, then closed.
        case pipe([UInt8])
    }

    /// The tool, or a test failure that says how to build it.
    public func require() throws -> Tool {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw SupportError("\(name) is not built at \(path); run `swift build --build-tests` in \(Self.packageRoot.path) before `swift test`")
        }
        return self
    }

    /// Starts `NAME args…` with exactly `environment`, in `directory` when given; call
    /// `finish()` on the result.
    public func start(_ args: [String], in directory: String? = nil, environment: [String: String],
                      stdin: Input = .nullDevice) throws -> Running {
        let files = try TempDir()
        let outPath = files.path("stdout"), errPath = files.path("stderr")
        guard FileManager.default.createFile(atPath: outPath, contents: nil),
              FileManager.default.createFile(atPath: errPath, contents: nil) else {
            throw SupportError("cannot create \(outPath) and \(errPath)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try require().path)
        process.arguments = args
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.environment = environment
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardOutput = out
        process.standardError = err
        var handles = [out, err]
        var pipe: Pipe?
        var piped: [UInt8] = []
        switch stdin {
        case .nullDevice:
            process.standardInput = FileHandle.nullDevice
        case .file(let bytes):
            let inPath = try files.write(bytes, "stdin")
            let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
            process.standardInput = input
            handles.append(input)
        case .pipe(let bytes):
            let made = Pipe()
            process.standardInput = made
            pipe = made
            piped = bytes
        }
        try process.run()
        if let pipe {
            pipe.fileHandleForWriting.write(Data(piped))
            try pipe.fileHandleForWriting.close()
        }
        return Running(process: process, files: files, outPath: outPath, errPath: errPath, handles: handles)
    }

    /// Runs `NAME args…` to the end (see `start`).
    public func run(_ args: [String], in directory: String? = nil, environment: [String: String],
                    stdin: Input = .nullDevice) throws -> RunResult {
        try start(args, in: directory, environment: environment, stdin: stdin).finish()
    }

    /// A started process whose output goes to files (`outPath`, `errPath`), removed with this value.
    public struct Running {
        public let process: Process
        let files: TempDir
        public let outPath: String
        public let errPath: String
        let handles: [FileHandle]

        /// Waits for the process to end; what it did.
        public func finish() throws -> RunResult {
            process.waitUntilExit()
            for h in handles { try h.close() }
            let outBytes = try files.bytes("stdout")
            return RunResult(status: process.terminationStatus, out: String(decoding: outBytes, as: UTF8.self),
                             err: String(decoding: try files.bytes("stderr"), as: UTF8.self), outBytes: outBytes)
        }
    }
}

/// A failure of the test support itself (a tool not built, a file it cannot make), thrown so
/// that the test calling it fails with this message. The support target is a plain target,
/// built by `swift build` as well, so it does not import the testing library.
public struct SupportError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
