/// Content-aware placement of a crop window: ``ImageProcessing/Gravity/smart``.
///
/// The method, all on a small copy of the image:
/// 1. The (already decoded, usually already downscaled) image is drawn upright at most ``analysisSide``
///    pixels on its long side (cairo, box filter): at most 64 × 64 = 4,096 pixels, whatever the source.
/// 2. Each pixel's edge energy is the gradient magnitude of its luma (Rec. 601, on the premultiplied
///    colour), `|L(x+1, y) − L(x−1, y)| + |L(x, y+1) − L(x, y−1)|` with the edges clamped.
/// 3. A summed-area table of the energy makes the energy inside any window four look-ups.
/// 4. The window (the crop's size scaled to the small image and rounded) slides over every whole-pixel
///    position — along the one free axis for ``ContentMode/fill``, where the crop spans the
///    other — and the position with the most energy wins; ties go to the position nearest the centre
///    (the mean of the two middle ones when they tie too), so a flat image is cropped in the middle.
/// 5. The winning position, as a fraction of the free space on each axis, is applied to the source.
///
/// Cost: the downscale reads every pixel of the decoded image once; then a constant number of operations
/// per small pixel for the luma, the energy and the table, and one window sum per position — O(4,096)
/// with a bound independent of the source's size.
public enum SmartCrop {
    /// The long side of the image the energy is measured on: 64 pixels.
    public static let analysisSide = 64

    /// `crop` (a window of `source`, in its display orientation) moved to the part of the image with the
    /// most detail; its size is kept and it stays inside `source`. `image` holds the source's pixels at any
    /// scale (a cheap downscaled decode is enough), stored turned by `orientation`.
    public static func place(_ crop: Rect, in source: PixelSize, image: some BitmapImage,
                             orientation: ImageOrientation = .up) throws(TesseraError) -> Rect {
        let freeX = Double(source.width) - crop.width, freeY = Double(source.height) - crop.height
        guard freeX > 0 || freeY > 0 else { return crop }
        let shown = orientation.displaySize(of: image.layout.size)
        let k = min(1, Double(analysisSide) / Double(max(shown.width, shown.height)))
        let small = PixelSize(width: max(1, Int((Double(shown.width) * k).rounded())),
                              height: max(1, Int((Double(shown.height) * k).rounded())))
        let bitmap = try Bitmap(width: small.width, height: small.height, style: .bgra32) { (view) throws(TesseraError) in
            let context = try DrawingContext(target: view)
            try context.draw(image, in: context.bounds, mode: .stretch, orientation: orientation)
            context.flush()
        }
        let table = summedEnergy(bitmap)
        func windowSide(_ length: Double, _ sourceSide: Int, _ smallSide: Int) -> Int {
            min(smallSide, max(1, Int((length / Double(sourceSide) * Double(smallSide)).rounded())))
        }
        let ww = windowSide(crop.width, source.width, small.width), wh = windowSide(crop.height, source.height, small.height)
        let spanX = freeX > 0 ? small.width - ww : 0, spanY = freeY > 0 ? small.height - wh : 0
        // The most energy, then the least distance from the centre; positions tied on both (the two
        // middle ones of an odd span) are averaged.
        var best = (energy: -1, distance: Int.max, x: 0, y: 0, count: 0)
        for y in 0...spanY {
            for x in 0...spanX {
                let energy = table.sum(x: x, y: y, width: ww, height: wh)
                let distance = abs(2 * x - spanX) + abs(2 * y - spanY)
                if energy > best.energy || (energy == best.energy && distance < best.distance) {
                    best = (energy, distance, x, y, 1)
                } else if energy == best.energy && distance == best.distance {
                    best.x += x
                    best.y += y
                    best.count += 1
                }
            }
        }
        let bx = Double(best.x) / Double(best.count), by = Double(best.y) / Double(best.count)
        let fx = spanX > 0 ? bx / Double(spanX) : 0.5
        let fy = spanY > 0 ? by / Double(spanY) : 0.5
        return Rect(x: max(0, freeX) * fx, y: max(0, freeY) * fy, width: crop.width, height: crop.height)
    }

    /// A summed-area table: `values[(y + 1) * (width + 1) + x + 1]` is the energy of the pixels above and
    /// left of (x, y), inclusive.
    struct SummedArea {
        let width: Int
        let values: [Int]

        /// The energy inside the window at (`x`, `y`) of `width` × `height`.
        func sum(x: Int, y: Int, width w: Int, height h: Int) -> Int {
            let stride = width + 1
            return values[(y + h) * stride + x + w] - values[y * stride + x + w]
                - values[(y + h) * stride + x] + values[y * stride + x]
        }
    }

    /// The luma gradient energy of every pixel of `bitmap` (bgra32), as a summed-area table.
    static func summedEnergy(_ bitmap: Bitmap) -> SummedArea {
        let w = bitmap.width, h = bitmap.height
        var luma = [Int](repeating: 0, count: w * h)
        bitmap.withUnsafeBytes { bytes in
            for y in 0..<h {
                for x in 0..<w {
                    let p = y * bitmap.bytesPerRow + x * 4
                    luma[y * w + x] = (114 * Int(bytes[p]) + 587 * Int(bytes[p + 1]) + 299 * Int(bytes[p + 2])) / 1000
                }
            }
        }
        let stride = w + 1
        var values = [Int](repeating: 0, count: stride * (h + 1))
        for y in 0..<h {
            var rowSum = 0
            for x in 0..<w {
                let dx = luma[y * w + min(x + 1, w - 1)] - luma[y * w + max(x - 1, 0)]
                let dy = luma[min(y + 1, h - 1) * w + x] - luma[max(y - 1, 0) * w + x]
                rowSum += abs(dx) + abs(dy)
                values[(y + 1) * stride + x + 1] = values[y * stride + x + 1] + rowSum
            }
        }
        return SummedArea(width: w, values: values)
    }
}
