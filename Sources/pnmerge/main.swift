import Foundation
import PNMergeCommands

exit(PNMerge.execute(Array(CommandLine.arguments.dropFirst())))
