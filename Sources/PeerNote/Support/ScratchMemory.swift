#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Memory for a large buffer that is needed only for a moment and is mostly left unwritten: a
/// mapping of its own, given back to the system whole when the work is done. A buffer of the
/// heap that size would stay in the heap once freed, and the heap's pages, once touched, are
/// the process's for good (the allocator keeps them: CAllocator); a mapping costs only the pages
/// written, and nothing afterwards. Used for DEFLATE's output bound (`Deflate.compress`): a
/// notebook's state section of megabytes deflates to a tenth of that.
///
/// Invariant: the memory passed to `body` is at least `capacity` bytes (one for 0),
/// zero-filled, and valid only during the call.
enum ScratchMemory {
    /// Calls `body` with `capacity` bytes of scratch memory: a private mapping from the system,
    /// or heap memory if the system refuses one.
    /// - Complexity: a system call to map and one to unmap; each page written costs a fault.
    static func with<R>(capacity: Int, _ body: (UnsafeMutableRawBufferPointer) -> R) -> R {
        let size = max(capacity, 1)
        #if canImport(Glibc) || canImport(Darwin)
        #if canImport(Glibc)
        let anonymous = MAP_ANONYMOUS
        #else
        let anonymous = MAP_ANON
        #endif
        let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | anonymous, -1, 0)
        if let mapped, mapped != MAP_FAILED {
            defer { munmap(mapped, size) }
            return body(UnsafeMutableRawBufferPointer(start: mapped, count: size))
        }
        #endif
        let heap = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { heap.deallocate() }
        heap.initializeMemory(as: UInt8.self, repeating: 0)
        return body(heap)
    }
}
