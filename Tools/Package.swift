// swift-tools-version:6.1
import PackageDescription

// Everything around the Tessera library that users of the library do not need: the `tessera` command
// (demo, benchmarks, table and cache tools), the stress and crash-test writer, the shared test support,
// and all tests. It depends on the library in the parent directory by path; `make test` and `make demo`
// build this package (docs/ARCHITECTURE.md).

let package = Package(
    name: "TesseraTools",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tessera", targets: ["TesseraCLI"]),
        .executable(name: "TesseraStress", targets: ["TesseraStress"]),
    ],
    dependencies: [
        .package(name: "Tessera", path: "..", traits: ["HTTPLoader", "Serving", "Vapor"]),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.100.0"),
        // `tessera health`'s one GET (the library's TesseraHTTP brings it in already).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // The test-support origin (TesseraTestSupport) on 127.0.0.1 for the tests, the demo and the benchmarks.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // 1.11: `LogEvent` and `LogHandler.log(event:)`, which the serve command's JSON log handler implements.
        .package(url: "https://github.com/apple/swift-log", from: "1.11.0"),
        // MetricsTestKit: the test metrics backend of the observability tests.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // NIO's HTTPTypes parts, for the memory-hit handler's tests on an EmbeddedChannel.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        // The serve command's heap gauges go into the server's own Prometheus registry.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        // `ServiceGroup`, for the tests and snippets that run `ImageService` and `HTTPDataLoader` as services.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The Vapor application of TesseraVaporTests and the documentation's Vapor snippet.
        .package(url: "https://github.com/vapor/vapor", from: "4.115.0"),
    ],
    targets: [
        // Frame statistics, the scrolling-grid model and memory readings of the demo and the benchmarks.
        .target(
            name: "TesseraMeasurement",
            dependencies: [.product(name: "Tessera", package: "Tessera")]
        ),
        // What the benchmarks and the tests both start: the one HTTP origin (Hummingbird on 127.0.0.1) of the
        // tests, the demo, `tessera bench fetch` and `TesseraStress --fetch-load`, moto, nginx's configuration,
        // child processes and program runs, raw HTTP requests, ICC profiles. The `tessera` command links this,
        // never TesseraTestSupport.
        .target(
            name: "TesseraBenchSupport",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                // lcms2, for the ICC profiles of the colour tests and `tessera bench colour` (ICCProfiles).
                "ToolsLCMS2",
            ]
        ),
        // Test support (as swift-nio's NIOTestUtils), linked only into tests and the stress tool: the stress
        // table's pixel pattern shared by `TesseraStress` and the tests, and the helpers that more than one
        // test target uses (an image service in process, test images, formats and fixtures); it re-exports
        // TesseraBenchSupport.
        .target(
            name: "TesseraTestSupport",
            dependencies: [
                "TesseraBenchSupport",
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraHTTP", package: "Tessera"),
                .product(name: "TesseraServer", package: "Tessera"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The C libraries the tools use themselves (plots with cairo, the libjpeg-turbo ceiling of `bench ingest`
        // and test JPEGs, ICC profiles with lcms2): module maps of their own, since the library exports none.
        .systemLibrary(name: "ToolsCairo", pkgConfig: "cairo"),
        .systemLibrary(name: "ToolsTurboJPEG", pkgConfig: "libturbojpeg"),
        .systemLibrary(name: "ToolsLCMS2", pkgConfig: "lcms2"),
        // glibc's allocator controls and statistics (<malloc.h>) for `tessera serve`.
        .target(name: "CHeapControl"),
        // The entropy-decoding floor of `bench ingest`: libjpeg-turbo's jpeg_read_coefficients behind one C call.
        .target(name: "CJPEGFloor", linkerSettings: [.linkedLibrary("jpeg")]),
        // The `tessera` command.
        .executableTarget(
            name: "TesseraCLI",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraHTTP", package: "Tessera"),
                .product(name: "TesseraServer", package: "Tessera"),
                "ToolsCairo", "ToolsTurboJPEG",
                "TesseraMeasurement", "TesseraBenchSupport", "CHeapControl", "CJPEGFloor",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The gallery's test mode (`serve --gallery-report`): its route, and its script compiled in as bytes.
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.embedInCode("Serve/Resources/gallery-test-mode.js")]
        ),
        // Writer process for the image table crash test (killed with SIGKILL at random points).
        // Also the load tool for ImageManager (`--fetch-load`) against a TesseraTestSupport origin.
        .executableTarget(
            name: "TesseraStress",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraHTTP", package: "Tessera"),
                "TesseraTestSupport",
            ]
        ),
        // Unit and integration tests (debug build), one target per layer of the library (as the library's own
        // targets), then the server and the command-line tools; they launch the built `TesseraStress` and run
        // the CLI's commands in process. Helpers more than one target uses live in TesseraTestSupport.
        .testTarget(
            name: "TesseraCoreTests",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraTesting", package: "Tessera"),
                "TesseraTestSupport",
            ]
        ),
        .testTarget(
            name: "TesseraImagingTests",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                "TesseraTestSupport", "ToolsCairo", "ToolsTurboJPEG", "ToolsLCMS2",
            ]
        ),
        .testTarget(
            name: "TesseraTablesTests",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                "TesseraTestSupport",
            ]
        ),
        .testTarget(
            name: "TesseraRemoteTests",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraTesting", package: "Tessera"),
                .product(name: "TesseraHTTP", package: "Tessera"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                "TesseraTestSupport",
            ]
        ),
        .testTarget(
            name: "TesseraServerTests",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraHTTP", package: "Tessera"),
                .product(name: "TesseraServer", package: "Tessera"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "TesseraTestSupport",
            ]
        ),
        // The image routes in a real Vapor application, in process (TesseraVapor).
        .testTarget(
            name: "TesseraVaporTests",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraServer", package: "Tessera"),
                .product(name: "TesseraVapor", package: "Tessera"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                "TesseraTestSupport",
            ]
        ),
        // The `tessera` command's own code (log format, gallery test mode, probe), the demo's measurements and
        // the repository's documents.
        .testTarget(
            name: "TesseraToolsTests",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraServer", package: "Tessera"),
                .product(name: "Logging", package: "swift-log"),
                "TesseraCLI", "TesseraMeasurement", "TesseraTestSupport", "CHeapControl",
            ]
        ),
        // The documentation's ```swift blocks (README.md, docs/*.md, the DocC articles), compiled: the
        // DocumentationSnippets plugin runs TesseraSnippetExtractor on every build, so the generated sources are
        // never committed and never stale (docs/DEVELOPMENT.md, "Documentation").
        .executableTarget(name: "TesseraSnippetExtractor"),
        .plugin(
            name: "DocumentationSnippets",
            capability: .buildTool(),
            dependencies: ["TesseraSnippetExtractor"]
        ),
        .testTarget(
            name: "TesseraSnippetTests",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraTesting", package: "Tessera"),
                .product(name: "TesseraHTTP", package: "Tessera"),
                .product(name: "TesseraServer", package: "Tessera"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "TesseraVapor", package: "Tessera"),
                .product(name: "Vapor", package: "vapor"),
                "TesseraTestSupport",
            ],
            // A snippet shows a value it makes without using it (`let png = …`): not worth a warning here.
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])],
            plugins: ["DocumentationSnippets"]
        ),
        // End to end: the release `tessera` binary (TESSERA_RELEASE_BINARY, set by `make test`) against real
        // photographs and a real nginx; checks what each command produces.
        .testTarget(
            name: "TesseraEndToEndTests",
            dependencies: [
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraHTTP", package: "Tessera"),
                .product(name: "TesseraTesting", package: "Tessera"),
                "TesseraMeasurement", "TesseraTestSupport",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Every test target's own code is compiled without optimisation, also in `make test`'s release build: what the
// tests exercise (the library, the `tessera` command, the test support) stays optimised, while whole-module
// optimisation of about 22,000 lines of test code and `#expect` expansions would add minutes to every build
// and make no test stronger (docs/DEVELOPMENT.md, "Where `make test`'s time goes"). The flag follows SwiftPM's
// `-O`, and the last optimisation level given wins.
for target in package.targets where target.type == .test {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Onone"])]
}
