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

int peernote_exchange_files(const char *a, const char *b) {
#if defined(__linux__) && defined(SYS_renameat2)
    // Through syscall(2): glibc's renameat2 wrapper is missing before glibc 2.28 and hidden
    // from Swift without _GNU_SOURCE.
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
#elif defined(__APPLE__)
    return renamex_np(a, b, RENAME_SWAP);
#else
    (void)a;
    (void)b;
    errno = ENOSYS;
    return -1;
#endif
}

int peernote_rename_noreplace(const char *a, const char *b) {
#if defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE);
#elif defined(__APPLE__)
    return renamex_np(a, b, RENAME_EXCL);
#else
    (void)a;
    (void)b;
    errno = ENOSYS;
    return -1;
#endif
}
