/// The border finder of ``ImageProcessing/trim``: the smallest rectangle of an image region outside which
/// every pixel is within a colour distance of the region's top-left pixel.
///
/// The distance between two pixels is the largest difference of their four channels (premultiplied
/// ``PixelStyle/bgra32``), so a threshold of 0 trims exactly the colour, 10 trims JPEG's noise around a flat
/// border, and a transparent corner (all channels 0) trims every pixel whose channels are all at most the
/// threshold: transparent borders. Each side is found by walking inward one row (or column) at a time
/// while the whole line is border: at most every pixel of the region is read once per side it could belong
/// to, O(width × height). An image that is border everywhere (a flat colour) is left whole.
enum Trim {
    /// The rectangle of `region` (whole pixels inside `image`, which is upright and ``PixelStyle/bgra32``)
    /// left once the border around it is removed; `region` itself when nothing or everything is border.
    static func box(in image: Bitmap, region: Rect, threshold: Int) -> Rect {
        let x0 = Int(region.x), y0 = Int(region.y), x1 = Int(region.maxX), y1 = Int(region.maxY)
        guard image.layout.style.bytesPerPixel == 4, x1 > x0, y1 > y0 else { return region }
        return image.withUnsafeBytes { bytes -> Rect in
            let stride = image.layout.bytesPerRow
            let reference = (0..<4).map { Int(bytes[y0 * stride + x0 * 4 + $0]) }
            func border(_ x: Int, _ y: Int) -> Bool {
                let p = y * stride + x * 4
                return abs(Int(bytes[p]) - reference[0]) <= threshold && abs(Int(bytes[p + 1]) - reference[1]) <= threshold
                    && abs(Int(bytes[p + 2]) - reference[2]) <= threshold && abs(Int(bytes[p + 3]) - reference[3]) <= threshold
            }
            var top = y0, bottom = y1, left = x0, right = x1
            while top < bottom, (left..<right).allSatisfy({ border($0, top) }) { top += 1 }
            guard top < bottom else { return region }   // all border: a flat image stays whole
            while bottom > top + 1, (left..<right).allSatisfy({ border($0, bottom - 1) }) { bottom -= 1 }
            while left < right - 1, (top..<bottom).allSatisfy({ border(left, $0) }) { left += 1 }
            while right > left + 1, (top..<bottom).allSatisfy({ border(right - 1, $0) }) { right -= 1 }
            return Rect(x: Double(left), y: Double(top), width: Double(right - left), height: Double(bottom - top))
        }
    }
}
