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

extension FileStore {
    /// How a write that finds its file changed by writers that share no lock with it goes on
    /// (`Document.write(over:loaded:)`, `pnmerge sync`): it merges what it found and tries again,
    /// after a random wait that doubles with each try (up to 64 ms, so that writers that keep
    /// meeting fall out of step), until it is written or `patience` seconds have passed.
    ///
    /// Giving up early would be wrong: a writer whose new file was in place for a moment (see
    /// `replace(_:at:expecting:)`) may have been read, and built on, by another writer, and one
    /// that took another writer's file out of place (`ReplaceOutcome.changedTwice`) holds a
    /// version that writer was told is written. Only writing a file that includes them puts them
    /// back; a writer that must stop leaves them as a conflict copy instead.
    public struct Contention: Sendable {
        /// Seconds a write goes on trying while other writers keep changing its file.
        public static let patience: Double = 60
        /// Seconds a write waits for a file that went missing since it was read to come back
        /// (a sync client puts another device's copy in place right after moving it aside).
        public static let missingPatience: Double = 10

        private let deadline: Double
        private var tries = 0

        public init(patience: Double = Contention.patience) {
            deadline = Contention.now() + patience
        }

        /// Waits a random while, longer after each call (up to 64 ms); false, without
        /// waiting, once the patience has run out.
        public mutating func wait() -> Bool {
            guard Contention.now() < deadline else { return false }
            let cap = UInt32(1_000) << UInt32(min(tries, 6))
            tries += 1
            usleep(UInt32.random(in: cap / 4 ... cap))
            return true
        }

        private static func now() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
        }
    }
}

