// swift-tools-version:6.1
import PackageDescription

// The Tessera library. Every layer depends on swift-log and swift-metrics (API-only packages without
// dependencies of their own: a `Logger` and metrics in each configuration, docs/OBSERVABILITY.md);
// AsyncHTTPClient, SwiftNIO and swift-service-lifecycle (an API package: the loader is a `Service` a
// `ServiceGroup` shuts down) come in for the HTTP loader (`TesseraHTTP`) only while the `HTTPLoader`
// trait is on (the default). A dependent that declares this package with `traits: []` resolves only
// swift-log and swift-metrics, and gives `ImageManager` a `DataLoading` loader of its own.
// The `tessera` command, the benchmarks, the stress tools and the tests live in their own package in
// `Tools/` (docs/ARCHITECTURE.md).
let package = Package(
    name: "Tessera",
    // Tested on Debian Linux (x86-64). macOS 15 (Synchronization's Mutex, typed throws in the runtime) with
    // Homebrew's libraries is expected to build but is not tested here (docs/LIBRARY.md, "Version, stability, platforms").
    platforms: [.macOS(.v15)],
    products: [
        // `import Tessera`: every layer of the library.
        .library(name: "Tessera", targets: ["Tessera"]),
        // The default HTTP loader for `ImageManager`, on AsyncHTTPClient; kept apart so that the core stays free of NIO.
        .library(name: "TesseraHTTP", targets: ["TesseraHTTP"]),
        // Test support for apps built on Tessera: a scripted `DataLoading` (`MockDataLoader`, `LoadGate`), so
        // that code on `ImageManager` is tested without sockets.
        .library(name: "TesseraTesting", targets: ["TesseraTesting"]),
        // The image service behind `tessera serve`, as a Hummingbird router others can mount. Empty unless the
        // `Serving` trait is on (docs/SERVING.md).
        .library(name: "TesseraServer", targets: ["TesseraServer"]),
        // The same image routes mounted in a Vapor 4 application, the service shut down with it. Empty unless
        // the `Vapor` trait is on (docs/LIBRARY.md, "Tessera inside Vapor").
        .library(name: "TesseraVapor", targets: ["TesseraVapor"]),
    ],
    traits: [
        // `TesseraHTTP`'s `HTTPDataLoader` and `ImageManager.shared` on AsyncHTTPClient (with SwiftNIO and
        // swift-service-lifecycle). Without it the product is empty and an `ImageManager` takes your own
        // `DataLoading` loader.
        .trait(name: "HTTPLoader"),
        // `TesseraServer`: the image service (Hummingbird, swift-crypto, swift-prometheus,
        // swift-service-lifecycle; swift-log and swift-metrics every layer has already). Off by default, so
        // the library's default graph stays small.
        // Remote sources need the HTTP loader, so this trait turns `HTTPLoader` on too.
        .trait(name: "Serving", enabledTraits: ["HTTPLoader"]),
        // `TesseraVapor`: the image routes in a Vapor 4 application (Vapor and swift-http-types). Turns
        // `Serving` on, whose routes it mounts.
        .trait(name: "Vapor", enabledTraits: ["Serving"]),
        .default(enabledTraits: ["HTTPLoader"]),
    ],
    dependencies: [
        // Logging and metrics of every layer (API only; the application picks the backends).
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.100.0"),
        // The `Serving` trait's packages (TesseraServer only; swift-service-lifecycle also `HTTPLoader`'s).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The `Vapor` trait's packages (TesseraVapor only).
        .package(url: "https://github.com/vapor/vapor", from: "4.115.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
    ],
    targets: [
        // C libraries, found through pkg-config; `scripts/setup` installs the Debian packages.
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"]), .brew(["jpeg-turbo"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"]), .brew(["libpng"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"]), .brew(["webp"])]),
        .systemLibrary(name: "CGIF", pkgConfig: "libgif", providers: [.apt(["libgif-dev"]), .brew(["giflib"])]),
        // libheif decodes HEIC (libde265) and AVIF (dav1d/libaom) and encodes AVIF (libaom).
        .systemLibrary(name: "CHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"]), .brew(["libheif"])]),
        // libavif decodes AVIF's primary image faster than libheif when it carries no transformation. No
        // pkgConfig: libavif.pc's Cflags carry -DAVIF_DLL, a flag SwiftPM refuses with a warning in every
        // build; the header and library sit on the compiler's and linker's own search paths (Sources/CAVIF).
        .systemLibrary(name: "CAVIF", providers: [.apt(["libavif-dev"]), .brew(["libavif"])]),
        .systemLibrary(name: "CCairo", pkgConfig: "cairo", providers: [.apt(["libcairo2-dev"]), .brew(["cairo"])]),
        // libjpeg's own API (libjpeg-turbo's jpeglib.h) and libdeflate, used by our codec shims below.
        .systemLibrary(name: "CJPEGLib", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"]), .brew(["jpeg-turbo"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]),
        // Little CMS 2: embedded ICC profiles (JPEG APP2, PNG iCCP, WebP ICCP) converted to sRGB (docs/COLOUR.md).
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"]), .brew(["little-cms2"])]),
        // Codec code in C: a libjpeg shim that keeps setjmp/longjmp inside C (subsamplings TurboJPEG
        // rejects; progressive files at 1/8 scale without the AC scans they do not need) and the PNG
        // fast path (libdeflate, unfiltering, box reduction on the fly).
        .target(name: "CTesseraCodecs", dependencies: ["CJPEGLib", "CDeflate"]),
        // Absorbs SIGBUS from table files truncated by another program (see its header).
        .target(name: "CTesseraGuard"),
        // Byte-range locks of an open file description (F_OFD_SETLK), by which processes share a table file.
        .target(name: "CTesseraFileLocks"),
        // The library's layers; each depends only on the ones above it (docs/ARCHITECTURE.md). Each names
        // TesseraCore too, whose types (the errors, the formats) they use and link in their documentation:
        // DocC's combined archive resolves a link only into a target's direct dependencies.
        // Core: what every layer shares (the lock, the parallelism limit, the keyed task pool, the LRU list
        // and map, observability, the one error type every layer throws, the file formats); no codec, no pixel.
        .target(
            name: "TesseraCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // Imaging: pixels, codecs, drawing.
        .target(
            name: "TesseraImaging",
            dependencies: [
                "TesseraCore", "CTurboJPEG", "CPNG", "CWebP", "CGIF", "CHeif", "CAVIF", "CCairo", "CTesseraCodecs", "CLCMS2", "CDeflate",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // Tables: memory-mapped image tables, and the entity/format cache over them (no request, no HTTP).
        .target(
            name: "TesseraTables",
            dependencies: [
                "TesseraCore", "TesseraImaging", "CTesseraGuard", "CTesseraFileLocks",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // Remote: the request, the image manager with its memory and disk caches, HTTP freshness and the loader protocol.
        .target(
            name: "TesseraRemote",
            dependencies: [
                "TesseraCore", "TesseraImaging", "TesseraTables",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // `import Tessera`: every layer.
        .target(
            name: "Tessera",
            dependencies: ["TesseraCore", "TesseraImaging", "TesseraTables", "TesseraRemote"]
        ),
        .target(
            name: "TesseraHTTP",
            dependencies: [
                "Tessera",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["HTTPLoader"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["HTTPLoader"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["HTTPLoader"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["HTTPLoader"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["HTTPLoader"])),
            ]
        ),
        // Test support (`import TesseraTesting`): scripted loads for `ImageManager` without sockets.
        .target(name: "TesseraTesting", dependencies: ["TesseraImaging", "TesseraRemote"]),
        // The image service (`tessera serve`); its files are wrapped in `#if Serving`.
        .target(
            name: "TesseraServer",
            dependencies: [
                "Tessera", "TesseraHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Serving"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Serving"])),
                // The server's own HTTP/1 child channel: NIO's codec, the memory-hit handler (NIO's HTTP/1
                // types), then the conversion to HTTPTypes that Hummingbird's router reads.
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Serving"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Serving"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Serving"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Serving"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: ["Serving"])),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: ["Serving"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Serving"])),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Serving"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Serving"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The gallery page, compiled into the module as bytes (`PackageResources.gallery_html`): no bundle to find at run time.
            resources: [.embedInCode("Resources/gallery.html")]
        ),
        // The image routes in a Vapor application; its files are wrapped in `#if Vapor`.
        .target(
            name: "TesseraVapor",
            dependencies: [
                "TesseraServer",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Vapor"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Vapor"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Vapor"])),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
