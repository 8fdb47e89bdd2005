#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CAllocator
import PNMergeCommands

_ = pn_tune_allocator_for_command()
exit(PNMerge.execute(Array(CommandLine.arguments.dropFirst())))
