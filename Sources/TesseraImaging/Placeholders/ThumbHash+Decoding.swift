import Foundation

extension ThumbHash {
    /// The image's approximate width / height, from the stored coefficient counts: `lx / ly`, where the
    /// longer side has 7 (5 with alpha) and the shorter what the hash stores. A 100 × 50 opaque image
    /// stores 7 and 4 (`round(7 × 50 / 100)` = 4; halves round up), so this is 7 / 4 = 1.75.
    public var approximateAspectRatio: Double {
        let header = Header(bytes)
        return Double(header.storedLX) / Double(header.storedLY)
    }

    /// The average colour, straight (not premultiplied) alpha, each component 0…1: the DC terms turned
    /// back into RGB (`b = L − ⅔ P`, `r = (3L − b + Q) / 2`, `g = r − Q`), colour clamped to 0…1, and the
    /// alpha DC term (1 without alpha), as the reference's `thumbHashToAverageRGBA`.
    public var averageColor: Color {
        let header = Header(bytes)
        let alpha = header.hasAlpha ? Double(bytes[5] & 15) / 15 : 1
        let (r, g, b) = Self.rgb(l: header.lDC, p: header.pDC, q: header.qDC)
        return Color(red: clamp(r), green: clamp(g), blue: clamp(b), alpha: alpha)
    }

    /// The size ``placeholder()`` draws: 32 pixels on the longer side (by ``approximateAspectRatio``), the
    /// other `round(32 × ratio)` or `round(32 / ratio)`; at least 5 × 32 or 32 × 5.
    public var placeholderSize: PixelSize {
        let ratio = approximateAspectRatio
        return ratio > 1 ? PixelSize(width: 32, height: Self.jsRound(32 / ratio))
                         : PixelSize(width: Self.jsRound(32 * ratio), height: 32)
    }

    /// The placeholder image as the reference's `thumbHashToRGBA` draws it: ``placeholderSize``, straight
    /// (not premultiplied) RGBA, rows packed (`width × 4` bytes each), top row first. Each channel is
    /// `255 × c` clamped to 0…255 and truncated, as the reference's byte array stores it.
    public func placeholderRGBA() -> [UInt8] {
        let header = Header(bytes)
        let size = placeholderSize
        let (w, h) = (size.width, size.height)
        let lx = header.lx, ly = header.ly, hasAlpha = header.hasAlpha

        // The AC coefficients back from nibbles: nibble / 7.5 − 1 is −1…1, times the channel's scale.
        // P and Q get 1.25 × their scale, which the reference adds to make up for the saturation
        // quantisation takes away.
        var index = 0
        func channel(nx: Int, ny: Int, scale: Double) -> [Double] {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    let byte = bytes[header.acStart + (index >> 1)]
                    let nibble = (byte >> ((index & 1) << 2)) & 15
                    ac.append((Double(nibble) / 7.5 - 1) * scale)
                    index += 1
                    cx += 1
                }
            }
            return ac
        }
        let lAC = channel(nx: lx, ny: ly, scale: header.lScale)
        let pAC = channel(nx: 3, ny: 3, scale: header.pScale * 1.25)
        let qAC = channel(nx: 3, ny: 3, scale: header.qScale * 1.25)
        let aDC = hasAlpha ? Double(bytes[5] & 15) / 15 : 1
        let aAC = hasAlpha ? channel(nx: 5, ny: 5, scale: Double(bytes[5] >> 4) / 15) : []

        // The inverse DCT at each pixel centre: value = DC + Σ 2 × ac × cos(π / w × (x + ½) × cx) × cos(π / h × (y + ½) × cy).
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        let nx = max(lx, hasAlpha ? 5 : 3), ny = max(ly, hasAlpha ? 5 : 3)
        var fx = [Double](repeating: 0, count: nx), fy = [Double](repeating: 0, count: ny)
        var i = 0
        for y in 0..<h {
            for x in 0..<w {
                var l = header.lDC, p = header.pDC, q = header.qDC, a = aDC
                for cx in 0..<nx { fx[cx] = cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double(cx)) }
                for cy in 0..<ny { fy[cy] = cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double(cy)) }

                var j = 0
                for cy in 0..<ly {
                    let fy2 = fy[cy] * 2
                    var cx = cy > 0 ? 0 : 1
                    while cx * ly < lx * (ly - cy) {
                        l += lAC[j] * fx[cx] * fy2
                        j += 1
                        cx += 1
                    }
                }
                j = 0
                for cy in 0..<3 {
                    let fy2 = fy[cy] * 2
                    var cx = cy > 0 ? 0 : 1
                    while cx < 3 - cy {
                        let f = fx[cx] * fy2
                        p += pAC[j] * f
                        q += qAC[j] * f
                        j += 1
                        cx += 1
                    }
                }
                if hasAlpha {
                    j = 0
                    for cy in 0..<5 {
                        let fy2 = fy[cy] * 2
                        var cx = cy > 0 ? 0 : 1
                        while cx < 5 - cy {
                            a += aAC[j] * fx[cx] * fy2
                            j += 1
                            cx += 1
                        }
                    }
                }

                let (r, g, b) = Self.rgb(l: l, p: p, q: q)
                rgba[i] = Self.byte(r)
                rgba[i + 1] = Self.byte(g)
                rgba[i + 2] = Self.byte(b)
                rgba[i + 3] = Self.byte(a)
                i += 4
            }
        }
        return rgba
    }

    /// ``placeholderRGBA()`` as a ``Bitmap`` in Tessera's convention, ``PixelStyle/bgra32`` with
    /// premultiplied alpha (each colour `round(c × a / 255)`), ready to draw or scale up.
    public func placeholder() -> Bitmap {
        let size = placeholderSize
        let rgba = placeholderRGBA()
        return Bitmap(width: size.width, height: size.height, style: .bgra32) { view in
            for y in 0..<size.height {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<size.width {
                    let s = (y * size.width + x) * 4, d = x * 4
                    row[d] = rgba[s + 2]
                    row[d + 1] = rgba[s + 1]
                    row[d + 2] = rgba[s]
                    row[d + 3] = rgba[s + 3]
                }
                PixelConversion.premultiplyRow(row, width: size.width)
            }
        }
    }

    /// L, P, Q back to R, G, B (unclamped): `b = L − ⅔ P`, `r = (3L − b + Q) / 2`, `g = r − Q`, the
    /// inverse of `L = (r + g + b) / 3`, `P = (r + g) / 2 − b`, `Q = r − g`.
    @inline(__always)
    private static func rgb(l: Double, p: Double, q: Double) -> (Double, Double, Double) {
        let b = l - 2 / 3 * p
        let r = (3 * l - b + q) / 2
        return (r, r - q, b)
    }

    /// `max(0, 255 × min(1, c))` truncated to a byte, as JavaScript stores it in a `Uint8Array`.
    @inline(__always)
    private static func byte(_ c: Double) -> UInt8 {
        UInt8(max(0, 255 * min(1, c)))
    }
}

/// `c` clamped to 0…1.
private func clamp(_ c: Double) -> Double { max(0, min(1, c)) }
