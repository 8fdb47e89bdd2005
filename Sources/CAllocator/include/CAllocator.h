#ifndef PEERNOTE_CALLOCATOR_H
#define PEERNOTE_CALLOCATOR_H

/// Tunes the C allocator for a process that runs one command and exits (pnmerge, peernote).
///
/// With glibc: large blocks (up to 32 MB) come from the heap instead of a fresh mmap each,
/// freed memory stays in the heap instead of going back to the system (up to 64 MB), and
/// threads share one arena.
/// A command that loads, merges and saves a document allocates and frees arrays of a few
/// megabytes many times over; by default each one is a new mapping whose pages the kernel
/// faults in one at a time (a third of a fresh `pnmerge merge`'s CPU time went to the
/// kernel). The heap also gets 64 MB of room to grow into, advised for transparent huge
/// pages (MADV_HUGEPAGE), so that its pages come 2 MB at a fault; not under a limit on data
/// or address space (ulimit -d, -v), which the room would count against.
/// A setting the user made (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_,
/// MALLOC_ARENA_MAX, MALLOC_TOP_PAD_, or those or glibc.malloc.hugetlb in GLIBC_TUNABLES)
/// is left alone. Elsewhere (musl, Apple platforms) it does nothing.
///
/// Not for the library: an app that keeps running should give memory back.
/// Returns 1 when it changed a setting, 0 when it left them all alone.
int pn_tune_allocator_for_command(void);

/// `pn_tune_allocator_for_command` with the user's settings read from `environment`
/// ("NAME=value" strings, NULL-terminated) instead of the process's (for tests).
int pn_tune_allocator_for_environment(const char *const *environment);

#endif
