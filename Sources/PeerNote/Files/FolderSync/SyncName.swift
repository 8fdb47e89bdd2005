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

/// What a file name says about a file for a folder sync (`FolderSync`): a notebook, a conflict
/// copy a sync tool left beside one, or neither.
public enum SyncName: Equatable, Sendable {
    /// `NAME.peernote`.
    case notebook
    /// A copy a sync tool made when two devices changed `original` (a name in the same folder).
    case conflictCopy(original: String, tool: ConflictCopyMaker)

    /// Classifies a file name (not a path); nil when it is not a .peernote name.
    ///
    /// - Syncthing: `NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.peernote`
    /// - Dropbox: `NAME (Someone's conflicted copy YYYY-MM-DD).peernote`; Nextcloud: `NAME (conflicted copy YYYY-MM-DD HHMMSS).peernote`
    /// - Nextcloud before 3.x: `NAME_conflict-YYYYMMDD-HHMMSS.peernote`
    /// - Unison (`copyonconflict`): `NAME (conflict_on_YYYY-MM-DD).peernote`, `NAME (conflict #1_on_…)`
    /// - rsync `--backup`: `NAME.peernote~`
    ///
    /// A copy of a conflict copy (two devices changed the conflict copy itself: Syncthing names
    /// it `NAME.sync-conflict-A.sync-conflict-B.peernote`, syncthing issue #1658; a Dropbox copy of
    /// a Syncthing copy, an rsync backup of either, a backup of a backup `NAME.peernote~~`) carries
    /// every marker: all are stripped, so `original` is always the notebook's own name. `tool`
    /// names the outermost marker, the tool that made this file.
    public static func classify(_ name: String) -> SyncName? {
        guard let outer = peel(name) else {
            let ext = ".peernote"
            return name.hasSuffix(ext) && name.count > ext.count ? .notebook : nil
        }
        // Each step strips a marker, so the name gets shorter and the loop ends.
        var original = outer.original
        while let inner = peel(original) { original = inner.original }
        return .conflictCopy(original: original, tool: outer.tool)
    }

    /// Classifies a file name inside a notebook folder: a sync tool's conflict copy of a chunk
    /// file (`PARENT.OWN.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.pnchunk`, the other tools' names as
    /// for notebooks, `….pnchunk~`), with `original` the chunk's own name; nil for anything else,
    /// chunks themselves included. A copy of a chunk under a name that does not strip to a chunk's
    /// name is not one.
    public static func classifyChunk(_ name: String) -> SyncName? {
        let chunk = NotebookFolder.chunkSuffix, notebook = ".peernote"
        var stem = Substring(name)
        var tildes = 0
        while stem.hasSuffix("~") { stem = stem.dropLast(); tildes += 1 }
        guard stem.hasSuffix(chunk) else { return nil }
        // The same markers as for notebooks: classified under the notebook extension.
        let asNotebook = String(stem.dropLast(chunk.count)) + notebook + String(repeating: "~", count: tildes)
        guard case .conflictCopy(let original, let tool)? = classify(asNotebook), original.hasSuffix(notebook) else { return nil }
        let chunkName = String(original.dropLast(notebook.count)) + chunk
        guard NotebookFolder.ChunkName(chunkName) != nil else { return nil }
        return .conflictCopy(original: chunkName, tool: tool)
    }

    /// The name one conflict marker was added to, and the tool that adds it; nil when `name`
    /// carries none (a notebook's name, or not a .peernote name).
    private static func peel(_ name: String) -> (original: String, tool: ConflictCopyMaker)? {
        let ext = ".peernote"
        if name.hasSuffix("~") {
            // rsync --backup's copy of a .peernote name (a notebook, a conflict copy, or another backup).
            let original = String(name.dropLast())
            return classify(original) != nil ? (original, .rsyncBackup) : nil
        }
        guard name.hasSuffix(ext), name.count > ext.count else { return nil }
        let stem = String(name.dropLast(ext.count))
        if let base = match(stem, #/(.+)\.sync-conflict-[0-9]{8}-[0-9]{6}-[A-Za-z0-9]+/#) {
            // pnmerge and peernote name a version they found mid-write and kept aside (see
            // FileStore.cleanUpLeftovers) with Syncthing's pattern and device "peernote"
            // ("peernote2" and on for a second one in the same second).
            let keptAside = stem.wholeMatch(of: #/.*-peernote[0-9]*/#) != nil
            return (base + ext, keptAside ? .keptAside : .syncthing)
        }
        if let base = match(stem, #/(.+)_conflict-[0-9]{8}-[0-9]{6}/#) {
            return (base + ext, .nextcloud)
        }
        if let (base, inner) = parenthesized(stem) {
            let lower = inner.lowercased()
            let dated = lower.contains(#/[0-9]{4}-[0-9]{2}-[0-9]{2}/#)
            if dated && lower.contains("conflicted copy") {
                return (base + ext, .dropboxOrNextcloud)
            }
            if dated && lower.hasPrefix("conflict") {
                return (base + ext, .unison)
            }
        }
        return nil
    }

    /// The first capture group when `pattern` matches all of `text`.
    private static func match(_ text: String, _ pattern: Regex<(Substring, Substring)>) -> String? {
        text.wholeMatch(of: pattern).map { String($0.output.1) }
    }

    /// `NAME (INNER)` split at the outermost final parenthesis that holds "conflict": (NAME, INNER).
    /// INNER may itself hold parentheses (Dropbox adds ` (1)` to repeated copies).
    private static func parenthesized(_ stem: String) -> (String, String)? {
        guard stem.hasSuffix(")") else { return nil }
        var search = stem.startIndex ..< stem.endIndex
        while let open = stem[search].ranges(of: " (").last {
            let inner = String(stem[open.upperBound ..< stem.index(before: stem.endIndex)])
            let base = String(stem[..<open.lowerBound])
            if !base.isEmpty && inner.lowercased().contains("conflict") { return (base, inner) }
            search = stem.startIndex ..< open.lowerBound
        }
        return nil
    }
}

/// Who made a conflict copy, as its name says; `description` names it in words.
public enum ConflictCopyMaker: String, Equatable, Sendable, CustomStringConvertible {
    case syncthing = "Syncthing conflict copy"
    /// pnmerge or peernote, for a version a write found and could not put in place (`FileStore.keep`).
    case keptAside = "copy kept aside by an interrupted write"
    case nextcloud = "Nextcloud conflict copy"
    case dropboxOrNextcloud = "Dropbox/Nextcloud conflicted copy"
    case unison = "Unison conflict copy"
    case rsyncBackup = "rsync backup"

    public var description: String { rawValue }
}
