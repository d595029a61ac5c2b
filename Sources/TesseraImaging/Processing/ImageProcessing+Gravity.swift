extension ImageProcessing {
    /// Which part of the source ``ContentMode/fill`` keeps, and where ``ContentMode/pad`` places the fitted image.
    ///
    /// In JSON a compass point or ``smart`` is its name (`"north-east"`, `"smart"`) and a focal point is
    /// `{"x": 0.25, "y": 0.75}`.
    public enum Gravity: Sendable, Hashable, Codable {
        /// The middle.
        case center
        /// The top edge, centred horizontally.
        case north
        /// The bottom edge, centred horizontally.
        case south
        /// The right edge, centred vertically.
        case east
        /// The left edge, centred vertically.
        case west
        /// The top-right corner.
        case northEast
        /// The top-left corner.
        case northWest
        /// The bottom-right corner.
        case southEast
        /// The bottom-left corner.
        case southWest
        /// The point at fractions `x` and `y` (each 0…1) of the source's width and height, from its top-left
        /// corner: ``ContentMode/fill`` centres its window on it as far as the source allows.
        case focalPoint(x: Double, y: Double)
        /// The point at pixel (`x`, `y`) of the source (display orientation, from its top-left corner;
        /// thumbor's `focal()`): as ``focalPoint(x:y:)`` once the source's size is known, relative to the
        /// region a crop or trim keeps (and moved into it).
        case focalPixel(x: Int, y: Int)
        /// Content-aware: the part of the source with the most detail, for ``ContentMode/fill`` and
        /// ``ContentMode/fillDown``. ``ProcessingGeometry`` (sizes only) places it as ``center``;
        /// ``ImageDecoder/render(_:processing:limits:)`` moves the crop by ``SmartCrop`` on the pixels.
        case smart

        /// The nine compass points, ``center`` first.
        public static let compassPoints: [Gravity] = [.center, .north, .south, .east, .west,
                                                      .northEast, .northWest, .southEast, .southWest]

        /// The compass point or ``smart`` of a name (`center`, `north`, …, `north-east`, …, `smart`);
        /// `nil` for anything else (a focal point has no name).
        public init?(name: String) {
            switch name {
            case "center": self = .center
            case "north": self = .north
            case "south": self = .south
            case "east": self = .east
            case "west": self = .west
            case "north-east": self = .northEast
            case "north-west": self = .northWest
            case "south-east": self = .southEast
            case "south-west": self = .southWest
            case "smart": self = .smart
            default: return nil
            }
        }

        /// The name of a compass point or ``smart`` (`north-east`, `smart`); `nil` for a focal point.
        public var name: String? {
            switch self {
            case .center: "center"
            case .north: "north"
            case .south: "south"
            case .east: "east"
            case .west: "west"
            case .northEast: "north-east"
            case .northWest: "north-west"
            case .southEast: "south-east"
            case .southWest: "south-west"
            case .smart: "smart"
            case .focalPoint, .focalPixel: nil
            }
        }

        /// The gravity's part of ``ImageProcessing/identity``: its ``name``, `fp:x:y` for a focal point
        /// (`fp:0.25:0.75`), `fpx:X:Y` for one in pixels.
        public var identity: String {
            if case .focalPoint(let x, let y) = self {
                return "fp:\(ImageProcessing.canonical(x)):\(ImageProcessing.canonical(y))"
            }
            if case .focalPixel(let x, let y) = self { return "fpx:\(x):\(y)" }
            return name ?? ""
        }

        /// The fractions of the free space left of and above the window or image (0 = the left or top
        /// edge, 0.5 = centred, 1 = the right or bottom edge) for a compass point; ½, ½ for ``smart``
        /// (as ``center``: the render moves it) and for a focal point (which ``ProcessingGeometry`` places itself).
        var compassFractions: (x: Double, y: Double) {
            switch self {
            case .north: (0.5, 0)
            case .south: (0.5, 1)
            case .east: (1, 0.5)
            case .west: (0, 0.5)
            case .northEast: (1, 0)
            case .northWest: (0, 0)
            case .southEast: (1, 1)
            case .southWest: (0, 1)
            case .center, .smart, .focalPoint, .focalPixel: (0.5, 0.5)
            }
        }

        private enum FocalPointKeys: String, CodingKey { case x, y, px, py }

        /// Decodes a name (`"north-east"`), a focal point (`{"x": 0.25, "y": 0.75}`) or one in pixels
        /// (`{"px": 120, "py": 80}`).
        public init(from decoder: any Decoder) throws {
            if let single = try? decoder.singleValueContainer(), let name = try? single.decode(String.self) {
                guard let gravity = Gravity(name: name) else {
                    throw DecodingError.dataCorruptedError(in: single, debugDescription: "unknown gravity \(name)")
                }
                self = gravity
                return
            }
            let c = try decoder.container(keyedBy: FocalPointKeys.self)
            if let px = try c.decodeIfPresent(Int.self, forKey: .px) {
                self = .focalPixel(x: px, y: try c.decode(Int.self, forKey: .py))
                return
            }
            self = .focalPoint(x: try c.decode(Double.self, forKey: .x), y: try c.decode(Double.self, forKey: .y))
        }

        /// Encodes a name, a focal point as `{"x": …, "y": …}`, or one in pixels as `{"px": …, "py": …}`.
        public func encode(to encoder: any Encoder) throws {
            if case .focalPoint(let x, let y) = self {
                var c = encoder.container(keyedBy: FocalPointKeys.self)
                try c.encode(x, forKey: .x)
                try c.encode(y, forKey: .y)
            } else if case .focalPixel(let x, let y) = self {
                var c = encoder.container(keyedBy: FocalPointKeys.self)
                try c.encode(x, forKey: .px)
                try c.encode(y, forKey: .py)
            } else {
                var c = encoder.singleValueContainer()
                try c.encode(name ?? "")
            }
        }
    }
}
