/// Conversions between the four ``PixelStyle``s, row by row, honouring both strides.
///
/// Every pair is supported. Conversions go through premultiplied ``PixelStyle/bgra32`` as the hub
/// (one temporary row, never a whole image) unless source or target already is BGRA or both styles
/// are equal. The rules:
/// - to ``PixelStyle/bgr32``: colour channels copied, fourth byte 255. Because BGRA is premultiplied,
///   dropping alpha this way composites over black.
/// - to ``PixelStyle/gray8``: Rec. 601 luma, `(77 R + 150 G + 29 B + 128) >> 8`, of the premultiplied
///   colour (so also composited over black).
/// - to ``PixelStyle/bgr565``: each channel rounded to 5/6/5 bits.
/// - from ``PixelStyle/bgr565``: bits replicated (`r8 = r5 << 3 | r5 >> 2`), so 565 → 8888 → 565 is lossless.
/// - from opaque styles to ``PixelStyle/bgra32``: alpha 255.
public enum PixelConversion {
    /// Converts the pixels at `source`, laid out as `layout`, into `target`.
    ///
    /// The caller promises `layout.byteCount` readable bytes at `source`.
    /// - Throws: ``/TesseraCore/TesseraError`` with reason `.invalidLayout` (the target's geometry) when the
    ///   widths or heights differ.
    public static func convert(source: UnsafeRawPointer, layout: BitmapLayout, to target: MutableBitmapView) throws(TesseraError) {
        let tl = target.layout
        guard layout.width == tl.width, layout.height == tl.height else {
            throw TesseraError(.invalidLayout(width: tl.width, height: tl.height, bytesPerRow: tl.bytesPerRow))
        }
        let width = layout.width
        if layout.style == tl.style {
            let rowBytes = width * layout.style.bytesPerPixel
            for y in 0..<layout.height {
                let src = source + y * layout.bytesPerRow
                let dst = target.row(y)
                if src != UnsafeRawPointer(dst) { dst.copyMemory(from: src, byteCount: rowBytes) }
            }
            return
        }
        let needsTemp = layout.style != .bgra32 && tl.style != .bgra32
        let temp = UnsafeMutableRawPointer.allocate(byteCount: needsTemp ? width * 4 : 1, alignment: 16)
        defer { temp.deallocate() }
        for y in 0..<layout.height {
            let src = source + y * layout.bytesPerRow
            let dst = target.row(y)
            if layout.style == .bgra32 {
                fromBGRA(src, to: dst, style: tl.style, width: width)
            } else if tl.style == .bgra32 {
                toBGRA(src, style: layout.style, to: dst, width: width)
            } else {
                toBGRA(src, style: layout.style, to: temp, width: width)
                fromBGRA(UnsafeRawPointer(temp), to: dst, style: tl.style, width: width)
            }
        }
    }

