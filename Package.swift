// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PeerNote",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "PeerNote", targets: ["PeerNote"]),
        .executable(name: "pnmerge", targets: ["pnmerge"]),
        .executable(name: "peernote", targets: ["peernote"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibCBOR",
            pkgConfig: "libcbor",
            providers: [.apt(["libcbor-dev"]), .brew(["libcbor"])]
        ),
        .systemLibrary(
            name: "CLibDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]
        ),
        // Allocator settings for the command-line tools' processes (not for the library).
        .target(name: "CAllocator"),
        // The one file-system call Swift's Glibc module does not offer (an atomic exchange).
        .target(name: "CFileSystem"),
        // Threads for the two halves of a load or a save, and a flag between them (C11 atomics;
        // Swift's `Atomic` needs macOS 15).
        .target(name: "CThreads"),
        .target(
            name: "PeerNote",
            dependencies: [
                "CLibCBOR", "CLibDeflate", "CFileSystem", "CThreads",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // Folder READMEs: what each folder owns, for people, not built.
            exclude: ["Core/README.md", "Document/README.md", "Encoding/README.md", "Files/README.md", "Files/NotebookFolder/README.md", "Support/README.md"]
        ),
        .target(
            name: "PeerNoteCLISupport",
            dependencies: ["PeerNote", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            exclude: ["README.md"]
        ),
        // What the test targets share: one temporary directory and one way to run a built tool.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "PeerNoteTests", dependencies: ["PeerNote", "CFileSystem", "CThreads", "TestSupport"]),
        .target(
            name: "PNMergeCommands",
            dependencies: ["PeerNote", "PeerNoteCLISupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            exclude: ["README.md"]
        ),
        .executableTarget(name: "pnmerge", dependencies: ["PNMergeCommands", "PeerNote", "PeerNoteCLISupport", "CAllocator"]),
        .testTarget(name: "PNMergeTests", dependencies: ["PNMergeCommands", "PeerNote", "PeerNoteCLISupport", "CAllocator", "TestSupport"]),
        .target(
            name: "PeerNoteCommands",
            dependencies: ["PeerNote", "PeerNoteCLISupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            exclude: ["README.md"]
        ),
        .executableTarget(name: "peernote", dependencies: ["PeerNoteCommands", "PeerNote", "PeerNoteCLISupport", "CAllocator"]),
        .testTarget(name: "PeerNoteCommandsTests", dependencies: ["PeerNoteCommands", "PeerNote", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
