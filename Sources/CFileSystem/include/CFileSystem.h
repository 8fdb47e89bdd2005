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

#endif
