#include "CFileSystem.h"

#include <errno.h>
#if defined(__linux__)
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#elif defined(__APPLE__)
#include <stdio.h>
#endif

// rename(2) with a flag: `linux_flag` for renameat2 on Linux, `apple_flag` for renamex_np on
// Apple platforms; elsewhere -1 with errno ENOSYS.
static int rename_with_flag(const char *a, const char *b, unsigned linux_flag, unsigned apple_flag) {
#if defined(__linux__) && defined(SYS_renameat2)
    // Through syscall(2): glibc's renameat2 wrapper is missing before glibc 2.28 and hidden
    // from Swift without _GNU_SOURCE.
    (void)apple_flag;
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, linux_flag);
#elif defined(__APPLE__)
    (void)linux_flag;
    return renamex_np(a, b, apple_flag);
#else
    (void)a;
    (void)b;
    (void)linux_flag;
    (void)apple_flag;
    errno = ENOSYS;
    return -1;
#endif
}

// Each system's flags; the other system's are unused.
#if !defined(__linux__)
#define RENAME_EXCHANGE 0
#define RENAME_NOREPLACE 0
#endif
#if !defined(__APPLE__)
#define RENAME_SWAP 0
#define RENAME_EXCL 0
#endif

int peernote_exchange_files(const char *a, const char *b) {
    return rename_with_flag(a, b, RENAME_EXCHANGE, RENAME_SWAP);
}

int peernote_rename_noreplace(const char *a, const char *b) {
    return rename_with_flag(a, b, RENAME_NOREPLACE, RENAME_EXCL);
}
