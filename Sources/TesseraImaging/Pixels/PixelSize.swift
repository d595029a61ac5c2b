/// A size in whole pixels.
public struct PixelSize: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The number of pixels, `width × height`.
    public var pixelCount: Int { width * height }

    /// The size with width and height exchanged (for 90° rotations).
    public var transposed: PixelSize { PixelSize(width: height, height: width) }

    /// Parses `"WxH"`, for example `"100x100"`; `nil` when malformed or not positive.
    public init?(parsing text: some StringProtocol) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }

    /// `"WxH"`.
    public var description: String { "\(width)x\(height)" }
}
