#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PNMergeCommands

exit(PNMerge.execute(Array(CommandLine.arguments.dropFirst())))
