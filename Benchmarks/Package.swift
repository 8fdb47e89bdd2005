// swift-tools-version:6.0
// The PeerNote benchmark harness: its own package, depending on the project by path,
// so that the library's package stays free of benchmark-only code and dependencies.
import PackageDescription

let package = Package(
    name: "PeerNoteBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "PeerNote", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // gunzip for the published .json.gz traces (the library's own Gzip helper is internal).
        .systemLibrary(
            name: "CLibDeflateBench",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]
        ),
        .target(
            name: "PNBenchKit",
            dependencies: [
                "CLibDeflateBench",
                .product(name: "PeerNote", package: "PeerNote"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "pnbench", dependencies: ["PNBenchKit"]),
    ],
    swiftLanguageModes: [.v6]
)
