#include "CAllocator.h"

#include <stdlib.h>
#if defined(__linux__)
#include <features.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/// The value of `name` in `environment` ("NAME=value" strings, NULL-terminated), if set.
static const char *lookup(const char *const *environment, const char *name) {
    size_t length = strlen(name);
    for (const char *const *entry = environment; entry != NULL && *entry != NULL; entry++) {
        if (strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return *entry + length + 1;
    }
    return NULL;
}

/// Whether the user set the tunable named `tunable` in GLIBC_TUNABLES.
static int tunable_chosen(const char *const *environment, const char *tunable) {
    const char *tunables = lookup(environment, "GLIBC_TUNABLES");
    return tunables != NULL && strstr(tunables, tunable) != NULL;
}

/// Whether the user chose `variable` or the tunable named `tunable` themselves.
static int user_chose(const char *const *environment, const char *variable, const char *tunable) {
    return lookup(environment, variable) != NULL || tunable_chosen(environment, tunable);
}

extern char **environ;

/// Gives the heap room to grow (64 MB of address space at a time, not of memory) and asks the
/// kernel to back that room with 2 MB pages where it can (transparent huge pages, in their
/// "madvise" mode as on Debian): one fault then brings in 2 MB instead of 4 KB. A fresh
/// `pnmerge merge` touches about 20 MB of heap; page by page that is about 3,500 faults, some
/// 20 ms of kernel time on this project's machines. What glibc's own
/// `glibc.malloc.hugetlb=1` tunable does, which a process cannot set for itself.
/// The heap must be glibc's single main arena and large blocks must come from it (the
/// settings above), else the pages it touches are elsewhere and this changes nothing that
/// matters. Returns 1 when it changed the setting.
static int prefer_huge_pages(void) {
#if defined(MADV_HUGEPAGE)
    const uintptr_t huge = 2 * 1024 * 1024;
    const size_t room = 64 * 1024 * 1024;
    // Under a limit on data or address space (ulimit -d, ulimit -v) the room itself counts
    // against it, untouched or not, and every later growth of the heap would ask for it again
    // and fail: leave the heap as glibc makes it.
    struct rlimit limit;
    if (getrlimit(RLIMIT_DATA, &limit) != 0 || limit.rlim_cur != RLIM_INFINITY) return 0;
    if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur != RLIM_INFINITY) return 0;
    if (mallopt(M_TOP_PAD, (int)room) != 1) return 0;
    // Make the heap grow now, so that the room exists to be advised: a block just larger than
    // the heap's free end (below the mmap threshold); freeing it keeps the room (the pad).
    // malloc writes the free end's header just past the block, before the advice: a 2 MB
    // stretch with a 4 KB page in it keeps 4 KB pages, so the advice starts past that header,
    // and the block is small for the same reason (freed, it is the first memory handed out).
    // (volatile: a compiler may otherwise drop a block that is allocated and freed unused.)
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)
    size_t size = mallinfo2().keepcost + 64 * 1024;
#else
    size_t size = 1024 * 1024;
#endif
    char *before = sbrk(0);
    void *volatile probe = malloc(size);
    char *after = sbrk(0);
    uintptr_t touched = (uintptr_t)probe + size + 64;
    free(probe);
    if (probe == NULL || before == (char *)-1 || after == (char *)-1 || after <= before) {
        // The heap could not grow by the room (or is not where sbrk says): back to glibc's
        // default pad (128 KB), so that later growth asks for no more than it needs.
        mallopt(M_TOP_PAD, 128 * 1024);
        return 0;
    }
    if (touched < (uintptr_t)before) touched = (uintptr_t)before;
    uintptr_t start = (touched + huge - 1) & ~(huge - 1);
    uintptr_t end = (uintptr_t)before + room;
    if ((uintptr_t)after < end) end = (uintptr_t)after;
    end &= ~(huge - 1);
    // Advice only: a kernel without transparent huge pages says EINVAL, and 4 KB pages remain.
    if (end > start) (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
    return 1;
#else
    return 0;
#endif
}
#endif

int pn_tune_allocator_for_command(void) {
#if defined(__GLIBC__)
    return pn_tune_allocator_for_environment((const char *const *)environ);
#else
    return 0;
#endif
}

int pn_tune_allocator_for_environment(const char *const *environment) {
#if defined(__GLIBC__)
    int changed = 0;
    // 32 MB is the largest threshold glibc accepts on 64-bit systems (half its heap size).
    if (!user_chose(environment, "MALLOC_MMAP_THRESHOLD_", "glibc.malloc.mmap_threshold")
        && mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1) changed = 1;
    if (!user_chose(environment, "MALLOC_TRIM_THRESHOLD_", "glibc.malloc.trim_threshold")
        && mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024) == 1) changed = 1;
    // One arena: a second thread (a save's or a load's other half) then reuses the pages the
    // main thread freed instead of faulting in an arena of its own. Two threads at most
    // allocate at once, mostly large arrays; small blocks come from per-thread caches.
    if (!user_chose(environment, "MALLOC_ARENA_MAX", "glibc.malloc.arena_max")
        && mallopt(M_ARENA_MAX, 1) == 1) changed = 1;
    if (!user_chose(environment, "MALLOC_TOP_PAD_", "glibc.malloc.top_pad")
        && !tunable_chosen(environment, "glibc.malloc.hugetlb")
        && prefer_huge_pages() == 1) changed = 1;
    return changed;
#else
    return 0;
#endif
}
