#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CAllocator
import PeerNoteCLISupport
import PeerNoteCommands

_ = pn_tune_allocator_for_command()
RawArguments.requireUTF8(tool: "peernote")
exit(PeerNoteCLI.execute(PeerNoteCLI.normalizedArguments(Array(CommandLine.arguments.dropFirst()))))
