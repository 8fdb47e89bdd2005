#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CAllocator
import PNMergeCommands
import PeerNote
import PeerNoteCLISupport

_ = pn_tune_allocator_for_command()
RawArguments.requireUTF8(tool: "pnmerge")
// Ctrl-C or SIGTERM mid-write leaves no temporary file beside the document.
FileStore.removeTemporariesOnSignals()
// The process ends when the command does: the documents it read and made are not freed first
// (`ProcessEnd`; locks are still let go, and every write is complete, before it returns).
exit(ProcessEnd.run(endingProcess: true) { PNMerge.execute(Array(CommandLine.arguments.dropFirst())) })
