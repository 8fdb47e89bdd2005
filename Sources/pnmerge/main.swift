#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CAllocator
import PNMergeCommands
import PeerNoteCLISupport

_ = pn_tune_allocator_for_command()
RawArguments.requireUTF8(tool: "pnmerge")
exit(PNMerge.execute(Array(CommandLine.arguments.dropFirst())))
