import Foundation
import PeerNote
import Testing
import TestSupport

/// A clone whose `.gitattributes` names pnmerge's driver while its git config lacks it: git
/// merges a notebook edited on two branches as binary and keeps one side. The tools and the
/// pre-commit hook say so, and how to merge both sides; following that merges them.
@Suite("git: a clone without the merge driver")
struct GitWithoutDriverTests {
    /// A repository set up with the hook, whose driver config is then removed (as in a clone that
    /// copied the hook but not the config), with `notes.peernote` edited on `feature` and `main`
    /// and `git merge feature` stopped on it.
    static func stoppedMerge() throws -> GitRepo {
        let repo = try GitRepo()
        let setup = try repo.pnmerge(["git-setup", "--hooks"])
        try #require(setup.status == 0, "\(setup.err)")
        try repo.git("config", "--unset", "merge.peernote.driver")
        try repo.git("config", "--unset", "merge.peernote.name")
        let base = Document(title: "Home", author: "carol")
        base.addNote(title: "Plan", body: "start")
        try base.write(to: repo.path("notes.peernote"), mode: .compact)
        try repo.git("add", ".gitattributes", "notes.peernote")
        try repo.git("commit", "-q", "-m", "base")
        try repo.git("checkout", "-q", "-b", "feature")
        try repo.edit("notes.peernote", author: "bob") { d in d.addNote(title: "From feature", body: "f") }
        try repo.git("commit", "-q", "-a", "-m", "feature")
        try repo.git("checkout", "-q", "main")
        try repo.edit("notes.peernote", author: "alice") { d in d.addNote(title: "From main", body: "m") }
        try repo.git("commit", "-q", "-a", "-m", "main")
        let merge = try repo.tryGit(["merge", "-q", "feature"])
        try #require(merge.status != 0, "git merged without the driver: \(merge.out)")
        try #require((merge.out + merge.err).contains("Cannot merge binary files"), "\(merge.out)\(merge.err)")
        return repo
    }

    static let recovery = "run pnmerge git-setup, then git checkout -m notes.peernote, then git add notes.peernote"

    func peernote(_ repo: GitRepo, _ args: [String]) throws -> RunResult {
        try Command.run(Tool.peernote.require().path, args, in: repo.root, environment: repo.environment)
    }

    @Test("validate and peernote name the unmerged notebook and the way to merge both sides; edits are refused, reading warns")
    func toolsNotice() throws {
        let repo = try Self.stoppedMerge()
        let before = try repo.bytes("notes.peernote")

        let validate = try repo.pnmerge(["validate", "notes.peernote"])
        #expect(validate.status == 1, "\(validate.out)\(validate.err)")
        #expect(validate.err.contains("notes.peernote: git could not merge this notebook: this clone has no pnmerge merge driver"), "\(validate.err)")
        #expect(validate.err.hasSuffix(Self.recovery + "\n"), "\(validate.err)")
        #expect(validate.err.split(separator: "\n").count == 1)

        let list = try peernote(repo, ["list", "notes.peernote"])
        #expect(list.status == 0, "\(list.err)")
        #expect(list.err.contains("peernote: warning: notes.peernote: git could not merge this notebook"), "\(list.err)")

        let add = try peernote(repo, ["add", "notes.peernote", "--title", "During the merge", "--author", "ann"])
        #expect(add.status == 1, "\(add.out)\(add.err)")
        #expect(add.err.contains(Self.recovery + "; nothing was changed"), "\(add.err)")
        #expect(try repo.bytes("notes.peernote") == before)
    }

    @Test("The pre-commit hook refuses to commit one side staged as it was, and the steps it names merge both sides")
    func hookRefusesThenRecoveryMerges() throws {
        let repo = try Self.stoppedMerge()
        try repo.git("add", "notes.peernote")
        let commit = try repo.tryGit(["commit", "--no-edit"])
        #expect(commit.status != 0, "the merge was committed with one side: \(commit.out)")
        #expect(commit.err.contains("pre-commit: notes.peernote: git could not merge this notebook"), "\(commit.err)")
        #expect(commit.err.contains(Self.recovery), "\(commit.err)")

        // The steps the line names.
        let setup = try repo.pnmerge(["git-setup"])
        #expect(setup.status == 0, "\(setup.err)")
        try repo.git("checkout", "-m", "notes.peernote")
        try repo.git("add", "notes.peernote")
        try repo.git("commit", "-q", "--no-edit")
        let merged = try Document.open(repo.path("notes.peernote"))
        #expect(merged.notes.map(\.title).sorted() == ["From feature", "From main", "Plan"])
        #expect(try repo.pnmerge(["validate", "notes.peernote"]).status == 0)
    }

    @Test("Outside a stopped merge, or with the driver set up, validate says nothing of git")
    func noFalseAlarm() throws {
        let repo = try GitRepo()
        _ = try repo.pnmerge(["git-setup"])
        try Document(title: "Home", author: "carol").write(to: repo.path("notes.peernote"), mode: .compact)
        try repo.git("add", ".")
        try repo.git("commit", "-q", "-m", "base")
        let r = try repo.pnmerge(["validate", "notes.peernote"])
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
    }
}
