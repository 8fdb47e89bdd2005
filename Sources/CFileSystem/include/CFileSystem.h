#ifndef PEERNOTE_CFILESYSTEM_H
#define PEERNOTE_CFILESYSTEM_H

/// Atomically exchanges the files at `a` and `b` (both must exist, on one file system):
/// afterwards each name leads to the file the other one led to. Linux: renameat2 with
/// RENAME_EXCHANGE; Apple platforms: renamex_np with RENAME_SWAP.
/// Returns 0, or -1 with errno set. Where the system or the file system cannot exchange
/// (an older kernel, some network and FUSE file systems, other systems), errno is ENOSYS,
/// EINVAL, ENOTSUP or EOPNOTSUPP, and nothing was changed.
int peernote_exchange_files(const char *a, const char *b);

/// Renames `a` to `b` unless something (even a dangling link) is at `b`: then -1 with errno
/// EEXIST, and nothing was changed. Linux: renameat2 with RENAME_NOREPLACE; Apple platforms:
/// renamex_np with RENAME_EXCL. For file systems without hard links (FAT and exFAT on a USB
/// stick, some network file systems), where link(2) cannot put a file in place without
/// replacing one. Where the system or the file system cannot do it, errno is ENOSYS, EINVAL,
/// ENOTSUP or EOPNOTSUPP, and nothing was changed.
int peernote_rename_noreplace(const char *a, const char *b);

/// Notes `path`, a temporary file this process is writing, for the handler that
/// `peernote_remove_temporaries_on_signals` installs: it is unlinked if the process is
/// interrupted before `peernote_temporary_unregister` is called with the slot returned.
/// Returns the slot, or -1 (the path is too long, or 32 are registered already: it is then
/// left to the next writer's cleanup). Safe to call from any thread.
int peernote_temporary_register(const char *path);

/// Forgets a path `peernote_temporary_register` noted (a slot of -1 is ignored).
void peernote_temporary_unregister(int slot);

/// Installs, for SIGINT, SIGTERM and SIGHUP, a handler that unlinks the registered temporary
/// files and then lets the signal take its default action (the process ends as it would have).
/// A signal that is ignored, or already has a handler, is left as it is. SIGXFSZ, if it has its
/// default action, is ignored, so that a write past `ulimit -f` fails with EFBIG (an error the
/// writer reports) instead of killing the process. For the command-line tools, not for a
/// library: returns how many handlers were installed.
int peernote_remove_temporaries_on_signals(void);

#endif
