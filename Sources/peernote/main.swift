import CAllocator
import PeerNoteCLISupport
import PeerNoteCommands

_ = pn_tune_allocator_for_command()
RawArguments.requireUTF8(tool: "peernote")
PeerNoteCLI.main(PeerNoteCLI.normalizedArguments(Array(CommandLine.arguments.dropFirst())))
