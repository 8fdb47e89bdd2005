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

/// A notebook git could not merge because the clone lacks pnmerge's merge driver: the
/// repository's attributes route `.peernote` files to the driver (`merge=peernote`, which
/// `pnmerge git-setup` writes and git clones), but the driver's config is not cloned, so git
/// merged the file as binary ("Cannot merge binary files"), left one side's version in the work
/// tree and lists the file as unmerged. Both sides' edits are still in git's index;
/// `recovery` says how to merge them.
///
/// `check` costs a few `stat` calls when no merge, rebase, cherry-pick or revert is in
/// progress (the only time git lists files as unmerged after a merge), and runs git only then.
public enum GitUnmergedNotebook {
    /// The steps that merge both sides once the driver is set up: `git checkout -m` makes the
    /// merge again (with the driver, from the sides git keeps in its index, also after a
    /// `git add` of one side), and `git add` marks it resolved.
    public static func recovery(_ path: String) -> String {
        let word = ShellWord.quoted(path)
        return "run pnmerge git-setup, then git checkout -m \(word), then git add \(word)"
    }

    /// The one line to print for `path` (as the user named it): nil unless git lists it as
    /// unmerged in a repository whose attributes name the driver while git's config lacks it
    /// (a conflict the driver itself reported is git's usual business), or when git cannot run.
    public static func check(_ path: String) -> String? {
        guard path != "-", let (folder, name) = resolvedFolder(of: path), let gitDir = gitDirectory(above: folder),
              operationInProgress(gitDir) else { return nil }
        guard let unmerged = git(["ls-files", "-u", "-z", "--", ":(literal)" + name], in: folder), !unmerged.isEmpty,
              let attribute = git(["check-attr", "merge", "--", name], in: folder),
              attribute.hasSuffix(": merge: peernote\n") else { return nil }
        // Set: the driver ran, and the conflict is one it reported.
        if let driver = git(["config", "--get", "merge.peernote.driver"], in: folder), !driver.isEmpty { return nil }
        return "\(path): git could not merge this notebook: this clone has no pnmerge merge driver, so git kept one side's version here "
            + "and lists the file as unmerged (both sides are in git's index); to merge both sides' edits, \(recovery(path))"
    }

    /// The absolute folder of `path`, links resolved, and the file's name in it.
    private static func resolvedFolder(of path: String) -> (String, String)? {
        let parent = PathText.deletingLastComponent(path)
        let name = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
        guard !name.isEmpty, let resolved = realpath(parent.isEmpty ? "." : parent, nil) else { return nil }
        defer { free(resolved) }
        return (String(cString: resolved), name)
    }

    /// The git directory of the work tree holding `folder`: the nearest `.git` folder above it,
    /// or the folder a `.git` file names (`gitdir: …`, a linked worktree or a submodule).
    private static func gitDirectory(above folder: String) -> String? {
        var current = folder
        while true {
            let dotGit = current == "/" ? "/.git" : current + "/.git"
            var st = stat()
            if lstat(dotGit, &st) == 0 {
                if (st.st_mode & S_IFMT) == S_IFDIR { return dotGit }
                if (st.st_mode & S_IFMT) == S_IFREG,
                   let text = try? String(contentsOfFile: dotGit, encoding: .utf8),
                   let line = text.split(separator: "\n").first, line.hasPrefix("gitdir: ") {
                    let target = String(line.dropFirst("gitdir: ".count))
                    return target.hasPrefix("/") ? target : current + "/" + target
                }
                return nil
            }
            if current == "/" { return nil }
            let parent = PathText.deletingLastComponent(current)
            current = parent.isEmpty ? "/" : parent
        }
    }

    /// Whether git is in the middle of something that can leave unmerged files.
    private static func operationInProgress(_ gitDir: String) -> Bool {
        ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "rebase-merge", "rebase-apply"].contains { name in
            var st = stat()
            return lstat(gitDir + "/" + name, &st) == 0
        }
    }

    /// What `git -C folder ARGS` prints, or nil when it fails or cannot run.
    private static func git(_ args: [String], in folder: String) -> String? {
        guard let ran = try? Subprocess.run(["git", "-C", folder] + args), ran.status == 0 else { return nil }
        return String(decoding: ran.out, as: UTF8.self)
    }
}

/// Words for a POSIX shell.
public enum ShellWord {
    /// `word` as one shell word: unchanged when it holds only safe characters, else in single quotes.
    public static func quoted(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@%,")
        if !word.isEmpty && word.allSatisfy({ safe.contains($0) }) { return word }
        // By scalars: a quote followed by a combining mark is one Character, which a
        // Character-wise replace would leave unescaped.
        var out = "'"
        for u in word.unicodeScalars {
            if u == "'" { out += "'\\''" } else { out.unicodeScalars.append(u) }
        }
        return out + "'"
    }
}
