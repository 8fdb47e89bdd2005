#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFileSystem
import CFileSystem

extension FileStore {
    /// How `replace(_:at:expecting:)` ended.
    public enum ReplaceOutcome: Equatable, Sendable {
        /// The file now holds the new bytes.
        case replaced
        /// The file no longer held the bytes the caller had read from it (another program, such
        /// as a sync client, wrote it in the meantime). It was left as it is; it holds `current`.
        case changed(current: [UInt8])
        /// As `changed`, and more: while the new file was being taken out again, yet another
        /// version (`displaced`) had been put in place, and taking the new file out took that
        /// version out too (two writers that share no lock wrote at once). It is kept, with
        /// nothing lost, at `keptAt` (a `.NAME.kept-XXXXXX` file beside the document): write a
        /// file that includes it, then remove `keptAt`, or, if that cannot be done, make it a
        /// conflict copy the user and `pnmerge sync` see (`keepAsConflictCopy`). Left there (its
        /// writer was killed), a later writer's cleanup removes it once it is 10 seconds old if
        /// the document holds all of it, and otherwise makes it a conflict copy.
        case changedTwice(current: [UInt8], displaced: [UInt8], keptAt: String)
        /// The file the caller read is gone: another program moved it away or deleted it (a sync
        /// client moves a file aside before putting another device's copy in its place, which a
        /// file put there now would be overwritten by). Nothing was written.
        case missing
    }

    /// Replaces `path` with `bytes` as `writeAtomically` does, but only while it still holds
    /// `expected` (what the caller read from it): a read-modify-write that a program not
    /// taking `FileLock` (a sync client) raced is told so instead of overwriting that
    /// program's file. A missing file is created when `expected` is empty (nothing was read);
    /// else it is `.missing`, and nothing is written.
    ///
    /// Where the system can exchange two files atomically (Linux's `renameat2`, Apple's
    /// `renamex_np`), the new file is swapped in and the file it displaced compared with
    /// `expected`; if they differ, the two are swapped back, so no moment exists in which a
    /// write by another program can be lost. Elsewhere the file is compared just before the
    /// rename (`exchange: false` forces this), which leaves a window of a few microseconds.
    ///
    /// Either way, a file whose size is no longer `expected`'s once the new file is ready is
    /// taken as changed at once (`.changed`, nothing swapped): one `stat` sees almost every race,
    /// and the new file is then never in place, so no other writer can have read it or be
    /// taken out of place by putting back what it displaced.
    public static func replace(_ bytes: [UInt8], at path: String, expecting expected: [UInt8],
                               exchange: Bool = true) throws(FileError) -> ReplaceOutcome {
        try replace(bytes, at: path, expecting: expected, exchange: exchange, beforePuttingBack: {})
    }

    /// `replace(_:at:expecting:exchange:)`; `beforeExchanging` runs once the file's size was
    /// found unchanged, just before the new file is swapped in (or renamed), and
    /// `beforePuttingBack` when the file turned out to have changed, just before the new file is
    /// taken out again (tests use them to write meanwhile).
    static func replace(_ bytes: [UInt8], at path: String, expecting expected: [UInt8], exchange: Bool,
                        beforeExchanging: () -> Void = {}, beforePuttingBack: () -> Void) throws(FileError) -> ReplaceOutcome {
        if try isSpecial(path) {
            // A FIFO or a device where the caller read a file: written into, it would hang on a
            // FIFO no one reads, or send the notebook to the device, and the change would be lost.
            guard expected.isEmpty else {
                throw .becameSpecial(path: path)
            }
            try writeInto(bytes, special: path)
            return .replaced
        }
        let target = try writeTarget(path)
        let tmp = try writeTemporary(bytes, beside: target, reportingAs: path)
        defer { tmp.release() }
        // The new file is exchanged from a `.NAME.swap-XXXXXX` name: if this process dies between
        // the exchange and the end, what the file held (perhaps a sync client's copy) is left
        // under that name, which cleanup only removes once the document has all of it
        // (see removeStaleTemporaries), never under the temporary name, which it removes unread.
        var source = tmp.path
        var sized = stat()
        if stat(target, &sized) == 0, (sized.st_mode & S_IFMT) == S_IFREG, Int(sized.st_size) != expected.count {
            // Changed since it was read (a file that grew or shrank): nothing to swap.
            unlink(tmp.path)
            return .changed(current: try read(target))
        }
        beforeExchanging()
        let swap = directory(of: target) + "/" + temporaryPrefix(forName: lastComponent(of: target), infix: swapInfix) + String(tmp.path.suffix(6))
        if exchange && rename(tmp.path, swap) == 0 {
            source = swap
            if peernote_exchange_files(swap, target) == 0 {
                // `swap` now leads to what `target` held.
                let displaced: Result<[UInt8], FileError>
                do { displaced = .success(try read(swap)) } catch { displaced = .failure(error) }
                if case .success(let held) = displaced, held == expected {
                    unlink(swap)
                    syncDirectory(of: target)
                    return .replaced
                }
                // Another program wrote the file meanwhile (or it cannot be read back): put it back.
                beforePuttingBack()
                guard peernote_exchange_files(swap, target) == 0 else {
                    let e = errno
                    let kept = keep(swap, beside: target)
                    throw .changedNotPutBack(path: path, errno: e, keptAs: kept)
                }
                syncDirectory(of: target)
                var ours = stat(), there = stat()
                guard fstat(tmp.lock, &ours) == 0, lstat(swap, &there) == 0,
                      ours.st_dev == there.st_dev, ours.st_ino == there.st_ino else {
                    // Replaced a second time between the two exchanges (another writer's exchange,
                    // or its own putting back): that version came back here, and is kept until
                    // the caller has written a file that includes it. Under a name of its own:
                    // cleanup may remove a `.swap-` file that holds everything the document holds
                    // (a dead writer's own result), which this version, another writer's, may
                    // well do; a `.kept-` file goes only once the document holds all of it.
                    let keptAt = directory(of: target) + "/" + temporaryPrefix(forName: lastComponent(of: target), infix: keptInfix) + String(tmp.path.suffix(6))
                    if case .success = displaced, let other = try? read(swap), let now = try? read(target), rename(swap, keptAt) == 0 {
                        return .changedTwice(current: now, displaced: other, keptAt: keptAt)
                    }
                    let kept = keep(swap, beside: target)
                    throw .changedTwice(path: path, keptAs: kept)
                }
                unlink(swap)
                switch displaced {
                case .success(let held): return .changed(current: held)
                case .failure(let error): throw .changedUnreadable(path: path, reading: error)
                }
            }
        }
        // No atomic exchange here (or no file to exchange with): compare, then rename.
        var st = stat()
        if lstat(target, &st) != 0 && errno == ENOENT && !expected.isEmpty {
            // Read, and gone since: written now, it would be overwritten by what a sync client
            // that moved it aside puts in its place.
            unlink(source)
            return .missing
        }
        if lstat(target, &st) == 0 {
            let now: [UInt8]
            do { now = try read(target) } catch {
                unlink(source)
                throw error
            }
            if now != expected {
                unlink(source)
                return .changed(current: now)
            }
        }
        guard rename(source, target) == 0 else {
            let e = errno
            unlink(source)
            throw .failed(path: path, .rename, errno: e)
        }
        syncDirectory(of: target)
        return .replaced
    }

}
