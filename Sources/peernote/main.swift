import PeerNoteCommands

PeerNoteCLI.main()
