extension ImageProcessing {
    /// A region of the source cut out before anything else (``ImageProcessing/crop``): `width` × `height`
    /// placed by `gravity`. Each side is in source pixels (display orientation) when it is 1 or more, a
    /// fraction of the source's side when it is below 1, and the whole side when it is 0; a side larger than
    /// the source's is the source's (the region is clamped to the source).
    ///
    /// For a 4000×3000 photo: `Crop(width: 1000, height: 0.5)` is 1000×1500; centred it starts at
    /// ((4000 − 1000) × ½, (3000 − 1500) × ½) = (1500, 750); `north-west` at (0, 0); a focal point (0.9, 0.5)
    /// centres it on (3600, 1500), moved back inside: x = min(3600 − 500, 4000 − 1000) = 3000.
    /// ``Gravity/smart`` moves it to the part with the most detail (``SmartCrop``, when the image is drawn).
    public struct Crop: Sendable, Hashable, Codable {
        /// The region's width: pixels (≥ 1), a fraction of the source's width (< 1), or all of it (0).
        public var width: Double
        /// The region's height, as ``width`` is its width.
        public var height: Double
        /// Where the region lies in the source; the centre by default.
        public var gravity: Gravity

        /// A `width` × `height` region placed by `gravity`.
        public init(width: Double, height: Double, gravity: Gravity = .center) {
            self.width = width
            self.height = height
            self.gravity = gravity
        }

        private enum CodingKeys: String, CodingKey { case width, height, gravity }

        /// Decodes `{"width": W, "height": H, "gravity": G}`; the gravity may be left out.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(width: try c.decode(Double.self, forKey: .width), height: try c.decode(Double.self, forKey: .height),
                      gravity: try c.decodeIfPresent(Gravity.self, forKey: .gravity) ?? .center)
        }

        /// `W:H:G` in canonical numbers: the identity's part.
        var identity: String { "\(canonical(width)):\(canonical(height)):\(gravity.identity)" }

        /// One side of the region for a source side of `side` pixels: whole pixels, 1…`side`.
        static func length(_ value: Double, of side: Int) -> Int {
            let pixels = value == 0 ? Double(side) : value < 1 ? value * Double(side) : value
            return min(side, max(1, Int(pixels.rounded())))
        }
    }

    /// A region of the source given by its edges in source pixels (display orientation), thumbor's manual
    /// crop: columns `left` up to (not including) `right`, rows `top` up to `bottom`. Clamped to the source:
    /// `CropBox(left: 100, top: 0, right: 9000, bottom: 500)` of a 4000×3000 photo is the 3900×500 region at
    /// (100, 0). A box that is empty once clamped (it lies outside the source) is refused when the image is
    /// drawn (``Parameter/crop``).
    public struct CropBox: Sendable, Hashable, Codable {
        /// The first column.
        public var left: Int
        /// The first row.
        public var top: Int
        /// The column after the last.
        public var right: Int
        /// The row after the last.
        public var bottom: Int

        /// The box of columns `left..<right` and rows `top..<bottom`.
        public init(left: Int, top: Int, right: Int, bottom: Int) {
            self.left = left
            self.top = top
            self.right = right
            self.bottom = bottom
        }

        /// `L,T,R,B`: the identity's part.
        var identity: String { "\(left),\(top),\(right),\(bottom)" }
    }

    /// The region of a `source`-sized image (display orientation) that the rest of the processing sees,
    /// in whole pixels: all of it, or ``crop`` placed by its gravity (``Gravity/smart`` as the centre:
    /// the render moves it), or ``cropBox`` clamped. Throws ``Invalid`` (``Parameter/crop``) for a crop box
    /// outside the source.
    public func sourceRegion(in source: PixelSize) throws(Invalid) -> Rect {
        if let box = cropBox {
            let left = min(max(box.left, 0), source.width), right = min(max(box.right, 0), source.width)
            let top = min(max(box.top, 0), source.height), bottom = min(max(box.bottom, 0), source.height)
            guard right > left, bottom > top else {
                throw Invalid(parameter: .crop, message: "crop box \(box.identity) is empty inside the \(source) source")
            }
            return Rect(x: Double(left), y: Double(top), width: Double(right - left), height: Double(bottom - top))
        }
        guard let crop else { return Rect(size: source) }
        let w = Crop.length(crop.width, of: source.width), h = Crop.length(crop.height, of: source.height)
        let freeX = Double(source.width - w), freeY = Double(source.height - h)
        let x: Double, y: Double
        if case .focalPoint(let fx, let fy) = crop.gravity {
            x = min(max((fx * Double(source.width) - Double(w) / 2).rounded(.down), 0), freeX)
            y = min(max((fy * Double(source.height) - Double(h) / 2).rounded(.down), 0), freeY)
        } else {
            let (fx, fy) = crop.gravity.compassFractions
            x = (freeX * fx).rounded(.down)
            y = (freeY * fy).rounded(.down)
        }
        return Rect(x: x, y: y, width: Double(w), height: Double(h))
    }
}
