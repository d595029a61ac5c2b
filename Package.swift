// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Tessera",
    products: [
        .library(name: "Tessera", targets: ["Tessera"]),
        // The default HTTP loader for `ImageManager`, on AsyncHTTPClient; kept apart so that the core stays free of NIO.
        .library(name: "TesseraHTTP", targets: ["TesseraHTTP"]),
        .executable(name: "tessera", targets: ["TesseraCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.100.0"),
        // The test-support origin (TesseraTestSupport) on 127.0.0.1 for the tests, the demo and the benchmarks.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // C libraries, found through pkg-config; `scripts/setup` installs the Debian packages.
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CGIF", pkgConfig: "libgif", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CCairo", pkgConfig: "cairo", providers: [.apt(["libcairo2-dev"])]),
        // libjpeg's own API (libjpeg-turbo's jpeglib.h) and libdeflate, used by our codec shims below.
        .systemLibrary(name: "CJPEGLib", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        // Codec code in C: a libjpeg shim that keeps setjmp/longjmp inside C (subsamplings TurboJPEG
        // rejects; progressive files at 1/8 scale without the AC scans they do not need) and the PNG
        // fast path (libdeflate, unfiltering, box reduction on the fly).
        .target(name: "CTesseraCodecs", dependencies: ["CJPEGLib", "CDeflate"]),
        // Absorbs SIGBUS from table files truncated by another program (see its header).
        .target(name: "CTesseraGuard"),
        // The library's layers; each depends only on the ones above it (docs/ARCHITECTURE.md).
        // Imaging: pixels, codecs, drawing, and the one error type every layer throws.
        .target(
            name: "TesseraImaging",
            dependencies: ["CTurboJPEG", "CPNG", "CWebP", "CGIF", "CCairo", "CTesseraCodecs"]
        ),
        // Tables: memory-mapped image tables, and the entity/format cache over them.
        .target(
            name: "TesseraTables",
            dependencies: ["TesseraImaging", "CTesseraGuard"]
        ),
        // Remote: the image manager with its memory and disk caches, HTTP freshness and the loader protocol.
        .target(
            name: "TesseraRemote",
            dependencies: ["TesseraImaging", "TesseraTables"]
        ),
        // `import Tessera`: every layer.
        .target(
            name: "Tessera",
            dependencies: ["TesseraImaging", "TesseraTables", "TesseraRemote"]
        ),
        .target(
            name: "TesseraHTTP",
            dependencies: [
                "Tessera",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Frame statistics, the scrolling-grid model and memory readings of the demo and the benchmarks:
        // tools, not part of the library.
        .target(
            name: "TesseraMeasurement",
            dependencies: ["Tessera"]
        ),
        // Test support, in no product (as swift-nio's NIOTestUtils): the one HTTP origin (Hummingbird on
        // 127.0.0.1) of the tests, the demo, `tessera bench fetch` and `TesseraStress --fetch-load`, and
        // the stress table's pixel pattern shared by `TesseraStress` and the tests.
        .target(
            name: "TesseraTestSupport",
            dependencies: [
                "TesseraImaging", "TesseraTables",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The `tessera` command.
        .executableTarget(
            name: "TesseraCLI",
            dependencies: [
                "Tessera", "TesseraHTTP", "TesseraMeasurement", "TesseraTestSupport", "CCairo", "CTurboJPEG", "CWebP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Writer process for the image table crash test (killed with SIGKILL at random points).
        // Also the load tool for ImageManager (`--fetch-load`) against a TesseraTestSupport origin.
        .executableTarget(
            name: "TesseraStress",
            dependencies: ["Tessera", "TesseraHTTP", "TesseraTestSupport"]
        ),
        // Launches the built `TesseraStress` executable as a child process (found next to the test bundle).
        .testTarget(
            name: "TesseraTests",
            dependencies: [
                "Tessera", "TesseraImaging", "TesseraTables", "TesseraRemote", "TesseraHTTP", "TesseraCLI", "TesseraMeasurement",
                "TesseraTestSupport",
            ]
        ),
        // End to end: the release `tessera` binary (TESSERA_RELEASE_BINARY, set by `make test`) against real
        // photographs and a real nginx; checks what each command produces.
        .testTarget(
            name: "TesseraEndToEndTests",
            dependencies: ["Tessera", "TesseraMeasurement", "TesseraTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
