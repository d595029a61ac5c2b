import Foundation

/// The effects ``ImageProcessing`` applies to the finished output, in place on premultiplied
/// ``PixelStyle/bgra32`` pixels (other styles are left alone): ``sharpen(_:sigma:)``,
/// ``pixelate(_:size:)`` and ``grayscale(_:)``, in that order when several are asked for.
enum Effects {
    /// An unsharp mask of amount 1: each channel becomes `2·v − g`, where `g` is the channel blurred by a
    /// Gaussian of standard deviation `sigma` (a sampled kernel of radius ⌈3σ⌉, normalised, applied across
    /// then down with the edges clamped), rounded and kept inside 0…alpha so the pixel stays premultiplied.
    /// A flat area is unchanged (g = v); an edge from 100 to 200 overshoots on both sides, which is what
    /// looks sharper. Cost: 2 × (2⌈3σ⌉ + 1) multiply-adds per channel and pixel; σ is at most
    /// ``ImageProcessing/Limits/maximumSharpen`` (10: 122 per channel and pixel).
    static func sharpen(_ view: MutableBitmapView, sigma: Double) {
        guard view.layout.style.bytesPerPixel == 4, sigma > 0, sigma.isFinite else { return }
        let width = view.layout.width, height = view.layout.height
        let radius = max(1, Int((3 * sigma).rounded(.up)))
        var kernel = (-radius...radius).map { d in Float(exp(-Double(d * d) / (2 * sigma * sigma))) }
        let total = kernel.reduce(0, +)
        kernel = kernel.map { $0 / total }
        // Across: the rows into `across`; down: `across` into `blurred`.
        var across = [Float](repeating: 0, count: width * height * 4)
        var blurred = [Float](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            let row = view.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                for c in 0..<4 {
                    var sum: Float = 0
                    for k in -radius...radius { sum += kernel[k + radius] * Float(row[min(max(x + k, 0), width - 1) * 4 + c]) }
                    across[(y * width + x) * 4 + c] = sum
                }
            }
        }
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<4 {
                    var sum: Float = 0
                    for k in -radius...radius { sum += kernel[k + radius] * across[(min(max(y + k, 0), height - 1) * width + x) * 4 + c] }
                    blurred[(y * width + x) * 4 + c] = sum
                }
            }
        }
        for y in 0..<height {
            let row = view.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let p = x * 4, alpha = Float(row[p + 3])
                let sharpenedAlpha = min(255, max(0, (2 * alpha - blurred[(y * width + x) * 4 + 3]).rounded()))
                row[p + 3] = UInt8(sharpenedAlpha)
                for c in 0..<3 {
                    let value = 2 * Float(row[p + c]) - blurred[(y * width + x) * 4 + c]
                    row[p + c] = UInt8(min(sharpenedAlpha, max(0, value.rounded())))
                }
            }
        }
    }

    /// Blocks of `size` × `size` pixels from the top-left corner (the last ones in a row or column cut by
    /// the edge), each painted with the mean of its pixels per channel (rounded half up). The mean of
    /// premultiplied pixels is premultiplied.
    static func pixelate(_ view: MutableBitmapView, size: Int) {
        guard view.layout.style.bytesPerPixel == 4, size > 1 else { return }
        let width = view.layout.width, height = view.layout.height
        for by in stride(from: 0, to: height, by: size) {
            let rows = by..<min(by + size, height)
            for bx in stride(from: 0, to: width, by: size) {
                let columns = bx..<min(bx + size, width)
                let count = rows.count * columns.count
                var sums = [0, 0, 0, 0]
                for y in rows {
                    let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                    for x in columns { for c in 0..<4 { sums[c] += Int(row[x * 4 + c]) } }
                }
                let mean = sums.map { UInt8(($0 + count / 2) / count) }
                for y in rows {
                    let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                    for x in columns { for c in 0..<4 { row[x * 4 + c] = mean[c] } }
                }
            }
        }
    }

    /// Each pixel's colour channels set to its luma with Rec. 709's weights in 256ths (54 R + 183 G + 19 B,
    /// which sum to 256, rounded): on premultiplied values, so the grey stays at most the alpha.
    static func grayscale(_ view: MutableBitmapView) {
        guard view.layout.style.bytesPerPixel == 4 else { return }
        for y in 0..<view.layout.height {
            let row = view.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<view.layout.width {
                let p = x * 4   // B, G, R, A
                let blue: Int = 19 * Int(row[p]), green: Int = 183 * Int(row[p + 1]), red: Int = 54 * Int(row[p + 2])
                let luma = UInt8((blue + green + red + 128) >> 8)
                row[p] = luma
                row[p + 1] = luma
                row[p + 2] = luma
            }
        }
    }
}
