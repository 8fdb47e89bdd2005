#if canImport(Glibc)
import Glibc
#endif
import CAllocator
import Foundation
import Testing

/// The tools' allocator settings (`pn_tune_allocator_for_command`, pnmerge(1) ENVIRONMENT): a
/// setting the user made in glibc's variables wins; the others are still tuned. The settings
/// are read from an environment the test passes (changing the process's own would race with
/// the tests that start processes).
@Suite struct AllocatorTuningTests {
    #if canImport(Glibc)
    /// `pn_tune_allocator_for_environment` on `environment` ("NAME=value" strings).
    static func tune(_ environment: [String]) -> Int32 {
        var pointers: [UnsafePointer<CChar>?] = environment.map { strdup($0).map { UnsafePointer($0) } }
        pointers.append(nil)
        defer { for p in pointers { free(UnsafeMutableRawPointer(mutating: p)) } }
        return pointers.withUnsafeBufferPointer { pn_tune_allocator_for_environment($0.baseAddress) }
    }

    @Test func settingsTheUserMadeAreLeftAlone() {
        // All three chosen, by variable or by tunable: nothing is changed.
        #expect(Self.tune(["PATH=/usr/bin", "MALLOC_MMAP_THRESHOLD_=131072", "MALLOC_TRIM_THRESHOLD_=131072", "MALLOC_ARENA_MAX=8",
                           "MALLOC_TOP_PAD_=131072"]) == 0)
        #expect(Self.tune(["GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072:glibc.malloc.arena_max=8:glibc.malloc.top_pad=0"]) == 0)
        #expect(Self.tune(["MALLOC_ARENA_MAX=8", "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072:glibc.malloc.hugetlb=0"]) == 0)
    }

    @Test func theSettingsNotChosenAreStillTuned() {
        // Any one left unchosen is set (the others are the user's).
        #expect(Self.tune(["MALLOC_TRIM_THRESHOLD_=131072", "MALLOC_ARENA_MAX=8"]) == 1)
        #expect(Self.tune(["MALLOC_MMAP_THRESHOLD_=131072", "GLIBC_TUNABLES=glibc.malloc.arena_max=8"]) == 1)
        #expect(Self.tune(["GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072"]) == 1)
        // A variable is matched by its whole name.
        #expect(Self.tune(["MALLOC_MMAP_THRESHOLD_X=1", "MALLOC_TRIM_THRESHOLD_=131072", "MALLOC_ARENA_MAX=8", "MALLOC_TOP_PAD_=0"]) == 1)
        // (Whether the heap's room is given depends on the calling thread's arena and the
        // process's limits, so it is checked in a pnmerge process: the tests below.)
        #expect(Self.tune([]) == 1)
    }

    static let transparentHugePages = FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage/enabled")

    /// A running `pnmerge` has asked for huge pages for its heap: its `[heap]` mapping has the
    /// `hg` flag (MADV_HUGEPAGE) in /proc/PID/smaps. The process waits on its standard input
    /// (`validate -`) while the test looks.
    @Test(.enabled(if: transparentHugePages, "this kernel has no transparent huge pages (/sys/kernel/mm/transparent_hugepage)"))
    func theToolsHeapAsksForHugePages() throws {
        _ = try Binary.require()
        let process = Self.untunedProcess(Binary.path, ["validate", "-"])
        let input = Pipe()
        process.standardInput = input
        try process.run()
        defer {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        // The tools tune the allocator first thing; look until it shows (or the process is
        // long past that point: it then waits for input).
        var heapFlags: [String] = []
        for _ in 0..<200 {
            heapFlags = Self.heapFlags(of: process.processIdentifier)
            if heapFlags.contains(where: { $0.split(separator: " ").contains("hg") }) { break }
            usleep(50_000)
        }
        #expect(heapFlags.contains(where: { $0.split(separator: " ").contains("hg") }),
                "no [heap] mapping of pnmerge has the hg flag; its heap's VmFlags: \(heapFlags)")
    }

    /// Under a limit on the data segment (`ulimit -d`) the heap's 64 MB of room would count
    /// against it: the tool leaves the heap alone and still works. (With the room it aborted:
    /// every growth of the heap asked for 64 MB more and failed.)
    @Test func aDataLimitLeavesTheHeapAlone() throws {
        _ = try Binary.require()
        let bash = "/bin/bash"
        try #require(FileManager.default.isExecutableFile(atPath: bash), "ulimit needs \(bash)")
        let fixture = Binary.packageRoot.appendingPathComponent("Fixtures/meeting.peernote").path
        let process = Self.untunedProcess(bash, ["-c", "ulimit -d 40000 && exec \"$0\" validate \"$1\"", Binary.path, fixture])
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }

    /// `executable ARGUMENTS`, not started, output discarded, in this environment without the
    /// user's settings that would turn the heap's room off (`GLIBC_TUNABLES`, `MALLOC_TOP_PAD_`).
    static func untunedProcess(_ executable: String, _ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["GLIBC_TUNABLES"] = nil
        environment["MALLOC_TOP_PAD_"] = nil
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        return process
    }

    /// The VmFlags of each `[heap]` mapping of process `pid`.
    static func heapFlags(of pid: Int32) -> [String] {
        // Read to the end: a file in /proc has no size, and a single read returns one page of it.
        guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/smaps"),
              let data = try? handle.readToEnd() else { return [] }
        try? handle.close()
        let smaps = String(decoding: data, as: UTF8.self)
        var flags: [String] = []
        var inHeap = false
        for line in smaps.split(separator: "\n") {
            // A mapping's first line starts with its address range ("55c1...-55c1... rw-p ...").
            if let range = line.split(separator: " ").first, range.contains("-"),
               range.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                inHeap = line.hasSuffix("[heap]")
            } else if inHeap, line.hasPrefix("VmFlags:") {
                flags.append(String(line.dropFirst("VmFlags:".count)))
            }
        }
        return flags
    }
    #else
    @Test func elsewhereNothingIsChanged() {
        #expect(pn_tune_allocator_for_command() == 0)
    }
    #endif
}
