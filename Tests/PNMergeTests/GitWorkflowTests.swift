import Foundation
import PeerNote
import PeerNoteCLISupport
@testable import PNMergeCommands
import Testing
import TestSupport

/// One notebook, committed on `main`, then edited on two branches:
/// - `feature` (bob, two commits): edits "Beta", puts "zero" before "Alpha"'s body, retitles the notebook
///   "Feature home", deletes "Delta"; then adds "Feature note".
/// - `main` (alice, one commit): edits "Gamma", puts "four" after "Alpha"'s body, retitles the notebook
///   "Main home", edits "Delta".
struct BranchScenario {
    let repo: GitRepo
    /// notes.peernote as committed on main (after alice's edit), to check the merge appends to it.
    let mainBytes: [UInt8]
    /// The commit at the tip of main before any merge.
    let mainHead: String

    init() throws {
        let repo = try GitRepo()
        let setup = try repo.pnmerge(["git-setup"])
        try #require(setup.status == 0, "\(setup.err)")

        let base = Document(title: "Home", author: "carol")
        base.addNote(title: "Alpha", body: "one\ntwo\nthree")
        base.addNote(title: "Beta", body: "b")
        base.addNote(title: "Gamma", body: "g")
        base.addNote(title: "Delta", body: "d")
        try base.write(to: repo.path("notes.peernote"), mode: .compact)
        try repo.git("add", ".gitattributes", "notes.peernote")
        try repo.git("commit", "-q", "-m", "base")

        try repo.git("checkout", "-q", "-b", "feature")
        try repo.edit("notes.peernote", author: "bob") { d in
            try d.setBody(try d.findNote("Beta").id, "b by bob")
            try d.insertText(try d.findNote("Alpha").id, at: 0, "zero\n")
            d.setTitle("Feature home")
            try d.deleteNote(try d.findNote("Delta").id)
        }
        try repo.git("commit", "-q", "-a", "-m", "feature: edit Beta and Alpha, retitle, delete Delta")
        try repo.edit("notes.peernote", author: "bob") { d in d.addNote(title: "Feature note", body: "from feature") }
        try repo.git("commit", "-q", "-a", "-m", "feature: add a note")

        try repo.git("checkout", "-q", "main")
        try repo.edit("notes.peernote", author: "alice") { d in
            try d.setBody(try d.findNote("Gamma").id, "g by alice")
            let alpha = try d.findNote("Alpha")
            try d.insertText(alpha.id, at: alpha.body.unicodeScalars.count, "\nfour")
            d.setTitle("Main home")
            try d.insertText(try d.findNote("Delta").id, at: 0, "edited ")
        }
        try repo.git("commit", "-q", "-a", "-m", "main: edit Gamma, Alpha and Delta, retitle")
        mainBytes = try repo.bytes("notes.peernote")
        mainHead = try repo.git("rev-parse", "HEAD").out.trimmingCharacters(in: .whitespacesAndNewlines)
        self.repo = repo
    }

    /// The work tree's notebook holds every edit of both branches, and git has nothing unmerged or untracked.
    func expectEveryEdit(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try repo.git("ls-files", "-u").out.isEmpty, "\(what): unmerged paths", sourceLocation: sourceLocation)
        #expect(try repo.git("status", "--porcelain").out.isEmpty, "\(what): the work tree is not clean (lock or temporary files?)", sourceLocation: sourceLocation)
        let json = try repo.notebookJSON("notes.peernote")
        let notes = try #require(json["notes"] as? [[String: Any]])
        let bodies = Dictionary(notes.map { ($0["title"] as? String ?? "", $0["body"] as? String ?? "") }, uniquingKeysWith: { a, _ in a })
        #expect(bodies["Alpha"] == "zero\none\ntwo\nthree\nfour", "\(what): both edits of Alpha's body", sourceLocation: sourceLocation)
        #expect(bodies["Beta"] == "b by bob", "\(what)", sourceLocation: sourceLocation)
        #expect(bodies["Gamma"] == "g by alice", "\(what)", sourceLocation: sourceLocation)
        #expect(bodies["Feature note"] == "from feature", "\(what)", sourceLocation: sourceLocation)
        #expect(bodies["Delta"] == nil, "\(what): Delta stays deleted", sourceLocation: sourceLocation)
        let title = json["title"] as? String ?? ""
        #expect(title == "Main home" || title == "Feature home", "\(what)", sourceLocation: sourceLocation)
        let conflicts = try #require(json["conflicts"] as? [[String: Any]])
        let titleConflict = conflicts.first { $0["kind"] as? String == "notebookTitle" }
        let values = (titleConflict?["values"] as? [[String: Any]])?.compactMap { $0["value"] as? String }.sorted()
        #expect(values == ["Feature home", "Main home"], "\(what): both titles kept as a conflict", sourceLocation: sourceLocation)
        #expect(conflicts.contains { $0["kind"] as? String == "deletedWhileEdited" && $0["title"] as? String == "Delta" },
                "\(what): Delta deleted while edited", sourceLocation: sourceLocation)
        // The edit made to the deleted note is kept in the document.
        let document = try Document.open(repo.path("notes.peernote"))
        #expect(document.deletedNotes.first { $0.title == "Delta" }?.body == "edited d", "\(what)", sourceLocation: sourceLocation)
        #expect(try repo.pnmerge(["validate", "notes.peernote"]).status == 0, sourceLocation: sourceLocation)
    }
}

@Suite("git workflows with the built pnmerge, in real repositories")
struct GitWorkflowTests {
    @Test("git merge of two branches that edited one notebook completes without a conflict and keeps every edit")
    func merge() throws {
        let s = try BranchScenario()
        let r = try s.repo.tryGit(["merge", "--no-edit", "feature"])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(!r.out.contains("CONFLICT"))
        try s.expectEveryEdit("merge")
        // The driver appended to our version: its bytes are a prefix of the merged file.
        let merged = try s.repo.bytes("notes.peernote")
        #expect(merged.count > s.mainBytes.count && Array(merged.prefix(s.mainBytes.count)) == s.mainBytes)
        // The conflicts are named on the way (git shows the driver's standard error).
        #expect(r.err.contains("notes.peernote: merged; 2 conflicts kept in the notebook"), "\(r.err)")
    }

