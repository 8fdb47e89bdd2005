import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PeerNote
import PeerNoteCLISupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PNMerge {
    /// `pnmerge git-setup [--global] [--hooks]`: make git merge and diff `.peernote` files with pnmerge.
    struct GitSetup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "git-setup",
            abstract: "Set up git to merge and diff .peernote files with pnmerge.",
            discussion: """
            Adds the line '*.peernote merge=peernote diff=peernote -text' to the repository's \
            .gitattributes (with --global: to the file named by 'git config --global \
            core.attributesFile', which is set to ~/.config/git/attributes, or \
            $XDG_CONFIG_HOME/git/attributes when XDG_CONFIG_HOME is set, when unset) and \
            sets merge.peernote.name, merge.peernote.driver ('pnmerge git-driver %O %A %B -- %P') \
            and diff.peernote.textconv ('pnmerge textconv --') in the repository's git config \
            (with --global: in your global git config). The commands name 'pnmerge' when it \
            is on PATH, otherwise the absolute path of the running pnmerge.

            --hooks also installs a pre-commit hook in the current repository that checks \
            every staged .peernote file with 'pnmerge validate' and refuses the commit when \
            one is damaged, with the command that recovers its intact changes when it has some \
            ('git show :PATH | pnmerge salvage - -o NEW.peernote'). An existing pre-commit hook that pnmerge did not write is never \
            changed: the lines to add to it are printed and the exit status is 73.

            Running it again changes nothing that is already in place. Each step is printed.
            """
        )

        @Flag(name: .long, help: "Configure git for every repository of this user instead of the current one.")
        var global = false

        @Flag(name: .long, help: "Also install a pre-commit hook that refuses damaged .peernote files (current repository).")
        var hooks = false

        func run() throws {
            let setup = GitSetupOperation(directory: FileManager.default.currentDirectoryPath, global: global, hooks: hooks,
                                          program: GitSetupOperation.programName(), environment: ProcessInfo.processInfo.environment)
            let outcome = try setup.perform()
            try Console.current.emit(outcome.lines.joined(separator: "\n") + "\n")
            if let refused = outcome.refusedHook {
                throw CLIFailure(.cannotCreate, "\(refused): a pre-commit hook already exists and was not written by pnmerge; left it unchanged (add the lines printed above to it)")
            }
        }
    }
}

/// What `git-setup` does, apart from argument parsing: attributes, config and the hook.
struct GitSetupOperation {
    /// The attributes line that routes `.peernote` files to the driver and textconv. `-text`:
    /// a document is binary, and a `* text` or `eol=crlf` rule elsewhere in the file would
    /// otherwise have git rewrite its line endings, damaging it.
    static let attributesLine = "*.peernote merge=peernote diff=peernote -text"
    /// Lines earlier versions wrote, replaced where they stand by `attributesLine`.
    static let olderAttributesLines = ["*.peernote merge=peernote diff=peernote"]
    static let hookBegin = "# >>> pnmerge pre-commit check (installed by pnmerge git-setup --hooks) >>>"
    static let hookEnd = "# <<< pnmerge pre-commit check <<<"

    /// What was done, line by line, and the hook left alone (if any).
    struct Outcome {
        var lines: [String] = []
        var refusedHook: String?
        /// Whether anything was written (a second run writes nothing).
        var changed = false
    }

    var directory: String
    var global: Bool
    var hooks: Bool
    /// How git should run pnmerge: `pnmerge`, or a shell-quoted absolute path.
    var program: String
    var environment: [String: String]

    var git: GitRunner { GitRunner(directory: directory) }
    var scope: [String] { global ? ["--global"] : ["--local"] }

