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

extension Document {
    /// Loads a document from a file; errors name the file. (`path` is always a file name: `-`
    /// is the file named `-`, not standard input.) `author` is recorded on the changes made
    /// through the document (`author`); a loaded document has none until it is set. A notebook
    /// folder (`NotebookFolder.isFolder`) is read as `NotebookFolder.read()` reads it, its
    /// skipped chunks left out silently (`read()` names them).
    public static func open(_ path: String, author: String = "") throws(DocumentFileError) -> Document {
        if NotebookFolder.isFolder(path) {
            let document = try NotebookFolder(path).read().document
            if !author.isEmpty { document.author = author }
            return document
        }
        let bytes: [UInt8]
        do { bytes = try FileStore.read(path) } catch { throw .file(error) }
        let document: Document
        do { document = try load(bytes) } catch { throw .document(path: path, error) }
        if !author.isEmpty { document.author = author }
        return document
    }

    /// Writes the document to `path` atomically, without losing what the file holds: when it
    /// holds a copy of this notebook with changes this document lacks (another device's edits,
    /// brought by a sync client since the document was read, or another program's), they are
    /// merged into this document first, and written with it (`mergedMeanwhile` then counts the
    /// merges; read the document again to show them). A file that does not load (a damaged
    /// notebook, `pnmerge salvage`'s case, or other bytes) is not lost either: the changes of
    /// this notebook that can be read from it are merged in the same way, and its bytes are kept
    /// beside it as a conflict copy, named by `WriteOutcome.keptDamaged`. A file of a newer
    /// format version is not replaced (the write throws). Another notebook is replaced, as
    /// "Save As" replaces it: check first where that must not happen. An empty or missing file
    /// is written.
    ///
    /// `.incremental` (the default) appends the changes since the file was read or last saved,
    /// so sync tools move little; `Document.readNotebook`'s fast path needs a compact file
    /// (`.compact`, or `pnmerge compact`).
    ///
    /// A notebook folder (`NotebookFolder.isFolder`) gets one new chunk holding what the chain
    /// the document was read from lacks (`NotebookFolder.add`); nothing in it is replaced, and
    /// `mode` does not apply.
    @discardableResult
    public func write(to path: String, mode: SaveMode = .incremental) throws(WriteError) -> WriteOutcome {
        if NotebookFolder.isFolder(path) {
            do {
                let added = try NotebookFolder(path).add(self)
                return WriteOutcome(byteCount: added.byteCount, mergedMeanwhile: 0)
            } catch { throw .file(error, takenOut: []) }
        }
        guard let current = try? FileStore.read(path) else {
            let bytes: [UInt8]
            do {
                bytes = try loadableSave(mode, writingTo: path)
                try FileStore.writeAtomically(bytes, to: path)
            } catch { throw .file(error, takenOut: []) }
            return WriteOutcome(byteCount: bytes.count, mergedMeanwhile: 0)
        }
        var merged = 0
        var keptDamaged: String?
        if current != persisted?.bytes {
            func mergeFound(_ other: Document) throws(WriteError) {
                guard other.id == id else { return }
                do throws(PeerNoteError) {
                    if try !merge(other).isUpToDate { merged = 1 }
                } catch {
                    // Another notebook that happens to share the id (no shared history) is replaced;
                    // anything else (a transaction is open) must not be overwritten.
                    if case .unrelated = error {} else {
                        throw .cannotMergeNow(path: path, error)
                    }
                }
            }
            switch Result(catching: { () throws(PeerNoteError) in try Document.load(current) }) {
            case .success(let other):
                try mergeFound(other)
            case .failure(.unsupportedVersion(let version)):
                throw .newerFormat(path: path, version: version)
            case .failure(let error) where Self.unreadableHere(error) != nil:
                throw .cannotReadHere(path: path, error)
            case .failure(let damage) where !current.isEmpty:
                // A damaged notebook (a sync client that stopped mid-copy, a bad disk; its first
                // bytes too): its intact changes, if it is this notebook, are merged in, and its
                // bytes are kept beside it (`keptDamaged`), so that nothing it held is lost by
                // writing over it. Bytes that are no notebook at all are kept the same way: a
                // damaged one cannot always be told from them.
                if let rescued = try? Document.salvage(current).document { try mergeFound(rescued) }
                do { keptDamaged = try FileStore.keepAsConflictCopy(bytes: current, of: path) } catch {
                    throw .damagedNotKeptAside(path: path, damage: damage, error)
                }
            case .failure:
                break
            }
        }
        var outcome = try write(over: path, loaded: current, mode: mode)
        outcome.mergedMeanwhile += merged
        outcome.keptDamaged = keptDamaged
        return outcome
    }

    /// Why a file whose load failed with `error` holds a notebook this library must not write
    /// over, though it is not damaged: a newer writer's format (replacing it would throw away what
    /// this one cannot read), or one too large for this process's memory. Nil for damage.
    package static func unreadableHere(_ error: PeerNoteError) -> String? {
        switch error {
        case .unsupportedVersion(let version):
            "holds a notebook of format version \(version), newer than this library reads (\(Format.version))"
        case .needsMoreMemory:
            "holds a notebook this process cannot read (\(error))"
        default:
            nil
        }
    }
}