/// Why `Document.write(to:)` or `Document.write(over:loaded:)` did not put the document in
/// place, with what became of it. Every case names the file (`path`); `takenOut` lists the
/// conflict copies that versions other writers had put in place, and this write took out
/// again, were left as (empty almost always). `description` is one line without command-line
/// advice: the tools add theirs (`PeerNoteCLISupport.describe(_:)`).
public enum WriteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A file operation failed; nothing was written.
    case file(FileError, takenOut: [String])
    /// The file holds a notebook of a newer format version (replacing it would throw away what
    /// this library cannot read); nothing was written.
    case newerFormat(path: String, version: UInt64)
    /// The file holds a notebook this process cannot read (`PeerNoteError.needsMoreMemory`);
    /// nothing was written.
    case cannotReadHere(path: String, PeerNoteError)
    /// The file holds changes of this notebook that cannot be merged now (a transaction is
    /// open); nothing was written.
    case cannotMergeNow(path: String, PeerNoteError)
    /// The file holds a damaged notebook whose bytes could not be kept aside; nothing was written.
    case damagedNotKeptAside(path: String, damage: PeerNoteError, FileError)
    /// While this was being written, the file was replaced by another notebook, or by bytes that
    /// do not merge (`why`, nil for another notebook). This document is in `keptIn`, a
    /// conflict copy beside the file, unless that failed too (`notKept`).
    case replacedMeanwhile(path: String, why: PeerNoteError?, keptIn: String?, notKept: FileError?, takenOut: [String])
    /// The file changed while this was being written, and then a file operation failed
    /// (`error`): this document is in `keptIn` instead, unless that failed too (`notKept`).
    case failedAfterChange(FileError, keptIn: String?, notKept: FileError?, takenOut: [String])
    /// The file went missing after it was read and did not come back within `seconds`: this
    /// document is in `keptIn`, beside where the file was, unless that failed too (`notKept`).
    case vanished(path: String, seconds: Double, keptIn: String?, notKept: FileError?, takenOut: [String])
    /// Other writers kept changing the file for `seconds`: this document (with every version
    /// taken out, merged) is in `keptIn`, unless that failed too (`notKept`). Its change may be
    /// in the file as well: the new file was in place at moments, and others may have built on it.
    case contended(path: String, seconds: Double, keptIn: String?, notKept: FileError?, takenOut: [String])

    /// The file the write was for.
    public var path: String {
        get {
            switch self {
            case .file(let e, _), .failedAfterChange(let e, _, _, _): e.path
            case .newerFormat(let p, _), .cannotReadHere(let p, _), .cannotMergeNow(let p, _), .damagedNotKeptAside(let p, _, _),
                 .replacedMeanwhile(let p, _, _, _, _), .vanished(let p, _, _, _, _), .contended(let p, _, _, _, _): p
            }
        }
        set {
            switch self {
            case .file(var e, let t): e.path = newValue; self = .file(e, takenOut: t)
            case .failedAfterChange(var e, let k, let n, let t): e.path = newValue; self = .failedAfterChange(e, keptIn: k, notKept: n, takenOut: t)
            case .newerFormat(_, let v): self = .newerFormat(path: newValue, version: v)
            case .cannotReadHere(_, let e): self = .cannotReadHere(path: newValue, e)
            case .cannotMergeNow(_, let e): self = .cannotMergeNow(path: newValue, e)
            case .damagedNotKeptAside(_, let d, let e): self = .damagedNotKeptAside(path: newValue, damage: d, e)
            case .replacedMeanwhile(_, let w, let k, let n, let t): self = .replacedMeanwhile(path: newValue, why: w, keptIn: k, notKept: n, takenOut: t)
            case .vanished(_, let s, let k, let n, let t): self = .vanished(path: newValue, seconds: s, keptIn: k, notKept: n, takenOut: t)
            case .contended(_, let s, let k, let n, let t): self = .contended(path: newValue, seconds: s, keptIn: k, notKept: n, takenOut: t)
            }
        }
    }

    /// Whether the write was refused because its bytes would not load (`Document.checkLoadable`):
    /// nothing was written, and the inputs are at fault, not the disk.
    public var resultWouldNotLoad: Bool {
        if case .file(let e, _) = self { e.resultWouldNotLoad } else { false }
    }

    /// The conflict copy this document was kept in instead of the file, if it was.
    public var keptIn: String? {
        switch self {
        case .replacedMeanwhile(_, _, let k, _, _), .failedAfterChange(_, let k, _, _), .vanished(_, _, let k, _, _), .contended(_, _, let k, _, _): k
        default: nil
        }
    }

    /// `FILE: what happened`, and where what was being written is kept.
    public var description: String { describe(mergedBy: nil) }

    /// `description`; when the write's change was left in a conflict copy because the file
    /// vanished or kept changing, it adds that `command` (the tools' `pnmerge sync`) merges it in.
    /// With `statingNotWritten`, a file error whose message does not say what became of the file
    /// (`FileError.aftermath` is `.unstated`) gets `; not written` after it.
    public func describe(mergedBy command: String?, statingNotWritten: Bool = false) -> String {
        func seconds(_ s: Double) -> String { s >= 1 ? "\(Int(s)) s" : "\(Int(s * 1_000)) ms" }
        func also(_ takenOut: [String]) -> String {
            takenOut.isEmpty ? "" : " (a version written meanwhile is kept as \(takenOut.joined(separator: ", ")))"
        }
        switch self {
        case .file(let e, let t):
            return e.description + (statingNotWritten && e.aftermath == .unstated ? "; not written" : "") + also(t)
        case .newerFormat(let path, let version):
            return "\(path): holds a notebook of format version \(version), newer than this library reads (\(Format.version)); not written"
        case .cannotReadHere(let path, let e):
            return "\(path): holds a notebook this process cannot read (\(e)); not written"
        case .cannotMergeNow(let path, let e):
            return "\(path): holds changes of this notebook that cannot be merged now (\(e)); not written"
        case .damagedNotKeptAside(let path, let damage, let e):
            return "\(path): holds a damaged notebook (\(damage)) that could not be kept aside (\(e.message)); not written"
        case .replacedMeanwhile(let path, let why, let keptIn, let notKept, let t):
            let what = why.map { "a file that cannot be merged (\($0))" } ?? "another notebook"
            return "\(path): " + Self.keptInstead("was replaced by \(what) while this was being written", keptIn, notKept) + also(t)
        case .failedAfterChange(let e, let keptIn, let notKept, let t):
            // A message that ends by saying the file was not written says instead where this went.
            let (problem, aftermath, note) = e.parts
            let reason = aftermath == .notWritten && note == nil ? problem : e.message
            return "\(e.path): " + Self.keptInstead(reason, keptIn, notKept) + also(t)
        case .vanished(let path, let s, let keptIn, let notKept, let t):
            let reason = "disappeared while this was being written (another program moved or deleted it) and did not come back in \(seconds(s))"
            if let keptIn { return "\(path): \(reason); what was being written is kept in \(keptIn) instead" + (command.map { " (\($0) merges it in)" } ?? "") + also(t) }
            return "\(path): \(reason), and this change could not be kept aside (\(notKept?.message ?? "")); not written" + also(t)
        case .contended(let path, let s, let keptIn, let notKept, let t):
            let reason = "other writers kept changing it for \(seconds(s)) while this was being written"
            if let keptIn {
                let merged = command.map { "\($0) merges it in; " } ?? ""
                return "\(path): \(reason); what was being written is kept in \(keptIn) instead (\(merged)it may be in the file already, so do not make it again)" + also(t)
            }
            return "\(path): \(reason), and it could not be kept aside (\(notKept?.message ?? "")); it may be in the file or not" + also(t)
        }
    }

    private static func keptInstead(_ reason: String, _ keptIn: String?, _ notKept: FileError?) -> String {
        if let keptIn { return "\(reason); what was being written is kept in \(keptIn) instead" }
        return "\(reason); not written (and it could not be kept aside: \(notKept?.message ?? ""))"
    }
}

