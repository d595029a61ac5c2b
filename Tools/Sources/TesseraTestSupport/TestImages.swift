import Foundation
import Tessera
@_spi(Internal) import TesseraImaging

/// A thread-safe counter.
public final class Counter: Sendable {
    private let value = LockedValue(0)
    /// A counter at zero.
    public init() {}
    /// Adds one.
    public func increment() { value.withLock { $0 += 1 } }
    /// The count so far.
    public var count: Int { value.withLock { $0 } }
}

/// A solid-colour PNG of `size`.
public func solidPNG(_ color: Color, size: PixelSize = PixelSize(width: 120, height: 90)) throws -> [UInt8] {
    try PNGEncoder().encode(try Bitmap.drawing(size: size) { $0.fill(with: color) })
}

/// A PNG of `width`×`height` in one colour, as bytes for an origin resource.
public func pngBytes(_ color: Color = Color(red: 0, green: 0, blue: 1), width: Int = 64, height: Int = 48) throws -> [UInt8] {
    try solidPNG(color, size: PixelSize(width: width, height: height))
}

/// A fresh temporary directory named after `label`; the caller removes it when it cares to.
public func temporaryDirectory(_ label: String = "tessera") throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// SplitMix64: a tiny deterministic generator for reproducible mutations and random walks.
public struct SeededGenerator: RandomNumberGenerator {
    /// The generator's state; the next value depends on it alone.
    public var state: UInt64
    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }
    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Peak signal-to-noise ratio in dB over the colour channels of two BGRA bitmaps of one size
/// (alpha ignored): 10·log10(255² / mean squared error); `.infinity` when identical.
public func psnr(_ a: Bitmap, _ b: Bitmap) -> Double {
    precondition(a.layout.size == b.layout.size)
    var sum = 0.0, count = 0.0
    for y in 0..<a.height {
        for x in 0..<a.width {
            for (p, q) in zip(a.pixel(x: x, y: y).prefix(3), b.pixel(x: x, y: y).prefix(3)) {
                let d = Double(Int(p) - Int(q))
                sum += d * d
                count += 1
            }
        }
    }
    return sum == 0 ? .infinity : 10 * log10(255 * 255 / (sum / count))
}

/// The committed test images in `Tools/Tests/Fixtures`.
public enum TestFixtures {
    /// Tools/Tests/Fixtures, found relative to this source file (no resources in Package.swift).
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Fixtures")

    /// Every committed image fixture and its format.
    public static let images: [(name: String, format: ImageFileFormat)] = [
        ("baseline.jpg", .jpeg), ("progressive.jpg", .jpeg), ("gray.jpg", .jpeg), ("cmyk.jpg", .jpeg),
        ("palette.png", .png), ("gray.png", .png), ("gray16.png", .png), ("interlaced.png", .png), ("trns.png", .png),
        ("lossy.webp", .webp), ("lossless.webp", .webp), ("alpha.webp", .webp), ("transparent.gif", .gif),
        ("lossy.heic", .heic), ("lossy.avif", .avif), ("alpha.avif", .avif),
    ]

    /// The bytes of the fixture `name`.
    public static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }
}

/// A 200×100 source whose content is known: four quadrants of distinct colours, red top-left, green
/// top-right, blue bottom-left, white bottom-right (so crops, gravity and padding show in the pixels).
public enum Quadrants {
    /// BGRA of the top-left quadrant.
    public static let red: [UInt8] = [0, 0, 255, 255]
    /// BGRA of the top-right quadrant.
    public static let green: [UInt8] = [0, 255, 0, 255]
    /// BGRA of the bottom-left quadrant.
    public static let blue: [UInt8] = [255, 0, 0, 255]
    /// BGRA of the bottom-right quadrant.
    public static let white: [UInt8] = [255, 255, 255, 255]

    /// The quadrants as a PNG.
    public static func png() throws -> [UInt8] {
        let image = Bitmap(width: 200, height: 100, style: .bgra32) { view in
            for y in 0..<100 {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<200 {
                    let colour = y < 50 ? (x < 100 ? red : green) : (x < 100 ? blue : white)
                    for c in 0..<4 { row[x * 4 + c] = colour[c] }
                }
            }
        }
        return try PNGEncoder().encode(image)
    }

    /// Whether two pixels differ by at most 3 in every channel (resampling and encoding round off).
    public static func close(_ a: [UInt8], _ b: [UInt8]) -> Bool { zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= 3 } }
}
