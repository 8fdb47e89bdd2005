// swift-tools-version:6.0
// libFuzzer targets for PeerNote. A separate package that uses the library like any client
// (public API only), so fuzzing flags never touch the main build. See docs/ROBUSTNESS.md.
//
//   make fuzz FUZZ_SECONDS=60        (builds with make fuzz-build, then runs every target)
//
// Build with make fuzz-build, not a bare `swift build --sanitize=fuzzer --sanitize=address`: that
// passes the two sanitizers to swiftc in no fixed order, and with -sanitize=fuzzer first no Swift
// code is instrumented for coverage. make fuzz-build adds -sanitize-coverage explicitly.
import PackageDescription

/// Each target is one `@_cdecl("LLVMFuzzerTestOneInput")` function and no `main`: libFuzzer
/// supplies `main`. `-parse-as-library` keeps swiftc from treating the single file as a script
/// with top-level code (which would emit a `main` symbol that clashes with libFuzzer's).
func fuzzTarget(_ name: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport", .product(name: "PeerNote", package: "PeerNote")],
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    )
}

let package = Package(
    name: "PeerNoteFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "PeerNote", path: "..")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "PeerNote", package: "PeerNote")]),
        fuzzTarget("FuzzLoad"),
        fuzzTarget("FuzzMerge"),
        fuzzTarget("FuzzDecodeCBOR"),
        fuzzTarget("FuzzColumns"),
        fuzzTarget("FuzzSalvage"),
        fuzzTarget("FuzzMergeHistories"),
    ],
    swiftLanguageModes: [.v6]
)
