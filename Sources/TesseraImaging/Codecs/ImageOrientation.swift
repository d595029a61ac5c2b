/// The EXIF orientation of stored pixels: how to turn them to show the picture upright.
/// Raw values are the EXIF tag values 1…8.
public enum ImageOrientation: Int, Sendable, Hashable, Codable, CaseIterable {
    /// 1: stored upright.
    case up = 1
    /// 2: mirrored left to right.
    case upMirrored = 2
    /// 3: rotated 180°.
    case down = 3
    /// 4: mirrored top to bottom.
    case downMirrored = 4
    /// 5: mirrored along the main diagonal (transposed).
    case leftMirrored = 5
    /// 6: must be turned 90° clockwise to display.
    case right = 6
    /// 7: mirrored along the anti-diagonal (transversed).
    case rightMirrored = 7
    /// 8: must be turned 90° counter-clockwise to display.
    case left = 8

    /// Whether width and height swap when the orientation is applied.
    public var swapsAxes: Bool { rawValue >= 5 }

    /// The displayed size of stored pixels of `size`.
    public func displaySize(of size: PixelSize) -> PixelSize { swapsAxes ? size.transposed : size }

    /// For a displayed pixel (`x`, `y`) of an image whose stored size is `stored`, the stored pixel it comes from.
    public func storedPoint(x: Int, y: Int, stored: PixelSize) -> (x: Int, y: Int) {
        let w = stored.width, h = stored.height
        switch self {
        case .up: return (x, y)
        case .upMirrored: return (w - 1 - x, y)
        case .down: return (w - 1 - x, h - 1 - y)
        case .downMirrored: return (x, h - 1 - y)
        case .leftMirrored: return (y, x)
        case .right: return (y, h - 1 - x)
        case .rightMirrored: return (w - 1 - y, h - 1 - x)
        case .left: return (w - 1 - y, x)
        }
    }
}