    func perform() throws(CLIFailure) -> Outcome {
        var outcome = Outcome()
        var repositoryRoot: String?
        if !global || hooks {
            let top = try git.run(["rev-parse", "--show-toplevel"])
            guard top.status == 0, !top.value.isEmpty else {
                throw CLIFailure(.usage, "\(directory) is not inside a git work tree; run git-setup in your repository" + (global ? " (--hooks installs the hook there)" : ", or use --global"))
            }
            repositoryRoot = top.value
        }
        if program != "pnmerge" {
            outcome.lines.append("pnmerge is not on PATH; git will run \(program)")
        }

        // Everything that would refuse is checked before anything is changed: the attributes
        // file and the hook, each one that would be rewritten.
        let attributes: String
        if global {
            attributes = try globalAttributesFile(&outcome, settingIt: false)
        } else {
            attributes = (repositoryRoot ?? directory) + "/.gitattributes"
        }
        // A repository's .gitattributes that is a symbolic link: git does not read it (it opens the
        // file without following links), and writing through it would change a file the
        // repository may not own (a clone can ship a link to ~/.bashrc).
        if !global, Self.isSymbolicLink(attributes) {
            throw CLIFailure(.cannotCreate, "\(attributes): is a symbolic link, which git does not read as attributes; not changed (replace it with a regular file, then run git-setup again)")
        }
        _ = try Self.ensureLine(Self.attributesLine, in: attributes, replacing: Self.olderAttributesLines, dryRun: true)
        var hookPath: String?
        if hooks, let root = repositoryRoot {
            let path = try self.hookPath(root: root)
            _ = try Self.installHook(at: path, program: program, dryRun: true)
            hookPath = path
        }

        // 1. The attributes line.
        if global { _ = try globalAttributesFile(&outcome, settingIt: true) }
        let (line, added) = try Self.ensureLine(Self.attributesLine, in: attributes, replacing: Self.olderAttributesLines)
        outcome.lines.append(line)
        outcome.changed = outcome.changed || added

        // 2. The driver and textconv config.
        let settings = [
            ("merge.peernote.name", "PeerNote notebook merge (pnmerge)"),
            // `--` before the paths git adds: a notebook named `-notes.peernote` at the top of
            // the repository would otherwise read as options.
            ("merge.peernote.driver", "\(program) git-driver %O %A %B -- %P"),
            ("diff.peernote.textconv", "\(program) textconv --"),
        ]
        let which = global ? "global" : "repository"
        for (key, value) in settings {
            let current = try git.run(["config"] + scope + ["--get", key])
            if current.status == 0 && current.value == value {
                outcome.lines.append("git config (\(which)) \(key) is already \(Self.quoted(value))")
                continue
            }
            try git.require(["config"] + scope + [key, value])
            outcome.changed = true
            let was = current.status == 0 ? " (was \(Self.quoted(current.value)))" : ""
            outcome.lines.append("git config (\(which)) \(key) set to \(Self.quoted(value))\(was)")
        }

        // 3. The pre-commit hook.
        if let hookPath {
            switch try Self.installHook(at: hookPath, program: program) {
            case .installed:
                outcome.lines.append("\(hookPath): installed (refuses commits of damaged .peernote files)")
                outcome.changed = true
            case .updated:
                outcome.lines.append("\(hookPath): updated pnmerge's check")
                outcome.changed = true
            case .unchanged: outcome.lines.append("\(hookPath): already installed")
            case .refused:
                outcome.lines.append("\(hookPath): exists and was not written by pnmerge; left it unchanged. To check staged .peernote files, add these lines to it (before any final exit):")
                outcome.lines.append(Self.hookBlock(program: program))
                outcome.refusedHook = hookPath
            }
        }
        outcome.lines.append(outcome.changed ? "git now merges .peernote files with pnmerge and shows their notes in diffs."
                                     : "Nothing to change: git was already set up for .peernote files.")
        return outcome
    }

