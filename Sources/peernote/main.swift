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
exit(PeerNoteCLI.execute(Array(CommandLine.arguments.dropFirst())))
