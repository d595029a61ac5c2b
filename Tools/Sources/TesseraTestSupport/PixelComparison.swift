import Foundation
import Tessera

/// Measuring what the CLI wrote against what the library computes in this process (in the test support, optimised,
/// for the loops over every pixel: see ``OraclePixels``).
public enum PixelComparison {
    /// Decodes an image file the CLI wrote (BGRA, premultiplied).
    public static func decodeFile(_ path: String) throws -> Bitmap {
        try ImageDecoder().decode(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The library's own thumbnail of `file` at `size`, placed by `mode`.
    public static func libraryThumbnail(of file: URL, size: PixelSize, mode: ContentMode) throws -> Bitmap {
        try ImageDecoder().thumbnail(try Data(contentsOf: file), size: size, mode: mode)
    }

    /// The library's render of `file` with `processing` (what `tessera serve` draws presets and resizes with).
    public static func libraryRender(of file: URL, processing: ImageProcessing) throws -> Bitmap {
        try ImageDecoder().render(try Data(contentsOf: file), processing: processing)
    }

    /// Mean absolute difference per byte (0…255) over the visible pixels of two BGRA images of the
    /// same size; `nil` when sizes or styles differ.
    public static func meanAbsoluteDifference(_ a: some BitmapImage, _ b: some BitmapImage) -> Double? {
        guard a.width == b.width, a.height == b.height, a.style == .bgra32, b.style == .bgra32 else { return nil }
        let rowBytes = a.width * 4
        var total = 0
        a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in
                for y in 0..<a.height {
                    let ra = y * a.bytesPerRow, rb = y * b.bytesPerRow
                    for i in 0..<rowBytes { total += abs(Int(pa[ra + i]) - Int(pb[rb + i])) }
                }
            }
        }
        return Double(total) / Double(rowBytes * a.height)
    }

    /// The smallest rectangle (min x, min y, width, height) holding every pixel whose alpha is at
    /// least `threshold` in a BGRA image; `nil` when there is none.
    public static func opaqueBounds(_ image: some BitmapImage, threshold: UInt8 = 128) -> (x: Int, y: Int, width: Int, height: Int)? {
        precondition(image.style == .bgra32)
        var minX = Int.max, minY = Int.max, maxX = -1, maxY = -1
        image.withUnsafeBytes { bytes in
            for y in 0..<image.height {
                for x in 0..<image.width where bytes[y * image.bytesPerRow + x * 4 + 3] >= threshold {
                    minX = min(minX, x); maxX = max(maxX, x)
                    minY = min(minY, y); maxY = max(maxY, y)
                }
            }
        }
        return maxX < 0 ? nil : (minX, minY, maxX - minX + 1, maxY - minY + 1)
    }

    /// Whether every pixel of the photograph is fully opaque (checked on a reduced decode).
    public static func isOpaque(_ file: URL) throws -> Bool {
        let image = try ImageDecoder().decode(try Data(contentsOf: file), minimumSize: PixelSize(width: 64, height: 64))
        return image.withUnsafeBytes { bytes in
            (0..<image.height).allSatisfy { y in
                (0..<image.width).allSatisfy { x in bytes[y * image.bytesPerRow + x * 4 + 3] == 255 }
            }
        }
    }
}
