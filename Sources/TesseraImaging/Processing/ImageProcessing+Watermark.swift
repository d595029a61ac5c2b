extension ImageProcessing {
    /// An image drawn over the output, last of all (``ImageProcessing/watermark``). The value names the
    /// image; the pixels come from whoever renders (``ImageDecoder/render(_:processing:limits:watermark:)``'s
    /// `watermark`; `tessera serve` loads them at start-up by name), and ``version`` says which pixels, so
    /// that a changed image changes the identity.
    ///
    /// Placement, with an output of W×H and the watermark drawn w×h: ``scale`` makes w = W × scale (at
    /// least 1, h keeping the image's aspect ratio); without it the image keeps its own size. A compass
    /// ``position`` puts it at that edge or corner (x = (W − w) × 0, ½ or 1, likewise y, rounded down), then
    /// the offset (``offsetX``, ``offsetY``) moves it away from the edges it touches (towards the centre) and, at the centre, right
    /// and down: south-east with offset (10, 5) is at (W − w − 10, H − h − 5). ``Position/repeat`` tiles it
    /// from the top-left corner with the offset as the gap between tiles. Drawn with cairo's "over" at
    /// ``opacity``, clipped to the output.
    public struct Watermark: Sendable, Hashable, Codable {
        /// Where the watermark goes: a compass point of ``ImageProcessing/Gravity`` or tiled all over.
        public enum Position: Sendable, Hashable, Codable {
            /// At a compass point (centre, north, south-east, …); focal points and smart are the centre.
            case gravity(Gravity)
            /// Tiled from the top-left corner.
            case `repeat`

            /// `repeat`, or a gravity's name (`south-east`, …).
            public init?(name: String) {
                if name == "repeat" { self = .repeat; return }
                guard let gravity = Gravity(name: name), gravity != .smart else { return nil }
                self = .gravity(gravity)
            }

            /// The name ``init(name:)`` reads.
            public var name: String {
                switch self {
                case .repeat: "repeat"
                case .gravity(let gravity): gravity.identity
                }
            }

            /// Decodes a name.
            public init(from decoder: any Decoder) throws {
                let text = try decoder.singleValueContainer().decode(String.self)
                guard let position = Self(name: text) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(text) is not a watermark position"))
                }
                self = position
            }

            /// Encodes the name.
            public func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(name)
            }
        }

        /// The watermark's name (`--watermark NAME=FILE`).
        public var name: String
        /// Which pixels the name stands for (a digest of the image's file, set by whoever loads it); part of
        /// the identity. `nil` until then.
        public var version: String?
        /// Where it goes; south-east by default.
        public var position: Position
        /// 0…1; 1 (opaque) by default.
        public var opacity: Double
        /// The watermark's width as a fraction of the output's, 0 (exclusive)…1; `nil` keeps its own size.
        public var scale: Double?
        /// Pixels away from the edges it touches (the gap between tiles for ``Position/repeat``); (0, 0) by default.
        public var offsetX: Int
        /// See ``offsetX``.
        public var offsetY: Int

        /// A watermark named `name`, with the defaults documented on each property.
        public init(name: String, version: String? = nil, position: Position = .gravity(.southEast), opacity: Double = 1,
                    scale: Double? = nil, offsetX: Int = 0, offsetY: Int = 0) {
            self.name = name
            self.version = version
            self.position = position
            self.opacity = opacity
            self.scale = scale
            self.offsetX = offsetX
            self.offsetY = offsetY
        }

        private enum CodingKeys: String, CodingKey { case name, position, opacity, scale, offset }

        /// Decodes `{"name": N, "position": P, "opacity": O, "scale": S, "offset": [X, Y]}`; all but the name may be left out.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let offset = try c.decodeIfPresent([Int].self, forKey: .offset) ?? [0, 0]
            guard offset.count == 2 else {
                throw DecodingError.dataCorruptedError(forKey: .offset, in: c, debugDescription: "offset is [X, Y]")
            }
            self.init(name: try c.decode(String.self, forKey: .name),
                      position: try c.decodeIfPresent(Position.self, forKey: .position) ?? .gravity(.southEast),
                      opacity: try c.decodeIfPresent(Double.self, forKey: .opacity) ?? 1,
                      scale: try c.decodeIfPresent(Double.self, forKey: .scale), offsetX: offset[0], offsetY: offset[1])
        }

        /// Encodes the fields ``init(from:)`` reads (not ``version``: the loader sets it).
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(position, forKey: .position)
            try c.encode(opacity, forKey: .opacity)
            try c.encodeIfPresent(scale, forKey: .scale)
            try c.encode([offsetX, offsetY], forKey: .offset)
        }

        /// `NAME@VERSION:POSITION:OPACITY:SCALE:X:Y`: the identity's part.
        var identity: String {
            "\(name)@\(version ?? "-"):\(position.name):\(canonical(opacity)):\(scale.map(canonical) ?? "-"):\(offsetX):\(offsetY)"
        }

        /// The size `image` is drawn at on an output of `size` (``scale``, or its own).
        private func drawnSize(of image: PixelSize, on size: PixelSize) -> PixelSize {
            guard let scale else { return image }
            let w = max(1, Int((Double(size.width) * scale).rounded()))
            return PixelSize(width: w, height: max(1, Int((Double(w) * Double(image.height) / Double(image.width)).rounded())))
        }

        /// How many rectangles ``placements(of:on:)`` gives, worked out without making them: 1, or for
        /// ``Position/repeat`` ⌈W ÷ (w + gap)⌉ × ⌈H ÷ (h + gap)⌉ (what a bound is checked against first).
        func tileCount(of image: PixelSize, on size: PixelSize) -> Int {
            guard case .repeat = position else { return 1 }
            let drawn = drawnSize(of: image, on: size)
            let stepX = drawn.width + max(0, offsetX), stepY = drawn.height + max(0, offsetY)
            return ((size.width + stepX - 1) / stepX) * ((size.height + stepY - 1) / stepY)
        }

        /// The rectangles `image` is drawn into on an output of `size` (one, or the tiles of ``Position/repeat``).
        func placements(of image: PixelSize, on size: PixelSize) -> [Rect] {
            let drawn = drawnSize(of: image, on: size)
            let w = drawn.width, h = drawn.height
            switch position {
            case .repeat:
                let stepX = w + max(0, offsetX), stepY = h + max(0, offsetY)
                return stride(from: 0, to: size.height, by: stepY).flatMap { y in
                    stride(from: 0, to: size.width, by: stepX).map { x in Rect(x: Double(x), y: Double(y), width: Double(w), height: Double(h)) }
                }
            case .gravity(let gravity):
                let (fx, fy) = gravity.compassFractions
                // Away from a touched edge: +offset on the west/north side, −offset on the east/south side;
                // at the centre, right and down.
                let dx = fx == 1 ? -offsetX : offsetX, dy = fy == 1 ? -offsetY : offsetY
                let x = (Double(size.width - w) * fx).rounded(.down) + Double(dx)
                let y = (Double(size.height - h) * fy).rounded(.down) + Double(dy)
                return [Rect(x: x, y: y, width: Double(w), height: Double(h))]
            }
        }
    }
}