    @Test("git rebase of the feature branch onto main replays both commits and keeps every edit")
    func rebase() throws {
        let s = try BranchScenario()
        try s.repo.git("checkout", "-q", "feature")
        let r = try s.repo.tryGit(["rebase", "main"])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        try s.expectEveryEdit("rebase")
        let log = try s.repo.git("log", "--format=%s", "main..HEAD").out
        #expect(log == "feature: add a note\nfeature: edit Beta and Alpha, retitle, delete Delta\n")
    }

    @Test("The driver lists the conflicts a merge made and counts, on one line, those committed before it (merge, rebase, cherry-pick)")
    func conflictsFromBefore() throws {
        let repo = try GitRepo()
        try #require(try repo.pnmerge(["git-setup"]).status == 0)
        // A title conflict, merged and committed on main before the branches part.
        let base = Document(title: "N", author: "alice")
        let t = base.addNote(title: "T")
        base.addNote(title: "U")
        let bob = base.fork(author: "bob")
        try bob.setNoteTitle(t, "Bob's T")
        try base.setNoteTitle(t, "Alice's T")
        try base.merge(bob)
        try #require(base.conflicts.count == 1)
        try base.write(to: repo.path("n.peernote"), mode: .compact)
        try repo.git("add", ".gitattributes", "n.peernote")
        try repo.git("commit", "-q", "-m", "base")
        try repo.git("checkout", "-q", "-b", "side")
        try repo.edit("n.peernote", author: "bob") { d in try d.setBody(try d.findNote("U").id, "only U changed") }
        try repo.git("commit", "-q", "-a", "-m", "side: U's body")
        try repo.edit("n.peernote", author: "bob") { d in d.addNote(title: "W") }
        try repo.git("commit", "-q", "-a", "-m", "side: add W")
        try repo.git("checkout", "-q", "main")
        try repo.edit("n.peernote", author: "alice") { d in d.addNote(title: "V") }
        try repo.git("commit", "-q", "-a", "-m", "main: add V")
        let mainHead = try repo.git("rev-parse", "HEAD").out.trimmingCharacters(in: .whitespacesAndNewlines)

        let old = "n.peernote: 1 conflict from before this merge is still open (see: pnmerge show n.peernote)\n"
        let merged = try repo.tryGit(["merge", "--no-edit", "side"])
        #expect(merged.status == 0, "\(merged.out)\(merged.err)")
        #expect(merged.err.contains(old), "\(merged.err)")
        #expect(!merged.err.contains("kept in the notebook") && !merged.err.contains("note \""), "only counted:\n\(merged.err)")

        // Cherry-picked and rebased, a step at a time: each step says the same, once.
        try repo.git("reset", "-q", "--hard", mainHead)
        let picked = try repo.tryGit(["cherry-pick", "main..side"])
        #expect(picked.status == 0, "\(picked.out)\(picked.err)")
        #expect(picked.err.components(separatedBy: old).count - 1 == 2, "\(picked.err)")
        #expect(!picked.err.contains("kept in the notebook"), "\(picked.err)")
        try repo.git("checkout", "-q", "side")
        let rebased = try repo.tryGit(["rebase", mainHead])
        #expect(rebased.status == 0, "\(rebased.out)\(rebased.err)")
        #expect(rebased.err.components(separatedBy: old).count - 1 == 2, "\(rebased.err)")
        #expect(!rebased.err.contains("kept in the notebook"), "\(rebased.err)")

        // A merge that makes a conflict of its own lists it, and still only counts the old one.
        try repo.git("checkout", "-q", "-B", "other", mainHead)
        try repo.edit("n.peernote", author: "carol") { d in try d.setPriority(try d.findNote("U").id, .high) }
        try repo.git("commit", "-q", "-a", "-m", "other: U high")
        try repo.git("checkout", "-q", "-B", "main", mainHead)
        try repo.edit("n.peernote", author: "alice") { d in try d.setPriority(try d.findNote("U").id, .low) }
        try repo.git("commit", "-q", "-a", "-m", "main: U low")
        let both = try repo.tryGit(["merge", "--no-edit", "other"])
        #expect(both.status == 0, "\(both.out)\(both.err)")
        #expect(both.err.contains("n.peernote: merged; 1 conflict kept in the notebook (see: pnmerge show n.peernote):\n  note \"U\": priority"), "\(both.err)")
        #expect(both.err.contains(old), "\(both.err)")
        #expect(!both.err.contains("Bob's T\" (bob"), "the old conflict is not listed:\n\(both.err)")
    }

    @Test("git rebase: the step that makes the conflicts lists them; the next one, which finds them committed, counts them")
    func rebaseCountsConflictsOnce() throws {
        let s = try BranchScenario()
        try s.repo.git("checkout", "-q", "feature")
        let r = try s.repo.tryGit(["rebase", "main"])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(r.err.components(separatedBy: "notes.peernote: merged; 2 conflicts kept in the notebook").count - 1 == 1, "\(r.err)")
        #expect(r.err.contains("notes.peernote: 2 conflicts from before this merge are still open (see: pnmerge show notes.peernote)\n"), "\(r.err)")
        try s.expectEveryEdit("rebase")
    }

    @Test("git cherry-pick of the feature commits onto main keeps every edit")
    func cherryPick() throws {
        let s = try BranchScenario()
        let r = try s.repo.tryGit(["cherry-pick", "main..feature"])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        try s.expectEveryEdit("cherry-pick")
        #expect(try s.repo.git("rev-list", "--count", "\(s.mainHead)..HEAD").out == "2\n")
    }

