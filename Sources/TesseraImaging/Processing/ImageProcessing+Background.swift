extension ImageProcessing {
    /// An 8-bit sRGB colour with straight (not premultiplied) alpha: the pad and flattening colour of an
    /// ``ImageProcessing``. Eight bits, not ``Color``'s doubles, so that it has one exact text in
    /// ``ImageProcessing/identity`` and JSON (`"ffffffff"`, red green blue alpha in hexadecimal).
    public struct Background: Sendable, Hashable, Codable {
        /// Red, 0…255.
        public var red: UInt8
        /// Green, 0…255.
        public var green: UInt8
        /// Blue, 0…255.
        public var blue: UInt8
        /// Opacity, 0 (transparent) … 255 (opaque).
        public var alpha: UInt8

        /// Creates a colour (opaque unless `alpha` says otherwise).
        public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
            self.red = red
            self.green = green
            self.blue = blue
            self.alpha = alpha
        }

        /// Opaque white, the default.
        public static let white = Background(red: 255, green: 255, blue: 255)
        /// Fully transparent black.
        public static let clear = Background(red: 0, green: 0, blue: 0, alpha: 0)

        /// Parses `rrggbb` (opaque) or `rrggbbaa` in hexadecimal, with or without a leading `#`, either case;
        /// `nil` when malformed.
        public init?(hex text: String) {
            let digits = text.hasPrefix("#") ? text.dropFirst() : Substring(text)
            guard digits.count == 6 || digits.count == 8, digits.allSatisfy(\.isHexDigit),
                  let value = UInt32(digits, radix: 16) else { return nil }
            let rgba = digits.count == 6 ? value << 8 | 0xFF : value
            self.init(red: UInt8(rgba >> 24), green: UInt8(rgba >> 16 & 0xFF), blue: UInt8(rgba >> 8 & 0xFF),
                      alpha: UInt8(rgba & 0xFF))
        }

        /// `rrggbbaa` in lowercase hexadecimal (`ffffffff` for ``white``).
        public var hex: String {
            [red, green, blue, alpha].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }

        /// The colour for drawing.
        public var color: Color { Color(red8: red, green8: green, blue8: blue, alpha8: alpha) }

        /// Decodes ``hex`` text (`"ff8800"` or `"#ff880080"`).
        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            let text = try c.decode(String.self)
            guard let colour = Background(hex: text) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "\(text) is not rrggbb or rrggbbaa")
            }
            self = colour
        }

        /// Encodes ``hex``.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(hex)
        }
    }
}
