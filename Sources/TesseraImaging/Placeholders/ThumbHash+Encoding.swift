import Foundation

extension ThumbHash {
    /// The largest width and height the format encodes directly (the reference refuses more: larger
    /// images only cost time, the hash keeps at most 7 coefficients a side).
    public static let maximumEncodedSide = 100

    /// The hash of `image`, in any ``PixelStyle``.
    ///
    /// An image of at most ``maximumEncodedSide`` pixels a side is hashed as it is: its pixels as straight
    /// (un-premultiplied) RGBA, `c × 255 / a` rounded for ``PixelStyle/bgra32``, which is what the
    /// reference takes. A larger image is first box-averaged to ``encodedSize(for:)``: with W × H the source
    /// size and w × h the target, source pixel (x, y) falls in output pixel (⌊x × w / W⌋, ⌊y × h / H⌋),
    /// and each output pixel is the mean of the source pixels that fall in it (one box of ⌊W / w⌋ or
    /// ⌈W / w⌉ columns by ⌊H / h⌋ or ⌈H / h⌉ rows), averaged in premultiplied BGRA so that transparent
    /// pixels add no colour, each channel rounded half up to a byte, then un-premultiplied. The hash is
    /// the reference's hash of that small RGBA image.
    /// - Throws: ``/TesseraCore/TesseraError`` with reason `.invalidLayout` for an image with no pixels.
    public init(image: some BitmapImage) throws(TesseraError) {
        let width = image.width, height = image.height
        guard width > 0, height > 0 else {
            throw TesseraError(.invalidLayout(width: width, height: height, bytesPerRow: image.bytesPerRow))
        }
        if width <= Self.maximumEncodedSide, height <= Self.maximumEncodedSide {
            self.init(validRGBA: image.copyPixels(as: .rgbaStraight), width: width, height: height)
        } else {
            let size = Self.encodedSize(for: image.layout.size)
            self.init(validRGBA: Self.boxAverage(image, to: size), width: size.width, height: size.height)
        }
    }

    /// The hash of `width × height` straight-alpha RGBA pixels (`width × height × 4` bytes, rows
    /// packed, top row first), exactly the reference's `rgbaToThumbHash(w, h, rgba)`.
    /// - Throws: ``/TesseraCore/TesseraError`` with reason `.invalidLayout` when a side is outside
    ///   1…``maximumEncodedSide`` or `rgba` does not hold `width × height × 4` bytes.
    public init(rgba: [UInt8], width: Int, height: Int) throws(TesseraError) {
        guard (1...Self.maximumEncodedSide).contains(width), (1...Self.maximumEncodedSide).contains(height),
              rgba.count == width * height * 4
        else {
            throw TesseraError(.invalidLayout(width: width, height: height, bytesPerRow: width * 4))
        }
        self.init(validRGBA: rgba, width: width, height: height)
    }

    /// The size ``init(image:)`` box-averages an image of `size` to: unchanged when both sides are at most
    /// ``maximumEncodedSide``, otherwise the longer side becomes 100 and the shorter
    /// `max(1, round(short × 100 / long))`, so 4000 × 3000 becomes 100 × 75 and 1000 × 3 becomes 100 × 1.
    public static func encodedSize(for size: PixelSize) -> PixelSize {
        let longer = max(size.width, size.height), limit = Self.maximumEncodedSide
        guard longer > limit else { return size }
        let scale = { (side: Int) in max(1, (side * limit * 2 + longer) / (longer * 2)) }
        return PixelSize(width: scale(size.width), height: scale(size.height))
    }

    // MARK: The reference encoder

