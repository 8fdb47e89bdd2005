import ArgumentParser

/// `pnbench`: measures PeerNote on the public editing traces (see Benchmarks/README.md).
public struct PNBench: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "pnbench",
        abstract: "Measure PeerNote on real editing traces (gzipped JSON, as published).",
        discussion: """
            TRACE is a path to a .json.gz trace, or the name of one (e.g. automerge-paper) in the \
            traces directory: --traces-dir, else $PEERNOTE_TRACES, else <repo root>/../shared/traces.
            Cut a trace short with --fraction 1/8 or --limit N (transactions), as `pnbench scale` \
            does to show how the costs grow, or to profile a smaller run under valgrind.
            """,
        version: "1",
        subcommands: [Run.self, Replay.self, Diverge.self, Scale.self, Profile.self, Origins.self, NotebookCommand.self]
    )

    public init() {}
}