    @Test("A notebook carries its history (as the docs say): cherry-picking feature's last commit brings its first one too, reverting an older notebook commit changes nothing, and reverting the last one restores the file (then the older one does too)")
    func historyOnlyGrows() throws {
        let s = try BranchScenario()
        // Only "feature: add a note" is picked, but that version of the file holds bob's first commit's edits as well.
        let pick = try s.repo.tryGit(["cherry-pick", "feature"])
        #expect(pick.status == 0, "\(pick.out)\(pick.err)")
        try s.expectEveryEdit("cherry-pick of feature's last commit")
        let picked = try s.repo.bytes("notes.peernote")

        // Reverting main's own edit (an older commit): the driver merges, keeps every edit, and git finds nothing to commit.
        let older = try s.repo.tryGit(["revert", "--no-edit", s.mainHead])
        #expect(older.status != 0 && (older.out + older.err).contains("nothing to commit"), "\(older.out)\(older.err)")
        #expect(try s.repo.bytes("notes.peernote") == picked, "the file is unchanged")
        _ = try s.repo.tryGit(["revert", "--abort"])

        // Reverting the last notebook commit: git needs no merge (our side is that commit's own version).
        try s.repo.git("revert", "--no-edit", "HEAD")
        #expect(try s.repo.bytes("notes.peernote") == s.mainBytes, "main's file is back")

        // Now the file is as main's commit left it: reverting that older commit needs no merge
        // either, and puts back the version before it (as the docs say).
        let before = try s.repo.git("cat-file", "blob", "\(s.mainHead)~1:notes.peernote").outBytes
        try s.repo.git("revert", "--no-edit", s.mainHead)
        #expect(try s.repo.bytes("notes.peernote") == before, "the version before main's commit is back")
    }

    @Test("git diff and git log -p show note changes as text (textconv)")
    func diffShowsText() throws {
        let s = try BranchScenario()
        try s.repo.edit("notes.peernote", author: "alice") { d in
            d.addNote(title: "Diffed note", body: "hello diff\nsecond line", tags: ["t1"])
            try d.setBody(try d.findNote("Gamma").id, "g by alice, again")
        }
        let diff = try s.repo.git("diff")
        #expect(!diff.out.contains("Binary files"), "\(diff.out)")
        #expect(diff.out.contains("+## Diffed note  ["), "\(diff.out)")
        #expect(diff.out.contains("] priority: normal tags: t1\n"), "\(diff.out)")
        #expect(diff.out.contains("+    hello diff\n+    second line\n"), "\(diff.out)")
        #expect(diff.out.contains("-    g by alice\n+    g by alice, again\n"), "\(diff.out)")
        try s.repo.git("commit", "-q", "-a", "-m", "add a note")
        let log = try s.repo.git("log", "-p", "-1")
        #expect(log.out.contains("+    hello diff"), "\(log.out)")
        // Between branches too.
        let branches = try s.repo.git("diff", "\(s.mainHead)~1", "feature")
        #expect(branches.out.contains("+## Feature note  ["), "\(branches.out)")
        #expect(branches.out.contains("-# Home\n+# Feature home"), "\(branches.out)")
    }

    @Test("A notebook named -notes.peernote at the top of the repository merges and diffs (git-setup puts -- before the paths git adds)")
    func dashNamedNotebook() throws {
        let repo = try GitRepo()
        #expect(try repo.pnmerge(["git-setup"]).status == 0)
        let base = Document(title: "Home", author: "carol")
        let note = base.addNote(title: "A", body: "a")
        try base.write(to: repo.path("-notes.peernote"), mode: .compact)
        try repo.git("add", "-A")
        try repo.git("commit", "-q", "-m", "base")
        try repo.git("checkout", "-q", "-b", "side")
        let side = try Document.open(repo.path("-notes.peernote"), author: "bob")
        side.addNote(title: "S", body: "s")
        try side.write(to: repo.path("-notes.peernote"))
        try repo.git("commit", "-q", "-a", "-m", "side")
        try repo.git("checkout", "-q", "main")
        let main = try Document.open(repo.path("-notes.peernote"), author: "alice")
        try main.insertText(note, at: 1, "!")
        try main.write(to: repo.path("-notes.peernote"))
        try repo.git("commit", "-q", "-a", "-m", "main")
        let merge = try repo.tryGit(["merge", "--no-edit", "side"])
        #expect(merge.status == 0, "\(merge.out)\(merge.err)")
        let merged = try Document.open(repo.path("-notes.peernote"))
        #expect(merged.notes.map(\.title) == ["A", "S"] && merged.notes.first?.body == "a!", "\(merged.notes)")
        let edited = try Document.open(repo.path("-notes.peernote"), author: "alice")
        edited.addNote(title: "Diffed", body: "d")
        try edited.write(to: repo.path("-notes.peernote"))
        let diff = try repo.git("diff")
        #expect(diff.out.contains("+## Diffed  ["), "\(diff.out)")
    }

    @Test("add/add of two unrelated notebooks at one path is a conflict, and OURS stays intact")
    func addAddUnrelated() throws {
        let repo = try GitRepo()
        #expect(try repo.pnmerge(["git-setup"]).status == 0)
        try repo.git("add", ".gitattributes")
        try repo.git("commit", "-q", "-m", "attributes")
        try repo.git("checkout", "-q", "-b", "theirs")
        let theirs = Document(title: "Their notebook", author: "bob")
        theirs.addNote(title: "Theirs", body: "t")
        try theirs.write(to: repo.path("shared.peernote"), mode: .compact)
        try repo.git("add", "shared.peernote")
        try repo.git("commit", "-q", "-m", "theirs")
        try repo.git("checkout", "-q", "main")
        let ours = Document(title: "Our notebook", author: "alice")
        ours.addNote(title: "Ours", body: "o")
        try ours.write(to: repo.path("shared.peernote"), mode: .compact)
        try repo.git("add", "shared.peernote")
        try repo.git("commit", "-q", "-m", "ours")
        let oursBytes = try repo.bytes("shared.peernote")

        let r = try repo.tryGit(["merge", "--no-edit", "theirs"])
        #expect(r.status == 1, "\(r.out)\(r.err)")
        #expect(r.out.contains("CONFLICT (add/add): Merge conflict in shared.peernote"), "\(r.out)")
        #expect(r.err.contains("pnmerge: cannot merge shared.peernote (theirs) into shared.peernote (ours)"), "\(r.err)")
        #expect(r.err.contains(theirs.id.uuidString.lowercased()) && r.err.contains(ours.id.uuidString.lowercased()))
        let stages = try repo.git("ls-files", "-u", "--", "shared.peernote").out
        #expect(stages.split(separator: "\n").map { $0.split(separator: "\t")[0].split(separator: " ").last.map(String.init) ?? "" } == ["2", "3"])
        // Git leaves our version in the work tree (the driver left OURS byte-identical), and stage 2 is ours.
        #expect(try repo.bytes("shared.peernote") == oursBytes)
        let stage2 = try repo.git("cat-file", "blob", ":2:shared.peernote").outBytes
        #expect(stage2 == oursBytes)
    }