    /// The global attributes file: `core.attributesFile`, set to ~/.config/git/attributes
    /// (or $XDG_CONFIG_HOME/git/attributes) when unset.
    /// `settingIt`: set `core.attributesFile` when it is unset (else only say which file it would be).
    private func globalAttributesFile(_ outcome: inout Outcome, settingIt: Bool) throws(CLIFailure) -> String {
        let current = try git.run(["config", "--global", "--path", "--get", "core.attributesFile"])
        if current.status == 0, !current.value.isEmpty { return current.value }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? PathText.homeDirectory()
        let file: String, setting: String
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            file = xdg + "/git/attributes"
            setting = file
        } else {
            file = home + "/.config/git/attributes"
            setting = "~/.config/git/attributes"
        }
        guard settingIt else { return file }
        try git.require(["config", "--global", "core.attributesFile", setting])
        outcome.changed = true
        outcome.lines.append("git config (global) core.attributesFile set to \(Self.quoted(setting))")
        return file
    }

    /// The pre-commit hook's path (`git rev-parse --git-path`, so core.hooksPath and worktrees are honoured).
    private func hookPath(root: String) throws(CLIFailure) -> String {
        let path = try git.require(["rev-parse", "--git-path", "hooks/pre-commit"]).value
        return path.hasPrefix("/") ? path : PathText.appending(path, to: directory)
    }

    /// Appends `line` to the file at `path` unless a line with the same fields is there, or puts it
    /// in place of the first line with the fields of one of `older`; says which, and whether it wrote.
    /// With `dryRun`, only checks: throws where the write would be refused, writes nothing.
    static func ensureLine(_ line: String, in path: String, replacing older: [String] = [], dryRun: Bool = false) throws(CLIFailure) -> (String, Bool) {
        var text = ""
        // Bytes that are not UTF-8 (a pattern in Latin-1) are read as U+FFFD, which is enough to
        // find the line; the file is rewritten only when it is valid UTF-8 (`checkWritable`).
        var invalidAt: Int?
        if FileManager.default.fileExists(atPath: path) {
            let bytes = try readBytes(path)
            invalidAt = UTF8Bytes.firstInvalid(bytes)
            text = String(decoding: bytes, as: UTF8.self)
        }
        func checkWritable() throws(CLIFailure) {
            try refuseRewrite(path, invalidAt: invalidAt, advice: "add this line to it by hand: \(quoted(line))")
        }
        // Lines split at LF bytes (a CRLF file, which git checks out under `eol=crlf`, keeps its CR
        // on each line, where it counts as white space); lines written take the file's ending.
        func fields(_ s: Substring) -> [Substring] { s.split(whereSeparator: \.isWhitespace) }
        let want = fields(Substring(line))
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { Substring(String($0)) }
        if lines.contains(where: { fields($0) == want }) {
            return ("\(path) already has \(quoted(line))", false)
        }
        let crlf = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).dropLast().contains { $0.last == "\r" }
        let olderFields = older.map { fields(Substring($0)) }
        if let i = lines.firstIndex(where: { olderFields.contains(fields($0)) }) {
            let was = String(lines[i])
            lines[i] = Substring(line + (was.unicodeScalars.last == "\r" ? "\r" : ""))
            text = lines.joined(separator: "\n")
            try checkWritable()
            if dryRun { return ("", true) }
            do { try FileStore.writeAtomically(Array(text.utf8), to: path) } catch { throw CLIFailure(writing: error) }
            return ("\(path): replaced \(quoted(fields(Substring(was)).joined(separator: " "))) by \(quoted(line))", true)
        }
        let ending = crlf ? "\r\n" : "\n"
        if !text.isEmpty && text.unicodeScalars.last != "\n" { text += ending }
        text += line + ending
        try checkWritable()
        if dryRun { return ("", true) }
        try createParent(of: path)
        do { try FileStore.writeAtomically(Array(text.utf8), to: path) } catch { throw CLIFailure(writing: error) }
        return ("\(path): added \(quoted(line))", true)
    }

    /// What happened to the hook file.
    enum HookResult { case installed, updated, unchanged, refused }

    /// Writes the hook, replaces pnmerge's marked block in it, or leaves a foreign hook alone.
    /// With `dryRun`, only checks: throws where the write would be refused, writes nothing.
    static func installHook(at path: String, program: String, dryRun: Bool = false) throws(CLIFailure) -> HookResult {
        let block = hookBlock(program: program)
        let whole = "#!/bin/sh\n" + block
        guard FileManager.default.fileExists(atPath: path) else {
            // A link to nothing: the hook would be created wherever it points.
            if isSymbolicLink(path) {
                throw CLIFailure(.cannotCreate, "\(path): is a symbolic link to a file that does not exist; not created (remove the link, or make its target, then run git-setup --hooks again)")
            }
            if dryRun { return .installed }
            try createParent(of: path)
            try write(whole, to: path, makeExecutable: true)
            return .installed
        }
        let bytes = try readBytes(path)
        let text = String(decoding: bytes, as: UTF8.self)
        guard let begin = text.firstRange(of: hookBegin), let end = text[begin.upperBound...].firstRange(of: hookEnd) else {
            return .refused
        }
        var endOfBlock = end.upperBound
        if endOfBlock < text.endIndex && text[endOfBlock] == "\n" { endOfBlock = text.index(after: endOfBlock) }
        var updated = text
        updated.replaceSubrange(begin.lowerBound ..< endOfBlock, with: block)
        if updated == text { return .unchanged }
        try refuseRewrite(path, invalidAt: UTF8Bytes.firstInvalid(bytes),
                          advice: "edit pnmerge's part of it by hand, or remove the file and run git-setup --hooks again")
        if dryRun { return .updated }
        try write(updated, to: path, makeExecutable: false)
        return .updated
    }

    /// The shell lines of the check: every staged .peernote file that is added, copied, modified,
    /// renamed (git lists a rename under its new name) or changed in type is read from
    /// the index and validated; any damaged one stops the commit. A symbolic link (mode 120000, whose
    /// blob is the link's target) or a submodule named *.peernote is not a document and is skipped.
    /// validate reads the staged blob from a pipe, so its line names no salvage command; when
    /// `pnmerge salvage` recovers something from that blob, the hook's line ends with a command
    /// that does it from any folder of the work tree, whatever the work-tree file holds:
    /// `git show :PATH | pnmerge salvage - -o NEW.peernote` (PATH in single quotes, by
    /// `git rev-parse --sq-quote`, when it holds anything but letters, digits and `._/+-`;
    /// pnmerge named as the hook runs it: `program`, an absolute path when pnmerge was not on
    /// PATH at setup, where `pnmerge` would not be found either).
    /// `program` is one shell word.
    static func hookBlock(program: String) -> String {
        """
        \(hookBegin)
        # Refuses the commit when a staged .peernote file is damaged (pnmerge validate), and says
        # how to recover its intact changes when it has some (pnmerge salvage).
        # Refuses a merge (or cherry-pick, revert, rebase step) that stages one side of a notebook
        # as it was, when git merged it without pnmerge's driver (not set up in this clone): git
        # then calls it binary, keeps one side, and `git add` drops the other side's edits.
        if ! git config --get merge.peernote.driver >/dev/null &&
            { git rev-parse -q --verify MERGE_HEAD || git rev-parse -q --verify CHERRY_PICK_HEAD ||
              git rev-parse -q --verify REVERT_HEAD || git rev-parse -q --verify REBASE_HEAD; } >/dev/null; then
            git ls-files --cached -z -- '*.peernote' | xargs -0 sh -c '
            status=0
            for f do
                case $(git check-attr merge -- "$f") in *": merge: peernote") ;; *) continue ;; esac
                staged=$(git rev-parse -q --verify ":0:$f") || continue
                sides=$(git ls-files --resolve-undo -- ":(literal)$f" | awk "\\$3 == 2 || \\$3 == 3 { print \\$2 }")
                for side in $sides; do
                    if [ "$side" = "$staged" ]; then
                        case $f in *[!A-Za-z0-9._/+-]*) q=$(git rev-parse --sq-quote "$f"); q=${q# } ;; *) q=$f ;; esac
                        printf "pre-commit: %s: git could not merge this notebook: this clone has no pnmerge merge driver, so one side was staged as it was and the other side'"'"'s edits would be lost; to merge both sides'"'"' edits, run pnmerge git-setup, then git checkout -m %s, then git add %s\\n" "$f" "$q" "$q" >&2
                        status=1
                        break
                    fi
                done
            done
            exit $status' sh || {
                echo "pre-commit: commit refused: a notebook would keep only one side of the merge (set up the merge driver as above)" >&2
                exit 1
            }
        fi
        git diff --cached --name-only --diff-filter=ACMRT -z -- '*.peernote' |
        xargs -0 sh -c '
        status=0
        for f do
            case $(git ls-files --stage -- ":(literal)$f") in 120000*|160000*) continue ;; esac
            if ! problem=$(git cat-file blob ":0:$f" | "$0" validate - 2>&1 >/dev/null); then
                problem=${problem#<stdin>: }
                if git cat-file blob ":0:$f" | "$0" salvage - -o - >/dev/null 2>&1; then
                    case $f in
                    *[!A-Za-z0-9._/+-]*) q=$(git rev-parse --sq-quote ":$f"); q=${q# } ;;
                    *) q=:$f ;;
                    esac
                    case $0 in
                    *[!A-Za-z0-9._/+-]*) p=$(git rev-parse --sq-quote "$0"); p=${p# } ;;
                    *) p=$0 ;;
                    esac
                    problem="$problem; recover its intact changes with: git show $q | $p salvage - -o NEW.peernote"
                fi
                printf "pre-commit: %s: %s\\n" "$f" "$problem" >&2
                status=1
            fi
        done
        exit $status' \(program) || {
            echo "pre-commit: commit refused: a staged .peernote file is damaged (fix or unstage it)" >&2
            exit 1
        }
        \(hookEnd)

        """
    }

    /// How git should run pnmerge: `pnmerge` when it is on PATH, else this executable's absolute path (shell-quoted).
    static func programName(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let dirs = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        if dirs.contains(where: { !$0.isEmpty && FileManager.default.isExecutableFile(atPath: $0 + "/pnmerge") }) {
            return "pnmerge"
        }
        return shellQuoted(PathText.currentExecutable() ?? CommandLine.arguments.first ?? "pnmerge")
    }

    /// `word` as one shell word: unchanged when it holds only safe characters, else in single quotes.
    static func shellQuoted(_ word: String) -> String { ShellWord.quoted(word) }

    static func quoted(_ s: String) -> String { "'" + s + "'" }

    private static func readBytes(_ path: String) throws(CLIFailure) -> [UInt8] {
        do { return try FileStore.read(path) } catch { throw CLIFailure(.noInput, error.description) }
    }

    /// git-setup rewrites a file whole, from its text: one that is not valid UTF-8 (`invalidAt`,
    /// the first bad byte's offset) is refused (65) with `advice`, since each bad byte would come
    /// back as U+FFFD and change a pattern or a comment of the user's.
    private static func refuseRewrite(_ path: String, invalidAt: Int?, advice: String) throws(CLIFailure) {
        guard let offset = invalidAt else { return }
        throw CLIFailure(.invalidInput, "\(path): offset \(offset): not valid UTF-8 text; not changed (\(advice))")
    }

    /// Whether `path` itself is a symbolic link (not followed).
    static func isSymbolicLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK
    }

    private static func createParent(of path: String) throws(CLIFailure) {
        let parent = PathText.deletingLastComponent(path)
        guard !parent.isEmpty else { return }
        if let why = PathText.createDirectories(parent) {
            throw CLIFailure(.ioError, "\(parent): cannot create the directory: \(why)")
        }
    }

    /// Writes a script atomically (an existing file keeps its permissions; a new one is made executable).
    private static func write(_ text: String, to path: String, makeExecutable: Bool) throws(CLIFailure) {
        do { try FileStore.writeAtomically(Array(text.utf8), to: path) } catch { throw CLIFailure(writing: error) }
        guard !makeExecutable || chmod(path, 0o755) == 0 else {
            throw CLIFailure(.ioError, "\(path): cannot make it executable: \(String(cString: strerror(errno)))")
        }
    }
}
