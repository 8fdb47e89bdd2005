#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a folder sync could not start: a folder it was given cannot be searched. (Everything
/// that goes wrong once it has started is a `FolderSyncReport.Problem`: the rest still syncs.)
public enum FolderSyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A folder given does not exist or cannot be looked at.
    case rootUnreadable(FileError)
    /// A path given is not a folder.
    case rootNotAFolder(String)

    public var description: String {
        switch self {
        case .rootUnreadable(let e): e.description
        case .rootNotAFolder(let path): "\(path): is not a directory"
        }
    }
}

/// What `FolderSync.run` did (or, in a dry run, would do): per notebook, what became of each
/// copy and conflict copy, in note terms as a merge reports them; what was skipped; and the
/// problems, each of which left something as it was. Typed: the tools build their words from it.
public struct FolderSyncReport {
    /// The folders searched, as given.
    public var roots: [String]
    public var dryRun: Bool
    /// One per group of copies sharing history, in the order they were found.
    public var notebooks: [NotebookSync] = []
    public var skipped: [SkippedEntry] = []
    public var problems: [Problem] = []
    /// Copies found: .peernote files (those with names that are not UTF-8 included) and
    /// notebook folders, each folder counted once.
    public var filesFound = 0
    /// How many of `filesFound` are notebook folders.
    public var foldersFound = 0
    /// Copies written (or that would be).
    public var written = 0
    /// Copies that had every change already (those rewritten in the canonical form not counted).
    public var upToDate = 0
    /// Copies that had every change but not the bytes of another copy, rewritten in the
    /// canonical form (or that would be).
    public var rewritten = 0
    /// Conflict copies removed (or that would be).
    public var removed = 0
    /// Conflict copies kept.
    public var kept = 0
    /// Single-file notebooks found in folders a file-syncing service manages (nil when none):
    /// better kept as notebook folders, which such services never make conflict copies of.
    public var syncedFolder: SyncedFolderHint?
    /// What became of the files interrupted writes left beside the notebooks.
    public var leftovers: [Leftover] = []
    /// The single-file notebooks converted into notebook folders of the same name (`convert`),
    /// or that would be (a dry run: `keptFile` nil and `chunk` empty).
    public var conversions: [InPlaceConversion] = []
    /// The chunks and files notebook folders' readings skipped (damaged, half-synced, orphaned),
    /// one line each as `NotebookFolder.Reading.warnings` has them: never fatal, never removed.
    public var folderWarnings: [FolderWarning] = []

    /// One line a notebook folder's reading gave about a chunk or file it skipped.
    public struct FolderWarning: Equatable, Sendable {
        /// The notebook folder, as found.
        public var folder: String
        /// `FOLDER/NAME: why`.
        public var line: String
        /// When the line is about a damaged chunk whose chain up to it is intact: its file name
        /// (`pnmerge salvage FOLDER/NAME` recovers its intact part).
        public var damagedChunk: String?

        public init(folder: String, line: String, damagedChunk: String? = nil) {
            self.folder = folder
            self.line = line
            self.damagedChunk = damagedChunk
        }
    }
    /// How many of `leftovers` were (or would be) removed.
    public var leftoversRemoved: Int {
        leftovers.filter { if case .removed = $0 { true } else { false } }.count
    }

    public init(roots: [String], dryRun: Bool) {
        self.roots = roots
        self.dryRun = dryRun
    }

    /// One notebook (a group of copies sharing history) and what happened to its files.
    public struct NotebookSync {
        public var id: UUID
        public var title: String
        /// Copies (not conflict copies) merged.
        public var copies: Int
        /// Conflict copies merged.
        public var conflictCopies: Int
        /// The open conflicts of the merged notebook.
        public var conflicts: Int
        /// Copies written or up to date, conflict copies removed or kept, in the order done.
        public var actions: [Action] = []
    }

    /// What was done with one file of a notebook.
    public enum Action {
        /// A copy that lacked something was written (or, in a dry run, would be).
        case wrote(CopyUpdate)
        /// A copy that had every change was rewritten in the canonical form (or, in a dry run,
        /// would be: `bytesWritten` nil), so that it holds the same bytes as the other copies.
        case rewrote(path: String, bytesBefore: Int, bytesWritten: Int?, changedMeanwhile: Bool)
        /// A merged conflict copy was removed (or would be).
        case removed(path: String, tool: ConflictCopyMaker)
        /// A merged conflict copy was kept.
        case kept(path: String, why: KeptReason)
        /// A merged conflict copy was gone when it was to be removed (another run removed it).
        case goneMeanwhile(path: String)
    }

