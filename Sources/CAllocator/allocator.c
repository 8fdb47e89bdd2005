#include "CAllocator.h"

#include <stdlib.h>
#if defined(__linux__)
#include <features.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#include <string.h>

/// The value of `name` in `environment` ("NAME=value" strings, NULL-terminated), if set.
static const char *lookup(const char *const *environment, const char *name) {
    size_t length = strlen(name);
    for (const char *const *entry = environment; entry != NULL && *entry != NULL; entry++) {
        if (strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return *entry + length + 1;
    }
    return NULL;
}

/// Whether the user chose `variable` or the tunable named `tunable` themselves.
static int user_chose(const char *const *environment, const char *variable, const char *tunable) {
    if (lookup(environment, variable) != NULL) return 1;
    const char *tunables = lookup(environment, "GLIBC_TUNABLES");
    return tunables != NULL && strstr(tunables, tunable) != NULL;
}

extern char **environ;
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
    return changed;
#else
    return 0;
#endif
}
