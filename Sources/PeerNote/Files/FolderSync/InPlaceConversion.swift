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

/// A single-file notebook turned into a notebook folder of the same name (`pnmerge sync
/// --convert`): links, habits and other devices' sync setups name the file, so the name stays.
///
/// Invariants: the file's name always leads to the file or to a complete, verified folder (the
/// two are exchanged in one step where the file system can; elsewhere the name is missing for
/// the moment between two renames); the file is kept, hidden, as `.NAME.converted-YYYY-MM-DD`
/// until the folder at NAME has been read back and holds every change it held, and is kept
/// for good if that cannot be shown. The caller holds the notebook's lock (`FileLock(for:)`).
public struct InPlaceConversion: Equatable, Sendable {
    /// The notebook's path: a file before, a notebook folder after.
    public var path: String
    /// The folder's root chunk (this device's).
    public var chunk: String
    /// Where the old file is kept: nil once it was removed (the folder holds all of it).
    public var keptFile: String?
    /// Changes a sync client wrote into the file after it was read, added to the folder as one more chunk.
    public var addedLate: Bool

    /// Converts the single-file notebook at `path` in place, written as `device`; `date`
    /// (YYYY-MM-DD) names the kept file. Throws, with nothing changed at `path`, when the file
    /// cannot be read or does not load, changes while the folder is made, or the folder cannot
    /// be made and verified beside it.
    public static func convert(_ path: String, device: String = NotebookFolder.deviceTag, date: String) throws(FileError) -> InPlaceConversion {
        let bytes = try FileStore.read(path)
        let document: Document
        do { document = try Document.load(bytes) } catch {
            throw .doesNotLoad(path: path, error)
        }
        let folder = FolderSync.folder(of: path)
        let name = String(path.split(separator: "/").last ?? Substring(path))
        let dir = folder.isEmpty ? "." : folder
        // 1. The folder, complete and verified, under a hidden name beside the file.
        var template = Array("\(dir)/.\(name).converting-\(device)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> UnsafeMutablePointer<CChar>? in
            guard let base = buffer.baseAddress else { return nil }
            return mkdtemp(base)
        }
        guard let made else {
            throw .conversionFailed(path: path, .folderNotMade(errno: errno))
        }
        let staging = String(cString: made)
        func abandon(_ step: FileError.ConversionStep) -> FileError {
            removeTree(staging)
            return .conversionFailed(path: path, step)
        }
        let added: NotebookFolder.Added
        do { added = try NotebookFolder(staging, device: device).add(document, autoCompact: false) } catch {
            throw abandon(.folderNotWritten(error))
        }
        guard let chunk = added.chunk, holds(staging, all: document) else {
            throw abandon(.readBackIncomplete)
        }
        // 2. Still the file that was read (a sync client takes no lock)?
        guard (try? FileStore.read(path)) == bytes else {
            throw abandon(.changedMeanwhile)
        }
        // 3. The folder takes the name; the file moves aside, hidden.
        var kept = "\(dir)/.\(name).converted-\(date)"
        var n = 1
        var st = stat()
        while lstat(kept, &st) == 0 { n += 1; kept = "\(dir)/.\(name).converted-\(date)-\(n)" }
        if peernote_exchange_files(staging, path) == 0 {
            if rename(staging, kept) != 0 {
                // The file is safe under the staging name; say where.
                return InPlaceConversion(path: path, chunk: chunk, keptFile: staging, addedLate: false)
            }
        } else {
            guard rename(path, kept) == 0 else { throw abandon(.notMovedAside(errno: errno)) }
            guard rename(staging, path) == 0 else {
                let why = errno
                _ = rename(kept, path)
                throw abandon(.notPutInPlace(errno: why))
            }
        }
        FileStore.syncDirectory(of: path)
        // 4. What a sync client wrote into the file between step 2 and the exchange is added as
        // one more chunk; the file goes only once the folder is read back holding all of it.
        var late = false
        guard let keptBytes = try? FileStore.read(kept), let keptDocument = try? Document.load(keptBytes) else {
            return InPlaceConversion(path: path, chunk: chunk, keptFile: kept, addedLate: false)
        }
        if keptBytes != bytes {
            do {
                let reading = try NotebookFolder(path, device: device).read()
                _ = try reading.document.merge(keptDocument)
                try NotebookFolder(path, device: device).add(reading.document, autoCompact: false)
                late = true
            } catch {
                return InPlaceConversion(path: path, chunk: chunk, keptFile: kept, addedLate: false)
            }
        }
        guard holds(path, all: keptDocument), unlink(kept) == 0 else {
            return InPlaceConversion(path: path, chunk: chunk, keptFile: kept, addedLate: late)
        }
        FileStore.syncDirectory(of: path)
        return InPlaceConversion(path: path, chunk: chunk, keptFile: nil, addedLate: late)
    }

    /// Today's date in UTC, `YYYY-MM-DD`, for the kept file's name.
    public static func today() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }

    /// Whether the notebook folder at `folder` reads with no chunk skipped and holds every change of `document`.
    private static func holds(_ folder: String, all document: Document) -> Bool {
        guard let reading = try? NotebookFolder(folder).read(), reading.warnings.isEmpty else { return false }
        return NotebookFolder.holdsAll(reading.document, of: document)
    }

    /// Removes the staging folder this conversion made (its files and itself; nothing else is in it).
    private static func removeTree(_ dir: String) {
        if let stream = opendir(dir) {
            var names: [String] = []
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(stream)
            for name in names { unlink("\(dir)/\(name)") }
        }
        rmdir(dir)
    }
}
