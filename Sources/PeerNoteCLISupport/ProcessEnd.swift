/// How a command run by one of the tools' executables ends: the process exits right after it,
/// so the documents it read and made need not be freed one object at a time first (a notebook
/// of many notes is hundreds of thousands of them, and freeing them takes about as long as
/// reading one copy did).
///
/// Contract: a run marks itself as ending the process (`run(endingProcess:_:)`, called by the
/// executables' `main` around the whole command, which then calls `exit`), and a command hands
/// over, with `keep(_:)`, the objects whose freeing is only the release of memory: documents,
/// never a lock (a `FileLock` removes its lock file when freed) nor anything that writes, flushes
/// or closes something when freed. What is kept is never freed; the kernel takes its memory back
/// at exit. A run that does not end the process (the tools' tests call the same entry points
/// in-process) keeps nothing: `keep(_:)` does nothing then, and the library's objects are freed
/// as they always are.
public enum ProcessEnd {
    @TaskLocal private static var endsProcess = false

    /// Runs `body` (a whole command) as one that ends the process when `endingProcess`.
    public static func run<T>(endingProcess: Bool, _ body: () throws -> T) rethrows -> T {
        try $endsProcess.withValue(endingProcess, operation: body)
    }

    /// Keeps `object` alive until the process ends when the run ends the process (see the
    /// contract above); else does nothing.
    public static func keep(_ object: AnyObject) {
        guard endsProcess else { return }
        _ = Unmanaged.passRetained(object)
    }

    /// Whether the current run ends the process.
    public static var isEndingProcess: Bool { endsProcess }
}
