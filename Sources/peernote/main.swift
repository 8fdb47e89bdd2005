#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CAllocator
import PeerNote
import PeerNoteCLISupport
import PeerNoteCommands

_ = pn_tune_allocator_for_command()
RawArguments.requireUTF8(tool: "peernote")
// Ctrl-C or SIGTERM mid-write leaves no temporary file beside the document.
FileStore.removeTemporariesOnSignals()
// The process ends when the command does: the documents it read and made are not freed first
// (`ProcessEnd`; locks are still let go, and every write is complete, before it returns).
exit(ProcessEnd.run(endingProcess: true) { PeerNoteCLI.execute(Array(CommandLine.arguments.dropFirst())) })
