import CAllocator
import PeerNoteCommands

_ = pn_tune_allocator_for_command()
PeerNoteCLI.main()
