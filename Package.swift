// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Tessera",
    products: [
        .library(name: "Tessera", targets: ["Tessera"]),
        .executable(name: "tessera", targets: ["tessera"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // C libraries, found through pkg-config; `scripts/setup` installs the Debian packages.
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CGIF", pkgConfig: "libgif", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CCairo", pkgConfig: "cairo", providers: [.apt(["libcairo2-dev"])]),
        // Absorbs SIGBUS from table files truncated by another program (see its header).
        .target(name: "CTesseraGuard"),
        .target(
            name: "Tessera",
            dependencies: ["CTurboJPEG", "CPNG", "CWebP", "CGIF", "CCairo", "CTesseraGuard"]
        ),
        .executableTarget(
            name: "tessera",
            dependencies: ["Tessera", "CCairo", "CTurboJPEG", "CWebP", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // Writer process for the image table crash test (killed with SIGKILL at random points).
        .executableTarget(name: "TesseraStress", dependencies: ["Tessera"]),
        .testTarget(name: "TesseraTests", dependencies: ["Tessera", "TesseraStress", "tessera"]),
    ],
    swiftLanguageModes: [.v6]
)
