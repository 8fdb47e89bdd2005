#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote

/// A notebook's visible content without its history: what `export` writes and `import` reads.
public struct NotebookContent: Equatable, Sendable {
    public var title: String
    public var notes: [NoteContent]

    public init(title: String, notes: [NoteContent]) {
        self.title = title
        self.notes = notes
    }

    /// The content of a document's live notes, in order.
    public init(_ notebook: Notebook) {
        self.init(title: notebook.title, notes: notebook.notes.map(NoteContent.init))
    }

    /// A new document holding this content: one genesis change, then one change adding every
    /// note, each created when its `created` says (now when nil; never after the change).
    public func makeDocument(author: String, message: String) -> Document {
        let document = Document(title: title, author: author)
        if !notes.isEmpty {
            document.transaction(message: message) {
                for note in notes {
                    document.addNote(title: note.title, body: note.body, tags: note.tags, priority: note.priority, created: note.created)
                }
            }
        }
        return document
    }
}

/// One note's content: the parts export and import keep.
public struct NoteContent: Equatable, Sendable {
    public var title: String
    public var body: String
    /// Sorted, without duplicates.
    public var tags: [String]
    public var priority: Priority
    /// When the note was created, in whole seconds; nil when the source did not say (an import
    /// then dates the note now).
    public var created: Date?

    public init(title: String, body: String = "", tags: [String] = [], priority: Priority = .normal, created: Date? = nil) {
        self.title = title
        self.body = body
        self.tags = tags.uniquedByScalars().sortedByScalars()
        self.priority = priority
        self.created = created
    }

    public init(_ note: Note) {
        self.init(title: note.title, body: note.body, tags: note.tags, priority: note.priority, created: note.created)
    }
}

/// Why an import source could not be read as a notebook.
public struct ImportError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

// Titles, bodies and tags compared by their exact Unicode scalars, as the library compares
// them (the synthesized == would call canonically equivalent spellings equal).
extension NotebookContent {
    public static func == (a: NotebookContent, b: NotebookContent) -> Bool {
        a.title.hasSameScalars(as: b.title) && a.notes == b.notes
    }
}

extension NoteContent {
    public static func == (a: NoteContent, b: NoteContent) -> Bool {
        a.title.hasSameScalars(as: b.title) && a.body.hasSameScalars(as: b.body)
            && a.tags.map(ExactString.init) == b.tags.map(ExactString.init) && a.priority == b.priority
            && a.created == b.created
    }
}