extension WriteError: LocalizedError {
    public var errorDescription: String? { description }
}

extension Document {
    /// Writes the document over `path`, which held `loaded` when the document was read from it,
    /// without losing what another program wrote there in the meantime. This is the one write
    /// loop of the library: `write(to:)`, and the tools' `merge`, `compact`, `sync`, git driver
    /// and `peernote` edits all write through it. `saved`, when given, is what `save(mode)`
    /// returns now (so that a caller that already made it does not save twice).
    ///
    /// What it does when the file is not as it was read (docs/ROBUSTNESS.md, "Writers that
    /// share no lock", says the same for users):
    /// - **Changed** (another copy of this notebook, brought by a sync client or written by a
    ///   program that does not take `FileLock`): what it holds is merged into this document, and
    ///   the write is tried again after a short random wait, for as long as other writers keep
    ///   changing it, up to `FileStore.Contention.patience` seconds (`WriteOutcome.mergedMeanwhile`
    ///   counts the merges). Past that, this document is kept as a conflict copy beside the file
    ///   (`WriteError.contended`): its change may be in the file already.
    /// - **Changed twice** (two writers that share no lock took each other's file out, see
    ///   `FileStore.ReplaceOutcome.changedTwice`): the version taken out is merged in too, and its
    ///   kept copy removed once the write is in place, or made a conflict copy if it never is.
    /// - **Missing or moved away** (a sync client moves a file aside before putting another
    ///   device's copy in its place), **or emptied**: the write waits up to
    ///   `FileStore.Contention.missingPatience` seconds for a file to come back and merges what it
    ///   holds; a file that does not come back gets this document as a conflict copy beside where
    ///   it was (`WriteError.vanished`). An emptied file that stays empty is written over.
    /// - **Replaced by another notebook, by damaged bytes or by a newer format version**: not
    ///   written over; this document is kept as a conflict copy beside it
    ///   (`WriteError.replacedMeanwhile`).
    /// - **No longer a regular file, or a file operation fails after a change was merged**:
    ///   this document is kept as a conflict copy (`WriteError.failedAfterChange`); a failure with
    ///   nothing merged yet throws `WriteError.file`, with nothing written.
    ///
    /// A file that is missing, damaged or of a newer version *before* the write starts is
    /// `write(to:)`'s case (it reads the file itself).
    @discardableResult
    public func write(over path: String, loaded: [UInt8], mode: SaveMode = .incremental,
                      saved: [UInt8]? = nil) throws(WriteError) -> WriteOutcome {
        try write(over: path, loaded: loaded, mode: mode, saved: saved) { (bytes, expected) throws(FileError) in
            try FileStore.replace(bytes, at: path, expecting: expected)
        }
    }

