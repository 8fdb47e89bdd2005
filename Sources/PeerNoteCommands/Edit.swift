import ArgumentParser
import PeerNote
import PeerNoteCLISupport

extension PeerNoteCLI {
    /// `peernote edit FILE NOTE …`: changes a note's title, body, tags and priority in one change.
    struct Edit: PeerNoteSubcommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change a note's title, body, tags or priority.",
            discussion: """
                All the changes given are recorded as one change. A new body is compared with the \
                current one and recorded as the characters inserted and deleted, so edits made \
                meanwhile to other copies still merge. --editor opens the whole note in $VISUAL, \
                else $EDITOR, else vi: a header (Title:, Tags:, Priority:), an empty line, then the \
                body; each part changed is recorded as its own kind of edit (--title, --add-tag, \
                --remove-tag and --priority given with it fill the header in). Nothing is recorded \
                when the editor fails or nothing changed.
                """
        )

        @Argument(help: ArgumentHelp("The .peernote file.", valueName: "FILE"), completion: .file(extensions: ["peernote"]))
        var file: String

        @Argument(help: ArgumentHelp("The note: its id, a unique prefix of its id, or its exact title.", valueName: "NOTE"), completion: NoteCompletion.kind)
        var note: String

        @Option(parsing: .unconditional, help: ArgumentHelp("The note's new title.", valueName: "TITLE"))
        var title: String?

        @OptionGroup var body: BodyOptions

        @Flag(help: "Edit the whole note (a header with its title, tags and priority, then its body) with $VISUAL or $EDITOR.")
        var editor = false

        @Option(name: .customLong("add-tag"), parsing: .unconditionalSingleValue, help: ArgumentHelp("Add tag TAG (repeatable).", valueName: "TAG"))
        var addTags: [String] = []

        @Option(name: .customLong("remove-tag"), parsing: .unconditionalSingleValue, help: ArgumentHelp("Remove tag TAG (repeatable).", valueName: "TAG"))
        var removeTags: [String] = []

        @Option(help: ArgumentHelp("The note's new priority.", valueName: "low|normal|high"))
        var priority: PriorityArgument?

        @OptionGroup var author: AuthorOptions
        @OptionGroup var message: MessageOptions

        func validate() throws {
            if editor && (body.body != nil || body.bodyFile != nil) {
                throw ValidationError("Give --editor, --body or --body-file, not several.")
            }
            if title == nil && body.body == nil && body.bodyFile == nil && !editor && addTags.isEmpty && removeTags.isEmpty && priority == nil {
                throw ValidationError("Nothing to change: give --title, --body, --body-file, --editor, --add-tag, --remove-tag or --priority.")
            }
            // An empty tag cannot be added here; one that an import brought in can be removed.
            if addTags.contains(where: \.isEmpty) { throw ValidationError("--add-tag: a tag cannot be empty.") }
            if let both = addTags.first(where: removeTags.containsScalars(of:)) {
                throw ValidationError("Tag '\(both)' is both added and removed.")
            }
        }

        func execute() throws {
            let author = try author.resolved()
            if editor { return try executeWithEditor(author: author) }
            // FILE's spelling first: a body read from a terminal or a pipe is not typed in vain.
            try DocumentFile.requireName(file)
            let newBody = try body.text()
            var warning: String?
            var tagNotices: [String] = []
            var closed: [String] = []
            let changed = try DocumentFile.update(file, author: author) { document in
                let target = try NoteLookup.find(note, in: document, path: file)
                try checkRemovedTags(of: target)
                tagNotices = unchangedTags(of: target)
                let before = document.conflicts(of: target.id)
                try apply(to: document, target, body: newBody)
                closed = ConflictListing.closed(before, document.conflicts(of: target.id), note: target, in: document, path: file)
                warning = title.flatMap { sharedTitleWarning(renaming: target, to: $0, in: document) }
            }
            for line in tagNotices + closed { Failure.report(line) }
            if !changed { Failure.report("\(file): no changes; nothing recorded") }
            if let warning { Failure.report(warning) }
        }

        /// A line for each --add-tag of a tag `target` already has and each --remove-tag of one it
        /// lacks (matched by exact scalars, as the edit is): those change nothing, and saying
        /// nothing would hide a typo. Not an error (exit 0), as `restore` of a live note is not:
        /// the note already is as asked.
        func unchangedTags(of target: Note) -> [String] {
            let note = "note \(target.id.short) \"\(DisplayText.oneLine(target.title))\""
            var lines: [String] = []
            var seen: [String] = []
            for tag in addTags where target.tags.containsScalars(of: tag) && !seen.containsScalars(of: tag) {
                seen.append(tag)
                lines.append("\(file): \(note) already has tag \"\(DisplayText.oneLine(tag))\"; not added again")
            }
            seen = []
            for tag in removeTags where !target.tags.containsScalars(of: tag) && !seen.containsScalars(of: tag) {
                seen.append(tag)
                lines.append("\(file): \(note) has no tag \"\(DisplayText.oneLine(tag))\"; nothing to remove")
            }
            return lines
        }

        /// When the edit gave `target` (as it was before this edit) a new title, `title`, that other
        /// live notes have in `document` (after it, the note still live), the warning that the
        /// title no longer names one note.
        func sharedTitleWarning(renaming target: Note, to title: String, in document: Document) -> String? {
            guard !target.title.hasSameScalars(as: title), let now = document.note(target.id),
                  !now.isDeleted, now.title.hasSameScalars(as: title) else { return nil }
            return NoteLookup.sharedTitleWarning(title, of: target.id, in: document, path: file)
        }

        /// Tags are compared by their exact Unicode scalars: removing "café" typed as "e" and
        /// U+0301 does not remove a tag stored as U+00E9. Rather than record nothing and say
        /// nothing, refuses a --remove-tag that only tags spelled in other scalars match,
        /// naming every stored spelling (at most ten).
        func checkRemovedTags(of target: Note) throws(CLIFailure) {
            for tag in removeTags where !target.tags.containsScalars(of: tag) {
                let stored = target.tags.filter { DisplayText.hasLookAlike(tag, among: [$0]) }
                guard let first = stored.first else { continue }
                let given = "\(file): note \(target.id.short) has no tag \"\(DisplayText.oneLine(tag))\" as given (\(DisplayText.scalars(tag)))"
                if stored.count == 1 {
                    throw CLIFailure(.usage, "\(given); it has \"\(DisplayText.oneLine(first))\" (\(DisplayText.scalars(first))), the same text in other Unicode scalars, and tags are matched scalar by scalar: give --remove-tag the tag as stored, \(ShellQuote.word(first))")
                }
                let listed = NoteLookup.lookAlikeList(stored) { "\"\(DisplayText.oneLine($0))\" (\(DisplayText.scalars($0)))" }
                throw CLIFailure(.usage, "\(given); it has \(stored.count) tags that are the same text in other Unicode scalars: \(listed); tags are matched scalar by scalar: give --remove-tag one of them as stored")
            }
        }

        /// Records every requested edit of `target` as one change.
        func apply(to document: Document, _ target: Note, body newBody: String?) throws {
            try document.transaction(message: message.or("Edit \"\(target.title)\"")) {
                if let title { try document.setNoteTitle(target.id, title) }
                if let newBody { try document.setBody(target.id, newBody) }
                for tag in addTags { try document.addTag(target.id, tag) }
                for tag in removeTags { try document.removeTag(target.id, tag) }
                if let priority { try document.setPriority(target.id, priority.priority) }
            }
        }

        /// The header the editor opens with: the note's title, tags and priority, with what
        /// --title, --add-tag, --remove-tag and --priority ask for already applied.
        func prefilledHeader(of target: Note) -> NoteHeader {
            var tags = target.tags.filter { !removeTags.containsScalars(of: $0) }
            for tag in addTags where !tags.containsScalars(of: tag) { tags.append(tag) }
            return NoteHeader(title: title ?? target.title, tags: tags, priority: priority?.priority ?? target.priority)
        }

        /// The editor may stay open for long, so the file is not locked meanwhile: the edit is
        /// made on the document as it was read, then merged, under the lock, into the file as it
        /// is by then, so changes other commands made in the meantime are kept.
        private func executeWithEditor(author: String) throws {
            // Checked first (a file that can be written back), then read by the name given, so
            // that messages name it as the user typed it.
            _ = try DocumentFile.editablePath(file)
            let snapshot = try DocumentFile.open(file)
            snapshot.author = author
            let target = try NoteLookup.find(note, in: snapshot, path: file)
            try checkRemovedTags(of: target)
            let tagNotices = unchangedTags(of: target)
            let header = prefilledHeader(of: target)
            let session = try EditorSession(text: header.render(body: target.body), notebook: file)
            let ran: Duration
            do { ran = try session.run() } catch {
                // Text typed before the editor failed (vim exits 1 after :wq when a command
                // failed) is kept; an untouched file is not, nor what is not a file at all.
                guard session.isRegularFile else {
                    let left = session.removeLeftover()
                    throw CLIFailure(error.status, error.message + left)
                }
                guard session.wasChanged else {
                    session.remove()
                    throw error
                }
                throw CLIFailure(error.status, error.message + " (the edited text is kept in \(session.file))")
            }
            var edited: String
            do { edited = try session.read() } catch {
                // When the editor removed the file, or left something else in its place (a FIFO,
                // a folder), there is no text kept to point to; a FIFO is removed.
                guard session.isRegularFile else {
                    let left = session.removeLeftover()
                    throw CLIFailure(error.status, error.message + left)
                }
                throw CLIFailure(error.status, error.message + " (the edited text is kept in \(session.file))")
            }
            let fields: NoteHeader.Edited
            do { fields = try header.parse(edited) } catch {
                throw CLIFailure(.invalidInput, "\(file): the edited text: \(error.message); nothing was recorded (the edited text is kept in \(session.file))")
            }
            edited = Self.droppingAddedLineBreak(fields.body, original: target.body)
            let newTitle = fields.title ?? header.title
            let before = snapshot.changeCount
            do {
                try snapshot.transaction(message: message.or("Edit \"\(target.title)\"")) {
                    // Only what the header or an option changed: writing a value again would settle a conflict.
                    if fields.title != nil || title != nil { try snapshot.setNoteTitle(target.id, newTitle) }
                    try snapshot.setBody(target.id, edited)
                    let tags = fields.tags ?? header.tags
                    for tag in tags where !tag.isEmpty && !target.tags.containsScalars(of: tag) { try snapshot.addTag(target.id, tag) }
                    for tag in target.tags where !tags.containsScalars(of: tag) { try snapshot.removeTag(target.id, tag) }
                    if let p = fields.priority ?? priority?.priority { try snapshot.setPriority(target.id, p) }
                }
            } catch let error as PeerNoteError {
                session.remove()
                throw CLIFailure(error, path: file)
            }
            for line in tagNotices { Failure.report(line) }
            guard snapshot.changeCount != before else {
                let untouched = !session.wasChanged
                session.remove()
                Failure.report("\(file): no changes; nothing recorded")
                if untouched && ran < EditorSession.returnedAtOnce { Failure.report(session.returnedAtOnceHint) }
                return
            }
            var notices: [String] = []
            do {
                try DocumentFile.update(file, author: author) { current in
                    let bodyMeanwhile = current.note(target.id)?.body
                    let before = current.conflicts(of: target.id)
                    try current.merge(snapshot)
                    notices = Self.notices(after: current, target: target, bodyMeanwhile: bodyMeanwhile, editedBody: edited, path: file)
                    notices += ConflictListing.closed(before, current.conflicts(of: target.id), note: target, in: current, path: file)
                    if let warning = sharedTitleWarning(renaming: target, to: newTitle, in: current) { notices.append(warning) }
                }
            } catch let failure as CLIFailure {
                throw CLIFailure(failure.status, "\(failure.message) (the edited body is kept in \(session.file))")
            }
            session.remove()
            for line in notices { Failure.report(line) }
        }

        /// What the user should know once an editor's edit is merged into the file as it is now:
        /// the note was deleted meanwhile (the edit is kept with it), or its body was changed
        /// meanwhile (both edits are kept, merged character by character: a fix made twice is
        /// then in the body twice). Each line starts with `path`, the notebook.
        static func notices(after current: Document, target: Note, bodyMeanwhile: String?, editedBody: String, path: String) -> [String] {
            guard let now = current.note(target.id) else { return [] }
            if now.isDeleted {
                return ["\(path): note \"\(DisplayText.oneLine(now.title))\" was deleted while the editor was open; the edit is kept with it ('peernote restore' brings both back)"]
            }
            if let meanwhile = bodyMeanwhile, meanwhile != target.body, now.body != editedBody {
                return ["\(path): note \"\(DisplayText.oneLine(now.title))\": its body was changed while the editor was open; both edits are kept, merged: check that it reads as meant"]
            }
            return []
        }

        /// `edited` without the final line break an editor added to a body that had none: `\n`,
        /// or `\r\n` (vim keeps a file's DOS line ends and ends its last line so too; other
        /// editors end every line so). A `\r` before that last `\n` is the editor's, not text: no
        /// editor lets one be typed at the end of a line, and a body that itself ended in `\r`
        /// keeps it.
        static func droppingAddedLineBreak(_ edited: String, original: String) -> String {
            let body = original.unicodeScalars
            guard body.last != "\n" else { return edited }
            var scalars = edited.unicodeScalars
            guard scalars.last == "\n" else { return edited }
            scalars.removeLast()
            if scalars.last == "\r", body.last != "\r" { scalars.removeLast() }
            return String(scalars)
        }
    }
}
