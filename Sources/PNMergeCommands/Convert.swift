import ArgumentParser
import PeerNote
import PeerNoteCLISupport

extension PNMerge {
    /// `pnmerge convert FROM TO`: a single file into a notebook folder, or a folder into a file.
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "convert",
            abstract: "Turn a .peernote file into a notebook folder, or a folder into a file.",
            discussion: """
            A notebook folder (a directory whose name ends in .peernote, see NOTEBOOK FOLDERS \
            in peernote(5)) is the layout for folders that Syncthing, Dropbox, Nextcloud or \
            Unison keep in step; a single compact file is the one for git, mail or a USB \
            stick. 'convert FILE FOLDER.peernote' makes FOLDER from FILE; 'convert FOLDER \
            FILE' writes the notebook FOLDER holds as one compact FILE. FROM is left as it is.

            A TO that does not exist is created. An existing TO must hold the same notebook \
            (shared history, as merge checks): it then gains what FROM holds (a folder one \
            new chunk, a file the merge of both); another notebook is refused (exit 2) and \
            anything else (exit 73), with nothing written.
            """
        )

        @Argument(help: ArgumentHelp("The notebook to convert: a .peernote file or notebook folder.", valueName: "FROM"), completion: .file(extensions: ["peernote"]))
        var from: String

        @Argument(help: ArgumentHelp("What to make: FOLDER.peernote when FROM is a file, a file when FROM is a folder.", valueName: "TO"), completion: .file(extensions: ["peernote"]))
        var to: String

        func run() throws {
            try FileNameArgument.require([from, to])
            if from == "-" || to == "-" { throw CLIFailure(.usage, "convert reads and writes named files, not standard input or output") }
            let toFolder = !NotebookFolder.isFolder(from)
            if toFolder && !NotebookFolder(to).path.hasSuffix(".peernote") {
                throw CLIFailure(.usage, "\(Inputs.displayName(to)): a notebook folder's name must end in .peernote")
            }
            let input = try Inputs.load(from)
            let lock: FileLock
            do { lock = try Inputs.lock(Inputs.writeTarget(to)) } catch { throw CLIFailure(writing: error) }
            try withExtendedLifetime(lock) { () throws in
                if !SalvageOperation.exists(to) {
                    if toFolder {
                        do throws(FileError) { try NotebookFolder.create(at: to, input.document) } catch { throw CLIFailure(writing: error) }
                    } else {
                        let bytes = input.document.save(.compact)
                        do throws(FileError) { try Document.checkLoadable(bytes, writingTo: to) } catch { throw CLIFailure(writing: error) }
                        try SalvageOperation.createExclusively(bytes, at: to, permissionsLike: nil)
                    }
                    try Console.current.emit("Wrote \(Inputs.displayName(to)) (\(toFolder ? "a notebook folder" : "a compact file")) from \(input.name).\n")
                    return
                }
                if toFolder != NotebookFolder.isFolder(to) {
                    throw CLIFailure(.cannotCreate, "\(Inputs.displayName(to)): already exists and is not \(toFolder ? "a notebook folder" : "a file"); nothing was written")
                }
                let existing = try Inputs.load(to, pipes: false)
                try Inputs.requireShared(existing, input, action: "convert \(input.name) into \(existing.name)", nothingWritten: true)
                let document = existing.document
                let summary: MergeSummary
                do { summary = try document.merge(input.document) } catch { throw CLIFailure(.invalidInput, "\(Inputs.displayName(to)): \(error)") }
                if summary.isUpToDate {
                    try Console.current.emit("\(Inputs.displayName(to)): already holds everything \(input.name) holds; nothing was written.\n")
                    return
                }
                do throws(WriteError) {
                    if toFolder {
                        try document.write(to: to)
                    } else {
                        try document.write(over: Inputs.writeTarget(to), loaded: existing.bytes, mode: .compact)
                    }
                } catch { throw CLIFailure(writing: error) }
                try Console.current.emit("\(Inputs.displayName(to)): added what \(input.name) holds (\(summary.changesByAuthor.reduce(0) { $0 + $1.count }) changes).\n")
            }
        }
    }
}
