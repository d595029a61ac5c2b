/// A Gaussian blur approximated by three box blurs (W. Jarosz, "Fast image convolutions"; box widths as
/// in I. Kutskir's "Fastest Gaussian blur"), on 32-bit pixels (premultiplied ``PixelStyle/bgra32``, or
/// ``PixelStyle/bgr32``) with every channel treated alike, which is correct for premultiplied alpha.
///
/// Each box pass is separable (a horizontal then a vertical running sum) and costs O(1) per pixel and
/// channel whatever the radius: three passes × two directions × four channels is about 24 additions and
/// 24 subtractions per pixel, plus O(min(radius, side)) per row and column to start each running sum.
/// Pixels beyond the edges repeat the edge pixel (clamp to edge), so the edges do not darken. Every pass
/// rounds to the nearest integer (box widths are odd, so there are no ties and no drift of the mean).
enum GaussianBlur {
    /// The radii of the three boxes whose repeated application has standard deviation close to `sigma`
    /// (box widths `2r + 1`). All zero for `sigma` below about 0.8, where a box of width 3 is too wide.
    static func boxRadii(sigma: Double) -> [Int] {
        guard sigma > 0, sigma.isFinite else { return [0, 0, 0] }
        let n = 3.0
        let ideal = (12 * sigma * sigma / n + 1).squareRoot()
        var lower = Int(ideal.rounded(.down))
        if lower % 2 == 0 { lower -= 1 }
        let upper = lower + 2
        let l = Double(lower)
        let m = ((12 * sigma * sigma - n * l * l - 4 * n * l - 3 * n) / (-4 * l - 4)).rounded()
        return (0..<3).map { Double($0) < m ? (lower - 1) / 2 : (upper - 1) / 2 }
    }

    /// Blurs the pixels of `view` inside `region` (whole pixels, clipped to the view) in place; pixels
    /// outside it are neither changed nor read. Does nothing for other styles than 32-bit ones, or when
    /// every radius is 0.
    static func apply(sigma: Double, to view: MutableBitmapView, region: (x: Int, y: Int, width: Int, height: Int)? = nil) {
        guard view.layout.style.bytesPerPixel == 4 else { return }
        let x0 = max(0, region?.x ?? 0), y0 = max(0, region?.y ?? 0)
        let x1 = min(view.layout.width, (region.map { $0.x + $0.width }) ?? view.layout.width)
        let y1 = min(view.layout.height, (region.map { $0.y + $0.height }) ?? view.layout.height)
        let width = x1 - x0, height = y1 - y0
        guard width > 0, height > 0 else { return }
        let radii = boxRadii(sigma: sigma).filter { $0 > 0 }
        guard !radii.isEmpty else { return }
        let line = UnsafeMutablePointer<UInt8>.allocate(capacity: max(width, height) * 4)
        defer { line.deallocate() }
        let stride = view.layout.bytesPerRow
        for radius in radii {
            for y in y0..<y1 {
                let row = (view.row(y) + x0 * 4).assumingMemoryBound(to: UInt8.self)
                line.update(from: row, count: width * 4)
                boxLine(line, count: width, radius: radius, into: row, step: 4)
            }
            for x in x0..<x1 {
                let column = (view.row(y0) + x * 4).assumingMemoryBound(to: UInt8.self)
                for i in 0..<height {
                    for c in 0..<4 { line[i * 4 + c] = column[i * stride + c] }
                }
                boxLine(line, count: height, radius: radius, into: column, step: stride)
            }
        }
    }

    /// The box average of width `2·radius + 1` of `count` packed 4-byte pixels at `source`, written to
    /// `target` every `step` bytes. Indices beyond the ends are clamped to the first and last pixel.
    private static func boxLine(_ source: UnsafePointer<UInt8>, count: Int, radius: Int,
                                into target: UnsafeMutablePointer<UInt8>, step: Int) {
        let last = count - 1
        let width = 2 * radius + 1
        for c in 0..<4 {
            // Σ source[clamp(j)] for j in -radius...radius: radius copies of the first pixel, the pixels
            // 0...min(radius, last), and copies of the last pixel for the indices past the end.
            var sum = radius * Int(source[c])
            let reach = min(radius, last)
            for j in 0...reach { sum += Int(source[j * 4 + c]) }
            sum += (radius - reach) * Int(source[last * 4 + c])
            for i in 0..<count {
                target[i * step + c] = UInt8((sum + radius) / width)
                let entering = min(i + radius + 1, last), leaving = max(i - radius, 0)
                sum += Int(source[entering * 4 + c]) - Int(source[leaving * 4 + c])
            }
        }
    }
}

extension Bitmap {
    /// This image blurred by a Gaussian of standard deviation `sigma` pixels (approximated by three box
    /// blurs: O(1) per pixel whatever `sigma`, edges clamped); a copy of the pixels for `sigma` 0 or below
    /// about 0.8, and for styles other than ``PixelStyle/bgra32`` and ``PixelStyle/bgr32``. Keeps
    /// ``integrity``. Callers bound `sigma` (``ImageProcessing/Limits/maximumBlur`` does for
    /// ``ImageDecoder/render(_:processing:limits:)``).
    public func blurred(sigma: Double) -> Bitmap {
        var result = Bitmap(layout: layout) { (view: MutableBitmapView) in
            withUnsafeBytes { bytes in view.baseAddress.copyMemory(from: bytes.baseAddress!, byteCount: layout.byteCount) }
            GaussianBlur.apply(sigma: sigma, to: view)
        }
        result.integrity = integrity
        return result
    }
}
