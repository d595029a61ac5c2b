import Foundation
import Tessera

/// Pixels in one layout for comparing Tessera with Chromium: RGBA, premultiplied (what both keep
/// internally: Tessera's bitmaps are premultiplied BGRA, Chromium's canvas premultiplied RGBA that
/// `getImageData` divides out), row after row without padding.
///
/// In the test support rather than beside the tests that use it because its loops run over every pixel: the
/// test targets are compiled without optimisation (Tools/Package.swift), this target with it.
public struct OraclePixels: Sendable {
    /// Pixels per row.
    public var width: Int
    /// Rows.
    public var height: Int
    /// RGBA bytes, premultiplied, `width × 4` per row.
    public var rgba: [UInt8]

    /// Chromium's `getImageData` (RGBA, not premultiplied, row after row), premultiplied again.
    public init(width: Int, height: Int, unpremultipliedRGBA: [UInt8]) {
        self.width = width
        self.height = height
        rgba = unpremultipliedRGBA
        for i in stride(from: 0, to: rgba.count, by: 4) where rgba[i + 3] != 255 {
            let alpha = Int(rgba[i + 3])
            for c in 0..<3 { rgba[i + c] = UInt8((Int(rgba[i + c]) * alpha + 127) / 255) }
        }
    }

    /// A decoded bitmap (premultiplied BGRA).
    public init(_ bitmap: Bitmap) {
        precondition(bitmap.style == .bgra32)
        width = bitmap.width
        height = bitmap.height
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        bitmap.withUnsafeBytes { bytes in
            for y in 0..<bitmap.height {
                let row = y * bitmap.bytesPerRow, out = y * bitmap.width * 4
                for x in 0..<bitmap.width {
                    rgba[out + x * 4] = bytes[row + x * 4 + 2]
                    rgba[out + x * 4 + 1] = bytes[row + x * 4 + 1]
                    rgba[out + x * 4 + 2] = bytes[row + x * 4]
                    rgba[out + x * 4 + 3] = bytes[row + x * 4 + 3]
                }
            }
        }
        self.rgba = rgba
    }

    /// The bytes of row `y`.
    public func row(_ y: Int) -> ArraySlice<UInt8> { rgba[y * width * 4..<(y + 1) * width * 4] }

    /// How many rows at the bottom satisfy `isFill` for every pixel (RGBA bytes of one pixel).
    public func trailingRows(where isFill: (UInt8, UInt8, UInt8, UInt8) -> Bool) -> Int {
        var count = 0
        for y in stride(from: height - 1, through: 0, by: -1) {
            let base = y * width * 4
            let filled = (0..<width).allSatisfy { x in
                let i = base + x * 4
                return isFill(rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3])
            }
            guard filled else { break }
            count += 1
        }
        return count
    }

    /// Rows at the bottom that are fully transparent (what Chromium leaves of rows it never decoded).
    public var transparentTrailingRows: Int { trailingRows { _, _, _, a in a == 0 } }

    /// Rows at the bottom filled with ``DecodeIntegrity/fillGray``, opaque.
    public var grayTrailingRows: Int {
        let g = DecodeIntegrity.fillGray
        return trailingRows { r, gr, b, a in r == g && gr == g && b == g && a == 255 }
    }

    /// How far apart two images are over `rows`: the largest difference of one channel (alpha
    /// included) and the PSNR over every channel (infinite when identical), with the number of
    /// channels that differ at all.
    public struct Difference: CustomStringConvertible, Sendable {
        /// The largest difference of one channel.
        public var maximum: Int
        /// Peak signal-to-noise ratio in dB over every channel compared (infinite when identical).
        public var psnr: Double
        /// Channels that differ at all.
        public var differing: Int
        /// Channels compared.
        public var channels: Int
        /// The first and last rows with a difference.
        public var rows: ClosedRange<Int>?
        /// The figures on one line.
        public var description: String {
            "max \(maximum), PSNR \(psnr.isInfinite ? "inf" : String(format: "%.1f", psnr)) dB, "
                + "\(differing) of \(channels) channels differ" + (rows.map { " (rows \($0.lowerBound)...\($0.upperBound))" } ?? "")
        }
    }

    /// ``Difference`` of `a` and `b` (the same size) over `rows`.
    public static func difference(_ a: OraclePixels, _ b: OraclePixels, rows: Range<Int>) -> Difference {
        precondition(a.width == b.width && a.height == b.height)
        var maximum = 0, squares = 0.0, differing = 0, first = Int.max, last = -1
        let range = rows.lowerBound * a.width * 4..<rows.upperBound * a.width * 4
        a.rgba.withUnsafeBufferPointer { pa in
            b.rgba.withUnsafeBufferPointer { pb in
                for i in range {
                    let d = abs(Int(pa[i]) - Int(pb[i]))
                    if d > 0 {
                        differing += 1
                        maximum = max(maximum, d)
                        squares += Double(d * d)
                        first = min(first, i / (a.width * 4))
                        last = i / (a.width * 4)
                    }
                }
            }
        }
        let channels = range.count
        let mse = channels > 0 ? squares / Double(channels) : 0
        let psnr = mse == 0 ? Double.infinity : 10 * log10(255 * 255 / mse)
        return Difference(maximum: maximum, psnr: psnr, differing: differing, channels: channels, rows: last < 0 ? nil : first...last)
    }
}