    /// The reference algorithm on straight RGBA of a checked size, step by step as `rgbaToThumbHash`
    /// does it, in `Double` (JavaScript's numbers) and in the same order of operations, so that the
    /// rounding of every stored field comes out the same.
    private init(validRGBA rgba: [UInt8], width w: Int, height h: Int) {
        let count = w * h

        // The average colour, weighted by alpha: Σ a·c / Σ a, with a and c in 0…1.
        var avgR = 0.0, avgG = 0.0, avgB = 0.0, avgA = 0.0
        for i in 0..<count {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            avgR += alpha / 255 * Double(rgba[i * 4])
            avgG += alpha / 255 * Double(rgba[i * 4 + 1])
            avgB += alpha / 255 * Double(rgba[i * 4 + 2])
            avgA += alpha
        }
        if avgA > 0 {
            avgR /= avgA
            avgG /= avgA
            avgB /= avgA
        }

        // Alpha is stored when any pixel is not opaque; it then takes the space of 2 L coefficients a side.
        let hasAlpha = avgA < Double(count)
        let lLimit = hasAlpha ? 5 : 7
        let longer = Double(max(w, h))
        let lx = max(1, Self.jsRound(Double(lLimit * w) / longer))
        let ly = max(1, Self.jsRound(Double(lLimit * h) / longer))

        // RGBA to LPQA, each pixel composited over the average colour so that transparent pixels carry
        // no colour of their own.
        var l = [Double](repeating: 0, count: count), p = l, q = l, a = l
        for i in 0..<count {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            let r = avgR * (1 - alpha) + alpha / 255 * Double(rgba[i * 4])
            let g = avgG * (1 - alpha) + alpha / 255 * Double(rgba[i * 4 + 1])
            let b = avgB * (1 - alpha) + alpha / 255 * Double(rgba[i * 4 + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }

        let lChannel = Self.encodeChannel(l, width: w, height: h, nx: max(3, lx), ny: max(3, ly))
        let pChannel = Self.encodeChannel(p, width: w, height: h, nx: 3, ny: 3)
        let qChannel = Self.encodeChannel(q, width: w, height: h, nx: 3, ny: 3)
        let aChannel = hasAlpha ? Self.encodeChannel(a, width: w, height: h, nx: 5, ny: 5) : nil

        // The header. Each field's value is within its width (L in 0…1 gives 0…63, P and Q in −1…1 give
        // 0…63, the scales are at most 1); the masks only make that explicit.
        let isLandscape = w > h
        let header24 = Self.jsRound(63 * lChannel.dc) & 63
            | (Self.jsRound(31.5 + 31.5 * pChannel.dc) & 63) << 6
            | (Self.jsRound(31.5 + 31.5 * qChannel.dc) & 63) << 12
            | (Self.jsRound(31 * lChannel.scale) & 31) << 18
            | (hasAlpha ? 1 << 23 : 0)
        let header16 = (isLandscape ? ly : lx)
            | (Self.jsRound(63 * pChannel.scale) & 63) << 3
            | (Self.jsRound(63 * qChannel.scale) & 63) << 9
            | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8(header24 >> 16),
            UInt8(header16 & 255), UInt8(header16 >> 8),
        ]
        if let aChannel {
            hash.append(UInt8(Self.jsRound(15 * aChannel.dc) & 15 | (Self.jsRound(15 * aChannel.scale) & 15) << 4))
        }

        // The AC coefficients, already mapped to 0…1, as nibbles: low nibble first.
        var index = 0
        for channel in [lChannel, pChannel, qChannel] + (aChannel.map { [$0] } ?? []) {
            for f in channel.ac {
                let nibble = UInt8(Self.jsRound(15 * f) & 15)
                if index & 1 == 0 { hash.append(nibble) } else { hash[hash.count - 1] |= nibble << 4 }
                index += 1
            }
        }
        bytes = hash
    }

    /// One channel's DCT terms on an `nx × ny` triangle of frequencies (see ``acCount(nx:ny:)``).
    /// Coefficient (cx, cy) is `Σ c(x, y) × cos(π / w × cx × (x + ½)) × cos(π / h × cy × (y + ½)) / (w × h)`;
    /// (0, 0) is the DC term (the mean), the others are the AC terms, divided by the largest magnitude
    /// `scale` and mapped to `0.5 + 0.5 × c / scale` (0…1).
    private static func encodeChannel(_ channel: [Double], width w: Int, height h: Int,
                                      nx: Int, ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
        var dc = 0.0, scale = 0.0
        var ac: [Double] = []
        var fx = [Double](repeating: 0, count: w)
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                var f = 0.0
                for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                for y in 0..<h {
                    let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                    for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                }
                f /= Double(w * h)
                if cx > 0 || cy > 0 {
                    ac.append(f)
                    scale = max(scale, abs(f))
                } else {
                    dc = f
                }
                cx += 1
            }
        }
        if scale > 0 {
            for i in ac.indices { ac[i] = 0.5 + 0.5 / scale * ac[i] }
        }
        return (dc, ac, scale)
    }

    // MARK: Downscaling

    /// `image` box-averaged to `size` (smaller on both sides) as straight RGBA; see ``init(image:)``.
    /// Reads the source once, row by row, into per-column sums of the output row being built.
    private static func boxAverage(_ image: some BitmapImage, to size: PixelSize) -> [UInt8] {
        let sw = image.width, sh = image.height, tw = size.width, th = size.height
        // The output column of each source column; tw ≤ sw, so every output column gets at least one.
        let column = (0..<sw).map { $0 * tw / sw }
        var out = [UInt8](repeating: 0, count: tw * th * 4)
        var sums = [UInt64](repeating: 0, count: tw * 4)
        var counts = [UInt64](repeating: 0, count: tw)
        var row = [UInt8](repeating: 0, count: sw * 4)
        image.withUnsafeBytes { source in
            var outY = 0
            for y in 0..<sh {
                row.withUnsafeMutableBytes { dst in
                    PixelConversion.toBGRA(source.baseAddress! + y * image.bytesPerRow, style: image.style,
                                           to: dst.baseAddress!, width: sw)
                }
                for x in 0..<sw {
                    let o = column[x]
                    for c in 0..<4 { sums[o * 4 + c] += UInt64(row[x * 4 + c]) }
                    counts[o] += 1
                }
                // Source row y falls in output row ⌊y × th / sh⌋; at the last one of outY, write that row.
                if y + 1 == sh || (y + 1) * th / sh != outY {
                    out.withUnsafeMutableBufferPointer { pixels in
                        let base = pixels.baseAddress! + outY * tw * 4
                        for o in 0..<tw {
                            let n = counts[o]
                            // BGRA sums to RGBA means, rounded half up.
                            base[o * 4] = UInt8((sums[o * 4 + 2] + n / 2) / n)
                            base[o * 4 + 1] = UInt8((sums[o * 4 + 1] + n / 2) / n)
                            base[o * 4 + 2] = UInt8((sums[o * 4] + n / 2) / n)
                            base[o * 4 + 3] = UInt8((sums[o * 4 + 3] + n / 2) / n)
                        }
                        // Premultiplied RGBA un-premultiplies as BGRA does: the colour channels are alike.
                        PixelConversion.unpremultiplyRow(UnsafePointer(base), to: base, width: tw)
                    }
                    for i in sums.indices { sums[i] = 0 }
                    for i in counts.indices { counts[i] = 0 }
                    outY += 1
                }
            }
        }
        return out
    }
}