    @Test("The pre-commit hook refuses a damaged staged notebook and accepts a valid one")
    func preCommitHook() throws {
        let repo = try GitRepo()
        let setup = try repo.pnmerge(["git-setup", "--hooks"])
        #expect(setup.status == 0, "\(setup.err)")
        #expect(FileManager.default.isExecutableFile(atPath: repo.path(".git/hooks/pre-commit")))
        try repo.git("add", ".gitattributes")
        try repo.git("commit", "-q", "-m", "attributes")
        let head = try repo.git("rev-parse", "HEAD").out

        let good = Document(title: "Good", author: "alice")
        good.addNote(title: "Fine", body: "ok")
        var damaged = good.save()
        damaged[damaged.count - 5] ^= 0x20
        try Data(damaged).write(to: URL(fileURLWithPath: repo.path("my notes.peernote")))
        try good.write(to: repo.path("good.peernote"), mode: .compact)
        try repo.git("add", "my notes.peernote", "good.peernote")
        let refused = try repo.tryGit(["commit", "-q", "-m", "damaged"])
        #expect(refused.status != 0)
        #expect(refused.err.contains("pre-commit: my notes.peernote: offset "), "\(refused.err)")
        #expect(!refused.err.contains("good.peernote"), "\(refused.err)")
        // Its only block is damaged: nothing to recover, so no command for it.
        #expect(!refused.err.contains("salvage"), "\(refused.err)")
        #expect(try repo.git("rev-parse", "HEAD").out == head)

        // Stage a valid version of the same file (the index is what is checked, not the work tree).
        try good.write(to: repo.path("my notes.peernote"), mode: .compact)
        try repo.git("add", "my notes.peernote")
        try Data("garbage in the work tree only".utf8).write(to: URL(fileURLWithPath: repo.path("my notes.peernote")))
        let accepted = try repo.tryGit(["commit", "-q", "-m", "valid"])
        #expect(accepted.status == 0, "\(accepted.err)")
        #expect(try repo.git("rev-parse", "HEAD").out != head)

        // Deleting a damaged file is not refused (only added, copied or modified files are checked).
        try repo.git("rm", "-q", "--cached", "my notes.peernote")
        #expect(try repo.tryGit(["commit", "-q", "-m", "remove"]).status == 0)

        // A symbolic link named *.peernote is not a document (its blob is the target's path): not refused.
        try FileManager.default.createSymbolicLink(atPath: repo.path("latest.peernote"), withDestinationPath: "good.peernote")
        try repo.git("add", "latest.peernote")
        let link = try repo.tryGit(["commit", "-q", "-m", "link"])
        #expect(link.status == 0, "\(link.err)")

        // A file renamed and damaged in one commit is checked under its new name (git lists it as
        // a rename, not as an added file).
        let beforeRename = try repo.git("rev-parse", "HEAD").out
        try repo.git("mv", "good.peernote", "renamed.peernote")
        try Data(damaged).write(to: URL(fileURLWithPath: repo.path("renamed.peernote")))
        try repo.git("add", "renamed.peernote")
        let renamed = try repo.tryGit(["commit", "-q", "-m", "rename and damage"])
        #expect(renamed.status != 0)
        #expect(renamed.err.contains("pre-commit: renamed.peernote: offset "), "\(renamed.err)")
        #expect(try repo.git("rev-parse", "HEAD").out == beforeRename)
        try repo.git("reset", "-q", "--hard")

        // The symbolic link replaced by a damaged file (a change of type) is checked too.
        try FileManager.default.removeItem(atPath: repo.path("latest.peernote"))
        try Data(damaged).write(to: URL(fileURLWithPath: repo.path("latest.peernote")))
        try repo.git("add", "latest.peernote")
        let retyped = try repo.tryGit(["commit", "-q", "-m", "link to damaged file"])
        #expect(retyped.status != 0)
        #expect(retyped.err.contains("pre-commit: latest.peernote: offset "), "\(retyped.err)")
        try repo.git("reset", "-q", "--hard")

        // Notebooks damaged after some intact blocks: the line ends with a command that recovers
        // them at a terminal. Not validate's 'pnmerge salvage - …' (validate read the staged blob
        // from a pipe, gone by then), but one that reads the staged version again, from any folder
        // of the work tree, the path quoted when it needs it.
        try FileManager.default.createDirectory(atPath: repo.path("trips"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: repo.path("elsewhere"), withIntermediateDirectories: true)
        var recoverable: [String: Int] = [:]
        for name in ["trips/it's a trip.peernote", "plain.peernote"] {
            let notebook = Document(title: "Trip", author: "alice")
            notebook.addNote(title: "Day 1")
            try notebook.write(to: repo.path(name), mode: .compact)
            try repo.edit(name, author: "alice") { $0.addNote(title: "Day 2") }
            try repo.edit(name, author: "bob") { $0.addNote(title: "Day 3") }
            let cut = Array(try repo.bytes(name).dropLast(6))
            try Data(cut).write(to: URL(fileURLWithPath: repo.path(name)))
            recoverable[name] = try Document.salvage(cut).document.changeCount
            try repo.git("add", name)
        }
        let cut = try repo.tryGit(["commit", "-q", "-m", "cut short"])
        #expect(cut.status != 0)
        let quoted = "git show ':trips/it'\\''s a trip.peernote' | pnmerge salvage - -o NEW.peernote"
        #expect(cut.err.contains("pre-commit: trips/it's a trip.peernote: offset "), "\(cut.err)")
        #expect(cut.err.contains("; recover its intact changes with: \(quoted)\n"), "\(cut.err)")
        #expect(cut.err.contains("pre-commit: plain.peernote: offset "), "\(cut.err)")
        #expect(cut.err.contains("; recover its intact changes with: git show :plain.peernote | pnmerge salvage - -o NEW.peernote\n"), "\(cut.err)")
        #expect(!cut.err.contains("pnmerge salvage - -o NEW.peernote' recovers"), "no command naming the hook's pipe: \(cut.err)")
        // The command, run as printed in another folder, recovers what the staged copy holds intact.
        let run = try Command.run("/bin/sh", ["-c", quoted], in: repo.path("elsewhere"), environment: repo.environment)
        #expect(run.status == 0, "\(run.err)")
        let recovered = try Document.load(try repo.bytes("elsewhere/NEW.peernote"))
        #expect(recovered.changeCount == recoverable["trips/it's a trip.peernote"])
        #expect(recovered.changeCount >= 3, "the base block and the first append block are intact")

        // A hook set up where pnmerge was not on PATH runs it by its absolute path, and its
        // line names it so (a pasted 'pnmerge' would not be found either).
        try FileManager.default.createDirectory(atPath: repo.path("bin dir"), withIntermediateDirectories: true)
        let program = repo.path("bin dir") + "/pnmerge"
        try FileManager.default.copyItem(atPath: Binary.path, toPath: program)
        let hookPath = repo.path(".git/hooks/pre-commit")
        try FileManager.default.removeItem(atPath: hookPath)
        #expect(try GitSetupOperation.installHook(at: hookPath, program: GitSetupOperation.shellQuoted(program)) == .installed)
        let absolute = try repo.tryGit(["commit", "-q", "-m", "cut short"])
        #expect(absolute.status != 0)
        let named = "git show :plain.peernote | '\(program)' salvage - -o NEW.peernote"
        #expect(absolute.err.contains("; recover its intact changes with: \(named)\n"), "\(absolute.err)")
        var bare = repo.environment
        bare["PATH"] = "/usr/bin:/bin"
        try FileManager.default.createDirectory(atPath: repo.path("third"), withIntermediateDirectories: true)
        let pasted = try Command.run("/bin/sh", ["-c", named], in: repo.path("third"), environment: bare)
        #expect(pasted.status == 0, "\(pasted.err)")
        #expect(try Document.load(try repo.bytes("third/NEW.peernote")).changeCount == recoverable["plain.peernote"])
    }

    @Test("git-setup is idempotent: the second run changes nothing and says so")
    func setupIdempotent() throws {
        let repo = try GitRepo()
        try Data("*.txt text".utf8).write(to: URL(fileURLWithPath: repo.path(".gitattributes")))
        let first = try repo.pnmerge(["git-setup", "--hooks"])
        #expect(first.status == 0, "\(first.err)")
        #expect(first.out.contains(".gitattributes: added '*.peernote merge=peernote diff=peernote -text'"), "\(first.out)")
        #expect(first.out.contains("merge.peernote.driver set to 'pnmerge git-driver %O %A %B -- %P'"), "\(first.out)")
        #expect(first.out.contains("diff.peernote.textconv set to 'pnmerge textconv --'"))
        #expect(first.out.contains("pre-commit: installed"))
        #expect(try String(decoding: repo.bytes(".gitattributes"), as: UTF8.self) == "*.txt text\n*.peernote merge=peernote diff=peernote -text\n")
        let attributes = try repo.bytes(".gitattributes")
        let hook = try repo.bytes(".git/hooks/pre-commit")
        let config = try repo.git("config", "--local", "--list").out
        #expect(config.contains("merge.peernote.name=PeerNote notebook merge (pnmerge)\n"))
        #expect(try repo.git("check-attr", "merge", "diff", "--", "a/b.peernote").out == "a/b.peernote: merge: peernote\na/b.peernote: diff: peernote\n")

        let second = try repo.pnmerge(["git-setup", "--hooks"])
        #expect(second.status == 0)
        #expect(second.out.contains("Nothing to change"), "\(second.out)")
        #expect(!second.out.contains(" set to ") && !second.out.contains("added") && !second.out.contains("installed ("))
        #expect(try repo.bytes(".gitattributes") == attributes)
        #expect(try repo.bytes(".git/hooks/pre-commit") == hook)
        #expect(try repo.git("config", "--local", "--list").out == config)
    }

    @Test("With git-setup's line, a rule that converts line endings (* text eol=crlf) leaves documents byte for byte")
    func documentsAreNotText() throws {
        let repo = try GitRepo()
        try Data("* text eol=crlf\n".utf8).write(to: URL(fileURLWithPath: repo.path(".gitattributes")))
        let setup = try repo.pnmerge(["git-setup"])
        #expect(setup.status == 0, "\(setup.err)")
        #expect(try repo.git("check-attr", "text", "--", "n.peernote").out == "n.peernote: text: unset\n")

        // A document with line feeds in its bytes: git would turn each into CR LF on checkout.
        let doc = Document(title: "Lines", author: "alice")
        var body = "line\n"
        var bytes: [UInt8] = []
        for i in 0 ..< 64 {
            body += "line \(i)\n"
            doc.addNote(title: "Note \(i)", body: body)
            bytes = doc.save(.compact)
            if bytes.contains(0x0A) { break }
        }
        try #require(bytes.contains(0x0A), "no document of this test holds a line feed byte")
        try FileStore.writeAtomically(bytes, to: repo.path("n.peernote"))
        try repo.git("add", ".gitattributes", "n.peernote")
        try repo.git("commit", "-q", "-m", "add")
        try FileManager.default.removeItem(atPath: repo.path("n.peernote"))
        try repo.git("checkout", "--", "n.peernote")
        #expect(try repo.bytes("n.peernote") == bytes, "checked out unchanged")
    }

    @Test("git-setup replaces the line earlier versions wrote (without -text) where it stands")
    func setupUpgradesOldLine() throws {
        let repo = try GitRepo()
        try Data("*.txt text\n*.peernote merge=peernote diff=peernote\n*.md text\n".utf8)
            .write(to: URL(fileURLWithPath: repo.path(".gitattributes")))
        let r = try repo.pnmerge(["git-setup"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("replaced '*.peernote merge=peernote diff=peernote' by '*.peernote merge=peernote diff=peernote -text'"), "\(r.out)")
        #expect(try String(decoding: repo.bytes(".gitattributes"), as: UTF8.self)
                == "*.txt text\n*.peernote merge=peernote diff=peernote -text\n*.md text\n")
    }

    @Test("A .gitattributes with CRLF line endings (as git checks it out under eol=crlf) is read line by line and keeps its endings")
    func setupCRLFAttributes() throws {
        let repo = try GitRepo()
        let file = URL(fileURLWithPath: repo.path(".gitattributes"))
        try Data("* text eol=crlf\r\n*.peernote   merge=peernote diff=peernote\r\n*.png binary\r\n".utf8).write(to: file)
        let r = try repo.pnmerge(["git-setup"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("replaced '*.peernote merge=peernote diff=peernote'"), "\(r.out)")
        #expect(try String(decoding: repo.bytes(".gitattributes"), as: UTF8.self)
                == "* text eol=crlf\r\n*.peernote merge=peernote diff=peernote -text\r\n*.png binary\r\n")
        let again = try repo.pnmerge(["git-setup"])
        #expect(again.out.contains("Nothing to change"), "\(again.out)")

        try Data("* text eol=crlf\r\n".utf8).write(to: file)
        #expect(try repo.pnmerge(["git-setup"]).status == 0)
        #expect(try String(decoding: repo.bytes(".gitattributes"), as: UTF8.self) == "* text eol=crlf\r\n*.peernote merge=peernote diff=peernote -text\r\n")
        #expect(try repo.pnmerge(["git-setup"]).out.contains("Nothing to change"))
    }

    @Test("git-setup refuses a .gitattributes that is a symbolic link (73) and writes nothing through it (nothing appended to the link's target)")
    func setupSymlinkedAttributes() throws {
        let repo = try GitRepo()
        let outside = try TempDir()
        let victim = outside.path("victim.txt")
        try Data("export SECRET=1\n".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: repo.path(".gitattributes"), withDestinationPath: victim)
        let r = try repo.pnmerge(["git-setup"])
        #expect(r.status == ExitStatus.cannotCreate.rawValue, "\(r.out)\(r.err)")
        #expect(r.err == "pnmerge: \(repo.path(".gitattributes")): is a symbolic link, which git does not read as attributes; not changed (replace it with a regular file, then run git-setup again)\n", "\(r.err)")
        #expect(try outside.bytes("victim.txt") == Array("export SECRET=1\n".utf8))
        #expect(try repo.tryGit(["config", "--get", "merge.peernote.driver"]).status != 0, "nothing was set up")
        // A dangling link is refused the same way (it would create the file it points to).
        try FileManager.default.removeItem(atPath: repo.path(".gitattributes"))
        try FileManager.default.createSymbolicLink(atPath: repo.path(".gitattributes"), withDestinationPath: outside.path("new.txt"))
        #expect(try repo.pnmerge(["git-setup"]).status == ExitStatus.cannotCreate.rawValue)
        #expect(!FileManager.default.fileExists(atPath: outside.path("new.txt")))
    }

    @Test("git-setup leaves a .gitattributes or hook that is not UTF-8 byte for byte (65) instead of replacing its bytes")
    func setupNonUTF8Files() throws {
        let repo = try GitRepo()
        let latin1: [UInt8] = Array("*.txt text\ncaf".utf8) + [0xE9] + Array(".txt binary\n".utf8)
        try Data(latin1).write(to: URL(fileURLWithPath: repo.path(".gitattributes")))
        let r = try repo.pnmerge(["git-setup"])
        #expect(r.status == ExitStatus.invalidInput.rawValue, "\(r.out)\(r.err)")
        #expect(r.err.hasPrefix("pnmerge: \(repo.path(".gitattributes")): offset 14: not valid UTF-8 text; not changed (add this line to it by hand: '*.peernote merge=peernote diff=peernote -text')"), "\(r.err)")
        #expect(try repo.bytes(".gitattributes") == latin1)

        // pnmerge's own hook with a line of another encoding added by hand: left alone while
        // its block is current, refused when the block would be rewritten.
        try Data("*.peernote merge=peernote diff=peernote -text\n".utf8).write(to: URL(fileURLWithPath: repo.path(".gitattributes")))
        #expect(try repo.pnmerge(["git-setup", "--hooks"]).status == 0)
        let hook = repo.path(".git/hooks/pre-commit")
        let installed = try Array(Data(contentsOf: URL(fileURLWithPath: hook)))
        let withLatin1 = installed + Array("# author: Jos".utf8) + [0xE9, 0x0A]
        try Data(withLatin1).write(to: URL(fileURLWithPath: hook))
        let current = try repo.pnmerge(["git-setup", "--hooks"])
        #expect(current.status == 0 && current.out.contains("already installed"), "\(current.out)\(current.err)")
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: hook))) == withLatin1)
        let stale = Array(String(decoding: installed, as: UTF8.self).replacingOccurrences(of: "commit refused", with: "OLD TEXT").utf8)
            + Array("# author: Jos".utf8) + [0xE9, 0x0A]
        try Data(stale).write(to: URL(fileURLWithPath: hook))
        let again = try repo.pnmerge(["git-setup", "--hooks"])
        #expect(again.status == ExitStatus.invalidInput.rawValue, "\(again.out)\(again.err)")
        #expect(again.err.contains("pre-commit: offset \(stale.count - 2): not valid UTF-8 text; not changed (edit pnmerge's part of it by hand"), "\(again.err)")
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: hook))) == stale)
        // The same .gitattributes with the line already there: nothing to write, no refusal.
        try Data(latin1 + Array("*.peernote merge=peernote diff=peernote -text\n".utf8)).write(to: URL(fileURLWithPath: repo.path(".gitattributes")))
        #expect(try repo.pnmerge(["git-setup"]).status == 0)
    }

    @Test("git-setup --hooks does not create a hook through a symbolic link to nothing (73)")
    func setupDanglingHookLink() throws {
        let repo = try GitRepo()
        let outside = try TempDir()
        try FileManager.default.createDirectory(atPath: repo.path(".git/hooks"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: repo.path(".git/hooks/pre-commit"), withDestinationPath: outside.path("profile"))
        let r = try repo.pnmerge(["git-setup", "--hooks"])
        #expect(r.status == ExitStatus.cannotCreate.rawValue, "\(r.out)\(r.err)")
        #expect(r.err.contains("pre-commit: is a symbolic link to a file that does not exist; not created"), "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: outside.path("profile")))
        // Refused before anything else is set up (not .gitattributes and the config written
        // first, and not reported).
        #expect(!FileManager.default.fileExists(atPath: repo.path(".gitattributes")))
        #expect(try repo.tryGit(["config", "--get", "merge.peernote.driver"]).status != 0)
    }

    @Test("git-setup --global with a global attributes file that is not UTF-8 sets nothing (65), core.attributesFile included")
    func setupGlobalNonUTF8() throws {
        let repo = try GitRepo()
        let outside = try TempDir()
        let attributes = repo.home.path(".config/git/attributes")
        try FileManager.default.createDirectory(atPath: repo.home.path(".config/git"), withIntermediateDirectories: true)
        let latin1: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt binary\n".utf8)
        try Data(latin1).write(to: URL(fileURLWithPath: attributes))
        let r = try repo.pnmerge(["git-setup", "--global"], in: outside.url.path)
        #expect(r.status == ExitStatus.invalidInput.rawValue, "\(r.out)\(r.err)")
        #expect(try repo.tryGit(["config", "--global", "--get", "core.attributesFile"]).status != 0, "core.attributesFile left unset")
        #expect(try repo.tryGit(["config", "--global", "--get", "merge.peernote.driver"]).status != 0)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: attributes))) == latin1)
    }

    @Test("git-setup never overwrites a pre-commit hook it did not write (exit 73), and updates its own block in place")
    func foreignHook() throws {
        let repo = try GitRepo()
        let foreign = "#!/bin/sh\necho custom check\nexit 0\n"
        try FileManager.default.createDirectory(atPath: repo.path(".git/hooks"), withIntermediateDirectories: true)
        try Data(foreign.utf8).write(to: URL(fileURLWithPath: repo.path(".git/hooks/pre-commit")))
        let r = try repo.pnmerge(["git-setup", "--hooks"])
        #expect(r.status == ExitStatus.cannotCreate.rawValue)
        #expect(try String(decoding: repo.bytes(".git/hooks/pre-commit"), as: UTF8.self) == foreign)
        #expect(r.out.contains("# >>> pnmerge pre-commit check"), "the lines to add are printed")
        #expect(r.err.contains("pre-commit: a pre-commit hook already exists"), "\(r.err)")
        // The rest of the setup was still done.
        #expect(try repo.git("config", "--get", "merge.peernote.driver").out == "pnmerge git-driver %O %A %B -- %P\n")

        // A hook holding pnmerge's marked block among other lines gets that block refreshed, the rest kept.
        let block = r.out.components(separatedBy: "\n").drop { !$0.hasPrefix("# >>> pnmerge") }
        let lines = Array(block.prefix { !$0.hasPrefix("# <<< pnmerge") }) + ["# <<< pnmerge pre-commit check <<<"]
        let stale = lines.map { $0.replacingOccurrences(of: "commit refused", with: "OLD TEXT") }.joined(separator: "\n")
        let mixed = "#!/bin/sh\necho before\n" + stale + "\necho after\n"
        try Data(mixed.utf8).write(to: URL(fileURLWithPath: repo.path(".git/hooks/pre-commit")))
        let again = try repo.pnmerge(["git-setup", "--hooks"])
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out.contains("updated pnmerge's check"))
        let updated = try String(decoding: repo.bytes(".git/hooks/pre-commit"), as: UTF8.self)
        #expect(updated.hasPrefix("#!/bin/sh\necho before\n# >>> pnmerge pre-commit check"))
        #expect(updated.hasSuffix("# <<< pnmerge pre-commit check <<<\necho after\n"))
        #expect(!updated.contains("OLD TEXT"))
    }

    @Test("git-setup --global writes the global attributes file and config, idempotently")
    func globalSetup() throws {
        let repo = try GitRepo()
        let outside = try TempDir()
        let first = try repo.pnmerge(["git-setup", "--global"], in: outside.url.path)
        #expect(first.status == 0, "\(first.err)")
        #expect(first.out.contains("core.attributesFile set to '~/.config/git/attributes'"), "\(first.out)")
        let attributesPath = repo.home.path(".config/git/attributes")
        #expect(try String(contentsOfFile: attributesPath, encoding: .utf8) == "*.peernote merge=peernote diff=peernote -text\n")
        #expect(try repo.git("config", "--global", "--get", "merge.peernote.driver").out == "pnmerge git-driver %O %A %B -- %P\n")
        #expect(try repo.git("config", "--global", "--get", "diff.peernote.textconv").out == "pnmerge textconv --\n")
        #expect(try repo.tryGit(["config", "--local", "--get", "merge.peernote.driver"]).status != 0, "nothing local")
        #expect(try repo.git("check-attr", "merge", "--", "x.peernote").out == "x.peernote: merge: peernote\n")

        let second = try repo.pnmerge(["git-setup", "--global"], in: outside.url.path)
        #expect(second.status == 0)
        #expect(second.out.contains("Nothing to change"), "\(second.out)")
        #expect(try String(contentsOfFile: attributesPath, encoding: .utf8) == "*.peernote merge=peernote diff=peernote -text\n")

        // Without --global, outside a repository: a usage error that says what to do.
        let local = try repo.pnmerge(["git-setup"], in: outside.url.path)
        #expect(local.status == ExitStatus.usage.rawValue)
        #expect(local.err.contains("not inside a git work tree"))
    }

    @Test("When pnmerge is not on PATH, git-setup configures the absolute path of the running binary")
    func absoluteProgramPath() throws {
        let repo = try GitRepo(withPnmergeOnPath: false)
        let r = try repo.pnmerge(["git-setup"])
        #expect(r.status == 0, "\(r.err)")
        let driver = try repo.git("config", "--get", "merge.peernote.driver").out.trimmingCharacters(in: .newlines)
        let real = URL(fileURLWithPath: Binary.path).resolvingSymlinksInPath().path
        #expect(driver == "\(real) git-driver %O %A %B -- %P", "\(driver)")
        #expect(r.out.contains("pnmerge is not on PATH; git will run \(real)"))
        // And git can run it that way: a merge through the driver works without pnmerge on PATH.
        let base = Document(title: "T", author: "a")
        let note = base.addNote(title: "N", body: "x")
        try base.write(to: repo.path("n.peernote"), mode: .compact)
        try repo.git("add", ".gitattributes", "n.peernote")
        try repo.git("commit", "-q", "-m", "base")
        try repo.git("checkout", "-q", "-b", "other")
        try repo.edit("n.peernote", author: "b") { d in try d.insertText(note, at: 0, "b ") }
        try repo.git("commit", "-q", "-a", "-m", "b")
        try repo.git("checkout", "-q", "main")
        try repo.edit("n.peernote", author: "a") { d in try d.insertText(note, at: 1, " a") }
        try repo.git("commit", "-q", "-a", "-m", "a")
        let merge = try repo.tryGit(["merge", "--no-edit", "other"])
        #expect(merge.status == 0, "\(merge.out)\(merge.err)")
        #expect(try Document.open(repo.path("n.peernote")).notes.first?.body == "b x a")
    }

    @Test("A merge with a branch whose notebook was committed damaged: a git conflict whose work tree holds every intact change of both sides; 'git add' keeps them")
    func damagedSideIntactChangesMerged() throws {
        let repo = try GitRepo()
        try #require(try repo.pnmerge(["git-setup"]).status == 0)
        let base = Document(title: "Home", author: "carol")
        base.addNote(title: "Base")
        try base.write(to: repo.path("n.peernote"), mode: .compact)
        try repo.git("add", ".gitattributes", "n.peernote")
        try repo.git("commit", "-q", "-m", "base")
        // The phone's branch: two intact commits, then one whose file lost its last bytes (each
        // edit appends a block, so only the last block is damaged).
        try repo.git("checkout", "-q", "-b", "phone")
        for title in ["Phone 1", "Phone 2", "Phone 3"] {
            try repo.edit("n.peernote", author: "phone") { d in d.addNote(title: title) }
            if title == "Phone 3" {
                let bytes = try repo.bytes("n.peernote")
                try Data(bytes.dropLast(10)).write(to: URL(fileURLWithPath: repo.path("n.peernote")))
            }
            try repo.git("commit", "-q", "-a", "-m", title)
        }
        try repo.git("checkout", "-q", "main")
        try repo.edit("n.peernote", author: "laptop") { d in d.addNote(title: "Main 1") }
        try repo.git("commit", "-q", "-a", "-m", "main")
        let oursBefore = try repo.bytes("n.peernote")

        let merge = try repo.tryGit(["merge", "-m", "merge phone", "phone"])
        #expect(merge.status != 0, "a damaged side is a git conflict")
        let said = merge.out + merge.err
        #expect(said.contains("pnmerge: n.peernote (theirs): offset "), "\(said)")
        #expect(said.contains("new to ours and merged"), "\(said)")
        #expect(said.contains("then 'git add n.peernote' to keep it"), "\(said)")
        #expect(try !repo.git("ls-files", "-u").out.isEmpty, "the path is unmerged")
        // The work tree: ours (unchanged bytes first: an appended block) plus the phone's intact notes.
        let merged = try repo.bytes("n.peernote")
        #expect(merged.starts(with: oursBefore))
        let titles = Set(try Document.open(repo.path("n.peernote")).notes.map(\.title))
        #expect(titles == ["Base", "Main 1", "Phone 1", "Phone 2"])
        #expect(try repo.pnmerge(["validate", "n.peernote"]).status == 0)

        try repo.git("add", "n.peernote")
        try repo.git("commit", "-q", "-m", "merge phone (intact part)")
        let committed = try repo.git("show", "HEAD:n.peernote").out
        #expect(!committed.isEmpty)
        #expect(Set(try Document.open(repo.path("n.peernote")).notes.map(\.title)) == titles)
    }

    @Test("OURS committed damaged: the driver keeps its intact changes, merges THEIRS, writes a valid notebook and reports a conflict")
    func damagedOursSalvaged() throws {
        let dir = try TempDir()
        let base = Document(title: "Home", author: "carol")
        base.addNote(title: "Base")
        let mine = try Document.load(base.save(.compact))
        mine.author = "laptop"
        mine.addNote(title: "Mine 1")
        let appended = try Document.load(mine.save(.incremental))
        appended.author = "laptop"
        appended.addNote(title: "Mine 2 (lost)")
        let damaged = Array(appended.save(.incremental).dropLast(7))
        let theirs = base.fork(author: "phone")
        theirs.addNote(title: "Theirs")
        let ours = try dir.write(damaged, "ours")
        let other = try dir.write(theirs.save(), "theirs")
        let r = pnmerge(["git-driver", "", ours, other, "n.peernote"])
        #expect(r.status == ExitStatus.conflict.rawValue, "\(r.err)")
        let lines = r.err.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(r.err)")
        #expect(lines.first?.hasPrefix("pnmerge: n.peernote (ours): offset ") == true, "\(r.err)")
        #expect(lines.first?.contains("; kept its 3 intact changes (") == true, "\(r.err)")
        let result = try Document.load(try dir.bytes("ours"))
        #expect(Set(result.notes.map(\.title)) == ["Base", "Mine 1", "Theirs"])

        // THEIRS appended to the file OURS started from: held as what follows the block both
        // start with, until OURS turns out damaged; then read whole for the salvaged copy.
        let baseFile = base.save(.compact)
        let sharing = try Document.load(baseFile)
        sharing.author = "tablet"
        sharing.addNote(title: "Theirs, appended")
        let appendedTheirs = sharing.save(.incremental)
        #expect(Array(appendedTheirs.prefix(baseFile.count)) == baseFile && Array(damaged.prefix(baseFile.count)) == baseFile)
        let ours2 = try dir.write(damaged, "ours2")
        let other2 = try dir.write(appendedTheirs, "theirs2")
        let again = pnmerge(["git-driver", "", ours2, other2, "n.peernote"])
        #expect(again.status == ExitStatus.conflict.rawValue, "\(again.err)")
        #expect(again.err.split(separator: "\n").count == 2, "\(again.err)")
        let result2 = try Document.load(try dir.bytes("ours2"))
        #expect(Set(result2.notes.map(\.title)) == ["Base", "Mine 1", "Theirs, appended"])
    }
}