    /// Converts `image` into `target`; see ``convert(source:layout:to:)``.
    /// - Throws: ``/TesseraCore/TesseraError`` with reason `.invalidLayout` when the sizes differ.
    public static func convert(_ image: some BitmapImage, to target: MutableBitmapView) throws(TesseraError) {
        try image.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(TesseraError) in
            guard let base = bytes.baseAddress else {
                throw TesseraError(.invalidLayout(width: image.width, height: image.height, bytesPerRow: image.bytesPerRow))
            }
            try convert(source: base, layout: image.layout, to: target)
        }
    }

    /// Premultiplies straight-alpha BGRA pixels in place: each colour becomes `round(c × a / 255)`.
    /// Rows of fully opaque pixels are left alone; fully transparent pixels become all zero.
    /// The view's style is not checked: it must hold 4-byte BGRA pixels.
    public static func premultiplyBGRA(_ view: MutableBitmapView) {
        for y in 0..<view.layout.height {
            premultiplyRow(view.row(y).assumingMemoryBound(to: UInt8.self), width: view.layout.width)
        }
    }

    /// Premultiplies one row of `width` straight-alpha BGRA pixels in place.
    static func premultiplyRow(_ p: UnsafeMutablePointer<UInt8>, width: Int) {
        for x in 0..<width {
            let o = x &* 4
            let a = UInt32(p[o &+ 3])
            if a == 255 { continue }
            if a == 0 {
                p[o] = 0; p[o &+ 1] = 0; p[o &+ 2] = 0
                continue
            }
            p[o] = mulDiv255(UInt32(p[o]), a)
            p[o &+ 1] = mulDiv255(UInt32(p[o &+ 1]), a)
            p[o &+ 2] = mulDiv255(UInt32(p[o &+ 2]), a)
        }
    }

    /// Un-premultiplies one row of `width` premultiplied BGRA pixels from `src` into `dst`
    /// (straight alpha, as PNG stores it). `src` and `dst` may be the same.
    static func unpremultiplyRow(_ src: UnsafePointer<UInt8>, to dst: UnsafeMutablePointer<UInt8>, width: Int) {
        for x in 0..<width {
            let o = x &* 4
            let a = UInt32(src[o &+ 3])
            if a == 255 {
                dst[o] = src[o]; dst[o &+ 1] = src[o &+ 1]; dst[o &+ 2] = src[o &+ 2]; dst[o &+ 3] = 255
            } else if a == 0 {
                dst[o] = 0; dst[o &+ 1] = 0; dst[o &+ 2] = 0; dst[o &+ 3] = 0
            } else {
                let half = a / 2
                dst[o] = UInt8(min(255, (UInt32(src[o]) * 255 + half) / a))
                dst[o &+ 1] = UInt8(min(255, (UInt32(src[o &+ 1]) * 255 + half) / a))
                dst[o &+ 2] = UInt8(min(255, (UInt32(src[o &+ 2]) * 255 + half) / a))
                dst[o &+ 3] = UInt8(a)
            }
        }
    }

    /// `round(c × a / 255)` for bytes, without a division.
    @inline(__always)
    static func mulDiv255(_ c: UInt32, _ a: UInt32) -> UInt8 {
        let t = c &* a &+ 128
        return UInt8(truncatingIfNeeded: (t &+ (t >> 8)) >> 8)
    }

    /// One row of `style` pixels to premultiplied BGRA.
    static func toBGRA(_ src: UnsafeRawPointer, style: PixelStyle, to dst: UnsafeMutableRawPointer, width: Int) {
        let d = dst.assumingMemoryBound(to: UInt8.self)
        switch style {
        case .bgra32:
            dst.copyMemory(from: src, byteCount: width * 4)
        case .bgr32:
            let s = src.assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let o = x &* 4
                d[o] = s[o]; d[o &+ 1] = s[o &+ 1]; d[o &+ 2] = s[o &+ 2]; d[o &+ 3] = 255
            }
        case .bgr565:
            let s = src.assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let v = UInt16(s[x &* 2]) | UInt16(s[x &* 2 &+ 1]) << 8
                let r5 = UInt8(truncatingIfNeeded: v >> 11), g6 = UInt8(truncatingIfNeeded: (v >> 5) & 0x3F)
                let b5 = UInt8(truncatingIfNeeded: v & 0x1F)
                let o = x &* 4
                d[o] = b5 << 3 | b5 >> 2
                d[o &+ 1] = g6 << 2 | g6 >> 4
                d[o &+ 2] = r5 << 3 | r5 >> 2
                d[o &+ 3] = 255
            }
        case .gray8:
            let s = src.assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let g = s[x], o = x &* 4
                d[o] = g; d[o &+ 1] = g; d[o &+ 2] = g; d[o &+ 3] = 255
            }
        }
    }

    /// One row of premultiplied BGRA to `style`.
    static func fromBGRA(_ src: UnsafeRawPointer, to dst: UnsafeMutableRawPointer, style: PixelStyle, width: Int) {
        let s = src.assumingMemoryBound(to: UInt8.self)
        let d = dst.assumingMemoryBound(to: UInt8.self)
        switch style {
        case .bgra32:
            dst.copyMemory(from: src, byteCount: width * 4)
        case .bgr32:
            for x in 0..<width {
                let o = x &* 4
                d[o] = s[o]; d[o &+ 1] = s[o &+ 1]; d[o &+ 2] = s[o &+ 2]; d[o &+ 3] = 255
            }
        case .bgr565:
            for x in 0..<width {
                let o = x &* 4
                let b5 = (UInt16(s[o]) &* 31 &+ 127) / 255
                let g6 = (UInt16(s[o &+ 1]) &* 63 &+ 127) / 255
                let r5 = (UInt16(s[o &+ 2]) &* 31 &+ 127) / 255
                let v = r5 << 11 | g6 << 5 | b5
                d[x &* 2] = UInt8(truncatingIfNeeded: v)
                d[x &* 2 &+ 1] = UInt8(truncatingIfNeeded: v >> 8)
            }
        case .gray8:
            for x in 0..<width {
                let o = x &* 4
                let y = (77 &* UInt32(s[o &+ 2]) &+ 150 &* UInt32(s[o &+ 1]) &+ 29 &* UInt32(s[o]) &+ 128) >> 8
                d[x] = UInt8(truncatingIfNeeded: y)
            }
        }
    }
}