    /// What one copy received: the changes, the notes they touched, the conflicts and the
    /// places to check that are new to that copy (as `pnmerge merge` reports them for MINE).
    public struct CopyUpdate {
        public var path: String
        /// Whether the copy is a notebook folder, which gains one chunk (`chunk`, nil in a dry
        /// run); `bytesBefore` is then its valid chunks' bytes, `bytesWritten` the new chunk's.
        public var isFolder = false
        public var chunk: String?
        /// The changes the copy lacked, by author.
        public var changesByAuthor: [(author: String, count: Int)]
        public var changes: Int { changesByAuthor.reduce(0) { $0 + $1.count } }
        /// The copy's size as read, and as written (nil in a dry run).
        public var bytesBefore: Int
        public var bytesWritten: Int?
        /// Whether the file changed while sync ran (another program wrote it): what it then
        /// held was merged in too, and other copies lack it until the next sync.
        public var changedMeanwhile = false
        /// The copy's notebook before, to the merged one.
        public var diff: NotebookDiff
        /// The merged notebook's id, title and conflicts, for the conflict lines; its notes,
        /// without bodies, only when a conflict of concurrent moves is among them (for its
        /// positions: `Document.notebook(forConflicts:)`).
        public var notebook: Notebook
        /// Every open conflict of the merged notebook, and those the copy had as read (a
        /// report lists those new to it).
        public var conflicts: [Conflict]
        public var conflictsBefore: [Conflict]
        /// Places in note bodies where this merge met both sides' text edits.
        public var overlaps: [TextOverlap]
    }

    /// Why a merged conflict copy was kept.
    public enum KeptReason: Equatable, Sendable {
        /// The caller asked to keep conflict copies.
        case keepRequested
        /// The notebook beside it (`original`) is a different notebook.
        case besideIsDifferent(original: String)
        /// The notebook beside it could not be read or is damaged.
        case besideUnreadable(original: String)
        /// The notebook beside it was left alone (unrelated, or could not be written).
        case besideLeftAlone(original: String)
        /// The notebook's name beside it is a symbolic link, not followed.
        case besideIsLink(original: String, toFolder: Bool)
        /// There is no notebook beside it; its changes went to the other copies.
        case noOriginal(original: String)
        /// There is no notebook beside it, and no other copy: its changes are only in it.
        case noOriginalNorCopy(original: String)
        /// It is read-only (its changes are merged).
        case readOnly
        /// It changed while syncing.
        case changedMeanwhile
    }

    /// What became of one file an interrupted write left beside a notebook.
    public enum Leftover: Equatable, Sendable {
        /// Removed (or would be): its changes are all in the notebook, or it held nothing.
        case removed(path: String)
        /// Held changes `notebook` lacks, so it was made a conflict copy (`to`; nil in a dry run), merged then.
        case madeConflictCopy(from: String, to: String?, notebook: String)
        /// Left: a write in progress, or less than 10 seconds old.
        case left(path: String)
        /// Not looked at: another program holds `notebook`'s lock now.
        case notebookLocked(notebook: String)
    }

    /// Something left as it was, and why; `kind` orders them for an exit status.
    public enum Problem {
        /// A .peernote file or folder whose name is not valid UTF-8.
        case nameNotUTF8(SkippedEntry)
        /// A file that could not be read.
        case unreadable(path: String, FileError)
        /// A file that does not load (damaged), or a copy whose changes cannot be merged into the rest.
        case damaged(path: String, PeerNoteError)
        /// Two copies of one name or group that share no history (`relation`): `other` was
        /// left alone (`samePlace`: found at the same place in two folders, neither merged).
        case unrelated(first: String, firstID: UUID, other: String, otherID: UUID, relation: HistoryRelation, samePlace: Bool)
        /// A conflict copy of `original` that is a different notebook than the one there.
        case conflictCopyOfOther(path: String, tool: ConflictCopyMaker, original: String, id: UUID, otherID: UUID)
        /// The lock of a copy could not be taken (nothing written), or the lock of a notebook
        /// whose leftovers were to be cleaned up (`leftovers`).
        case lockFailed(FileError, leftovers: Bool)
        /// A copy could not be written.
        case writeFailed(WriteError)
        /// A merged conflict copy could not be removed (`strerror`'s text).
        case removeFailed(path: String, String)
        /// A single-file notebook could not be converted into a notebook folder (it is left as it was).
        case convertFailed(FileError)

        /// How serious it is, for an exit status.
        public enum Kind: Comparable, Sendable { case unrelated, unreadable, damaged, writeFailed }

        public var kind: Kind {
            switch self {
            case .nameNotUTF8, .unreadable: .unreadable
            case .damaged: .damaged
            case .unrelated, .conflictCopyOfOther: .unrelated
            case .lockFailed, .removeFailed, .convertFailed: .writeFailed
            case .writeFailed(let e):
                switch e {
                case .replacedMeanwhile(_, nil, _, _, _): .unrelated
                case .replacedMeanwhile: .damaged
                default: .writeFailed
                }
            }
        }
    }
}
