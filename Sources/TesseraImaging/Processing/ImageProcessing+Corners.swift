extension ImageProcessing {
    /// Round corners (thumbor's `round_corner`): in each corner of the output, what lies outside a quarter
    /// ellipse of radii ``horizontal`` × ``vertical`` output pixels takes ``colour``'s red, green and blue
    /// and keeps its own alpha (so a transparent pixel stays transparent, as thumbor paints), or, when
    /// ``colour``'s alpha is 0, becomes transparent; the edge antialiased over one pixel. Radii larger than
    /// half the output are cut to half of it.
    public struct RoundCorners: Sendable, Hashable, Codable {
        /// The ellipse's horizontal radius, in output pixels.
        public var horizontal: Int
        /// Its vertical radius.
        public var vertical: Int
        /// What the corners outside it become.
        public var colour: Background

        /// Corners of radii `horizontal` × `vertical` (a circle's without `vertical`) painted `colour`.
        public init(horizontal: Int, vertical: Int? = nil, colour: Background = .white) {
            self.horizontal = horizontal
            self.vertical = vertical ?? horizontal
            self.colour = colour
        }

        /// `H:V:RRGGBBAA`: the identity's part.
        var identity: String { "\(horizontal):\(vertical):\(colour.hex)" }
    }
}

extension Effects {
    /// Paints the four corners of `view` (premultiplied ``PixelStyle/bgra32``) outside the quarter ellipses of
    /// `corners`: each pixel's colour blended towards the corners' colour (premultiplied by the pixel's own
    /// alpha, which stays), or its every channel faded towards transparent, by the share of it outside the
    /// ellipse (its distance from the edge, in pixels along the smaller radius, clamped to 0…1).
    static func roundCorners(_ view: MutableBitmapView, _ corners: ImageProcessing.RoundCorners) {
        let width = view.layout.width, height = view.layout.height
        let a = min(corners.horizontal, width / 2), b = min(corners.vertical, height / 2)
        guard view.layout.style.bytesPerPixel == 4, a > 0, b > 0 else { return }
        let colour = corners.colour
        let fill = [Double(colour.blue), Double(colour.green), Double(colour.red)]
        let fades = colour.alpha == 0
        let ra = Double(a), rb = Double(b), scale = min(ra, rb)
        for dy in 0..<b {
            for dx in 0..<a {
                // The pixel's centre relative to the ellipse's centre, in the top-left corner.
                let u = (Double(dx) + 0.5 - ra) / ra, v = (Double(dy) + 0.5 - rb) / rb
                let outside = min(max(((u * u + v * v).squareRoot() - 1) * scale + 0.5, 0), 1)
                guard outside > 0 else { continue }
                for (x, y) in [(dx, dy), (width - 1 - dx, dy), (dx, height - 1 - dy), (width - 1 - dx, height - 1 - dy)] {
                    let pixel = view.row(y).assumingMemoryBound(to: UInt8.self) + x * 4
                    if fades {
                        for c in 0..<4 { pixel[c] = UInt8((Double(pixel[c]) * (1 - outside)).rounded()) }
                    } else {
                        let alpha = Double(pixel[3]) / 255
                        for c in 0..<3 { pixel[c] = UInt8((Double(pixel[c]) * (1 - outside) + fill[c] * alpha * outside).rounded()) }
                    }
                }
            }
        }
    }
}