    /// `write(over:loaded:mode:saved:)` with `replace` in place of `FileStore.replace` and a
    /// `patience` of its own (tests race writers through them).
    func write(over path: String, loaded: [UInt8], mode: SaveMode, saved: [UInt8]?,
               patience: Double = FileStore.Contention.patience,
               replace: ([UInt8], [UInt8]) throws(FileError) -> FileStore.ReplaceOutcome) throws(WriteError) -> WriteOutcome {
        var expected = loaded
        // Versions `replace` took out and kept aside, merged into this document: removed once it is written.
        var keptAside: [String] = []
        // What became of the versions taken out when the write fails: conflict copies.
        func takenOut() -> [String] { keptAside.map { FileStore.keepAsConflictCopy($0, of: path) } }
        // This document, kept as a conflict copy beside the file: its name, or why it could not be.
        func keepThisAside() -> (keptIn: String?, notKept: FileError?) {
            do throws(FileError) { return (try FileStore.keepAsConflictCopy(bytes: save(.compact), of: path), nil) } catch { return (nil, error) }
        }
        func mergeIn(_ bytes: [UInt8]) throws(WriteError) {
            do throws(PeerNoteError) {
                _ = try merge(Document.load(bytes))
            } catch {
                let why: PeerNoteError? = if case .unrelated = error { nil } else { error }
                let kept = keepThisAside()
                throw .replacedMeanwhile(path: path, why: why, keptIn: kept.keptIn, notKept: kept.notKept, takenOut: takenOut())
            }
        }
        var contention = FileStore.Contention(patience: patience)
        // While the file is missing (or empty): how long to wait for it to come back.
        var missing: FileStore.Contention?
        var merges = 0
        // Waits a moment for a file that is missing or empty to come back; merges it in when it
        // has, unless it came back as it was read (moved away and back: nothing to report).
        // False once the wait is over (`missingPatience`).
        func awaitFile() throws(WriteError) -> Bool {
            var wait = missing ?? FileStore.Contention(patience: min(patience, FileStore.Contention.missingPatience))
            guard wait.wait() else { return false }
            missing = wait
            if let now = try? FileStore.read(path), !now.isEmpty {
                if now != expected {
                    try mergeIn(now)
                    merges += 1
                }
                expected = now
                missing = nil
            }
            return true
        }
        while true {
            // Without the verified state, which the check takes (a copy here would make it copy the log).
            var fileBefore = persisted
            fileBefore?.verified = nil
            let bytes = bytesToWrite(mode: mode, saved: merges == 0 ? saved : nil)
            // No save that does not load is put in place: the file stays as it is. An appending
            // save is read from where the file as verified ends (`checkSaveLoads`).
            do throws(FileError) { try checkSaveLoads(bytes, writingTo: path) } catch {
                persisted = fileBefore
                throw .file(error, takenOut: takenOut())
            }
            let outcome: FileStore.ReplaceOutcome
            do { outcome = try replace(bytes, expected) } catch {
                // The file changed under this write (a version merged in, gone and back, or no
                // longer a file): what is in hand is more than anyone else holds.
                var st = stat()
                if merges > 0 || missing != nil || stat(path, &st) != 0 || (st.st_mode & S_IFMT) != S_IFREG {
                    let kept = keepThisAside()
                    throw .failedAfterChange(error, keptIn: kept.keptIn, notKept: kept.notKept, takenOut: takenOut())
                }
                throw .file(error, takenOut: takenOut())
            }
            switch outcome {
            case .replaced:
                for kept in keptAside { unlink(kept) }
                return WriteOutcome(byteCount: bytes.count, mergedMeanwhile: merges)
            case .changed(let current) where current.isEmpty:
                // Emptied (a program that rewrites a file in place truncates it first): waited for
                // as a missing file is; still empty after that, it holds nothing to keep, and the
                // next try writes over it.
                if try !awaitFile() {
                    expected = current
                    missing = nil
                }
                continue
            case .changed(let current):
                try mergeIn(current)
                expected = current
            case .changedTwice(let current, let displaced, let keptAt):
                keptAside.append(keptAt)
                try mergeIn(displaced)
                try mergeIn(current)
                expected = current
            case .missing:
                // Moved aside or deleted since it was read: wait for a file to come back, and
                // merge what it holds (written now, this change would be overwritten by it).
                guard try awaitFile() else {
                    let kept = keepThisAside()
                    throw .vanished(path: path, seconds: min(patience, FileStore.Contention.missingPatience),
                                    keptIn: kept.keptIn, notKept: kept.notKept, takenOut: takenOut())
                }
                continue
            }
            merges += 1
            guard contention.wait() else {
                // This document holds this change and every version taken out: those are removed
                // once it is kept (else they become conflict copies of their own).
                let kept = keepThisAside()
                if kept.keptIn != nil { for taken in keptAside { unlink(taken) } }
                throw .contended(path: path, seconds: patience, keptIn: kept.keptIn, notKept: kept.notKept,
                                 takenOut: kept.keptIn != nil ? [] : takenOut())
            }
            // The wait let other writers finish: start from what the file holds now.
            if let now = try? FileStore.read(path), now != expected {
                try mergeIn(now)
                expected = now
            }
        }
    }

    /// The bytes the write loop puts in place next: `saved` (the caller's save, first try only)
    /// or a save of this document as it now is. Every byte the loop writes over a notebook comes
    /// from here, and each is checked to load (`checkSaveLoads`) before anything is replaced.
    private func bytesToWrite(mode: SaveMode, saved: [UInt8]?) -> [UInt8] {
        saved ?? save(mode)
    }
}

/// What `Document.write(over:loaded:mode:)` did.
public struct WriteOutcome: Equatable, Sendable {
    /// The size of the file written.
    public var byteCount: Int
    /// How many times the file had changed since it was read (another program wrote it), so
    /// that what it then held was merged in before writing; almost always 0.
    public var mergedMeanwhile: Int
    /// Where the damaged notebook the file held was kept (`write(to:)`), if it held one: a
    /// conflict copy beside it, whose readable changes of this notebook are merged in already.
    /// Tell the user: `pnmerge salvage` may recover more from it by hand.
    public var keptDamaged: String? = nil
}
