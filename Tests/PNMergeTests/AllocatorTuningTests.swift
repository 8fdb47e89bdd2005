#if canImport(Glibc)
import Glibc
#endif
import CAllocator
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
        #expect(Self.tune(["PATH=/usr/bin", "MALLOC_MMAP_THRESHOLD_=131072", "MALLOC_TRIM_THRESHOLD_=131072", "MALLOC_ARENA_MAX=8"]) == 0)
        #expect(Self.tune(["GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072:glibc.malloc.arena_max=8"]) == 0)
        #expect(Self.tune(["MALLOC_ARENA_MAX=8", "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072"]) == 0)
    }

    @Test func theSettingsNotChosenAreStillTuned() {
        // Any one left unchosen is set (the others are the user's).
        #expect(Self.tune(["MALLOC_TRIM_THRESHOLD_=131072", "MALLOC_ARENA_MAX=8"]) == 1)
        #expect(Self.tune(["MALLOC_MMAP_THRESHOLD_=131072", "GLIBC_TUNABLES=glibc.malloc.arena_max=8"]) == 1)
        #expect(Self.tune(["GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072"]) == 1)
        // A variable is matched by its whole name.
        #expect(Self.tune(["MALLOC_MMAP_THRESHOLD_X=1", "MALLOC_TRIM_THRESHOLD_=131072", "MALLOC_ARENA_MAX=8"]) == 1)
        #expect(Self.tune([]) == 1)
    }
    #else
    @Test func elsewhereNothingIsChanged() {
        #expect(pn_tune_allocator_for_command() == 0)
    }
    #endif
}
