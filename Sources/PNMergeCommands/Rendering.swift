#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport

extension RenderStyle {
    /// The style of the current output sink.
    static var current: RenderStyle { RenderStyle(color: Console.current.colorEnabled, timeZone: Console.current.timeZone) }
}

/// Note-level differences (`NotebookDiff`) in words and in JSON.
enum DiffRendering {
    /// One line per difference, e.g. `edited  "Plan": body, tags`.
    static func lines(_ diff: NotebookDiff, style: RenderStyle) -> [String] {
        var out: [String] = []
        if !diff.titleBefore.hasSameScalars(as: diff.titleAfter) {
            let titles = DisplayText.sideBySide([diff.titleBefore, diff.titleAfter], Text.quoted)
            out.append(style.paint("retitled", .yellow) + " notebook " + titles[0] + " → " + titles[1])
        }
        for change in diff.changes {
            switch change {
            case .added(let n):
                out.append(style.paint("added   ", .green) + " " + Text.quoted(n.title))
            case .restored(let n):
                out.append(style.paint("restored", .green) + " " + Text.quoted(n.title))
            case .deleted(let n):
                out.append(style.paint("deleted ", .red) + " " + Text.quoted(n.title))
            case .edited(let before, let after, let fields):
                // A title that changed only in its scalars is spelled out beside what it was.
                let titles = DisplayText.sideBySide([after.title, before.title], Text.quoted)
                let was = fields.contains(.title) ? " (was \(titles[1]))" : ""
                out.append(style.paint("edited  ", .yellow) + " " + titles[0] + was + ": " + fields.map(\.rawValue).joined(separator: ", "))
            case .moved(let n, let from, let to):
                out.append(style.paint("moved   ", .cyan) + " " + Text.quoted(n.title) + ": position \(from + 1) → \(to + 1)")
            }
        }
        return out
    }

    /// `{"change": "added"|"restored"|"deleted"|"edited"|"moved", "note": id, "title": …, …}`.
    static func json(_ change: NotebookDiff.NoteChange) -> JSONValue {
        switch change {
        case .added(let n):
            .object([("change", .string("added")), ("note", .string(n.id.description)), ("title", .string(n.title))])
        case .restored(let n):
            .object([("change", .string("restored")), ("note", .string(n.id.description)), ("title", .string(n.title))])
        case .deleted(let n):
            .object([("change", .string("deleted")), ("note", .string(n.id.description)), ("title", .string(n.title))])
        case .edited(let before, let after, let fields):
            .object([("change", .string("edited")), ("note", .string(after.id.description)), ("title", .string(after.title)),
                     ("titleBefore", .string(before.title)), ("fields", .strings(fields.map(\.rawValue)))])
        case .moved(let n, let from, let to):
            .object([("change", .string("moved")), ("note", .string(n.id.description)), ("title", .string(n.title)),
                     ("from", .int(from)), ("to", .int(to))])
        }
    }

    /// `{"before": …, "after": …}` when the notebook title changed, else null.
    static func titleJSON(_ diff: NotebookDiff) -> JSONValue {
        diff.titleBefore.hasSameScalars(as: diff.titleAfter) ? .null : .object([("before", .string(diff.titleBefore)), ("after", .string(diff.titleAfter))])
    }

    /// `[{"author": …, "changes": n}]`.
    static func authorsJSON(_ list: [(author: String, count: Int)]) -> JSONValue {
        .array(list.map { .object([("author", .string($0.author)), ("changes", .int($0.count))]) })
    }
}
