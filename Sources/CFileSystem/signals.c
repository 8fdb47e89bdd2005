#include "CFileSystem.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

// The temporary files being written now, for the signal handler. Each slot's state is
// generation << 2 | claimed << 1 | active: a writer claims a free slot (bumping its generation),
// copies the path in, then marks it active; the handler copies an active slot's path and unlinks
// it only when the state is the same after the copy (the slot was not released and reused while
// it read). No locks, no allocation: only what a signal handler may do.
#define SLOTS 32
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif
static char paths[SLOTS][PATH_MAX];
static _Atomic unsigned long states[SLOTS];

int peernote_temporary_register(const char *path) {
    size_t n = strlen(path);
    if (n >= PATH_MAX) return -1;
    for (int i = 0; i < SLOTS; i++) {
        unsigned long s = atomic_load(&states[i]);
        if (s & 3) continue;
        unsigned long claimed = ((s >> 2) + 1) << 2 | 2;
        if (!atomic_compare_exchange_strong(&states[i], &s, claimed)) continue;
        memcpy(paths[i], path, n + 1);
        atomic_store(&states[i], claimed | 1);
        return i;
    }
    return -1;
}

void peernote_temporary_unregister(int slot) {
    if (slot < 0 || slot >= SLOTS) return;
    unsigned long s = atomic_load(&states[slot]);
    atomic_store(&states[slot], s & ~3UL);
}

static void remove_registered(void) {
    char path[PATH_MAX];
    for (int i = 0; i < SLOTS; i++) {
        unsigned long before = atomic_load(&states[i]);
        if (!(before & 1)) continue;
        memcpy(path, paths[i], PATH_MAX);
        path[PATH_MAX - 1] = 0;
        if (atomic_load(&states[i]) == before) unlink(path);
    }
}

static void on_signal(int sig) {
    int saved = errno;
    remove_registered();
    // The default action, once this handler returns (the signal is blocked until then).
    signal(sig, SIG_DFL);
    raise(sig);
    errno = saved;
}

int peernote_remove_temporaries_on_signals(void) {
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    int installed = 0;
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++) {
        struct sigaction old;
        if (sigaction(signals[i], NULL, &old) != 0) continue;
        // An ignored signal stays ignored (a background job's SIGINT, nohup's SIGHUP), and a
        // handler someone else installed stays theirs.
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = on_signal;
        sigfillset(&action.sa_mask);
        if (sigaction(signals[i], &action, NULL) == 0) installed++;
    }
    // A write past the file-size limit (`ulimit -f`) would kill the process with SIGXFSZ (exit
    // 153, no message, the temporary file left); ignored, the write fails with EFBIG, which the
    // writer reports naming the file, removing its temporary file.
    struct sigaction old;
    if (sigaction(SIGXFSZ, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
        signal(SIGXFSZ, SIG_IGN);
    }
    return installed;
}
