extension ImageProcessing {
    /// A clockwise turn of the output by a multiple of 90° (``ImageProcessing/rotation``), after the
    /// source's EXIF orientation and the resize: 90 and 270 swap the output's width and height.
    public enum Rotation: Int, Sendable, Hashable, Codable, CaseIterable {
        /// No turn.
        case none = 0
        /// A quarter turn clockwise.
        case quarter = 90
        /// A half turn.
        case half = 180
        /// Three quarters clockwise (a quarter turn counter-clockwise).
        case threeQuarters = 270
    }

    /// A mirroring of the output (``ImageProcessing/flip``), after ``ImageProcessing/rotation``.
    public enum Flip: String, Sendable, Hashable, Codable, CaseIterable {
        /// Left to right.
        case horizontal = "h"
        /// Top to bottom.
        case vertical = "v"
        /// Both (the same pixels as a half turn).
        case both = "hv"
    }

    /// The orientation that, applied to the output before ``rotation`` and ``flip``, gives it after them:
    /// ``ImageOrientation/up`` when neither is set. Found among the eight orientations as the one whose
    /// pixel mapping (``ImageOrientation/storedPoint(x:y:stored:)``) is the turn followed by the mirror on
    /// an asymmetric 3×2 image, so no table of the dihedral group's products is written by hand.
    public var outputOrientation: ImageOrientation {
        guard rotation != .none || flip != nil else { return .up }
        let stored = PixelSize(width: 3, height: 2)
        let turned = rotation == .quarter || rotation == .threeQuarters ? stored.transposed : stored
        /// The stored pixel that the final pixel (x, y) comes from.
        func source(_ x: Int, _ y: Int) -> (x: Int, y: Int) {
            var (x, y) = (x, y)
            switch flip {
            case .horizontal?: x = turned.width - 1 - x
            case .vertical?: y = turned.height - 1 - y
            case .both?: (x, y) = (turned.width - 1 - x, turned.height - 1 - y)
            case nil: break
            }
            switch rotation {   // a clockwise turn: the final (x, y) comes from the stored (y, h-1-x), and so on
            case .none: return (x, y)
            case .quarter: return (y, stored.height - 1 - x)
            case .half: return (stored.width - 1 - x, stored.height - 1 - y)
            case .threeQuarters: return (stored.width - 1 - y, x)
            }
        }
        let display = turned
        return ImageOrientation.allCases.first { orientation in
            orientation.displaySize(of: stored) == display && (0..<display.height).allSatisfy { y in
                (0..<display.width).allSatisfy { x in orientation.storedPoint(x: x, y: y, stored: stored) == source(x, y) }
            }
        } ?? .up
    }
}

extension Bitmap {
    /// These pixels turned and mirrored by `orientation` (``ImageOrientation/storedPoint(x:y:stored:)``
    /// for each pixel of the result): an exact copy of every pixel, in a new bitmap of the same style whose
    /// size swaps width and height when the orientation does; this bitmap itself for ``ImageOrientation/up``.
    public func oriented(_ orientation: ImageOrientation) -> Bitmap {
        guard orientation != .up else { return self }
        let stored = PixelSize(width: layout.width, height: layout.height)
        let size = orientation.displaySize(of: stored)
        let bytesPerPixel = layout.style.bytesPerPixel
        let sourceRow = layout.bytesPerRow
        var result = withUnsafeBytes { source in
            Bitmap(width: size.width, height: size.height, style: layout.style) { view in
                let target = view.baseAddress, targetRow = view.layout.bytesPerRow
                for y in 0..<size.height {
                    for x in 0..<size.width {
                        let from = orientation.storedPoint(x: x, y: y, stored: stored)
                        (target + y * targetRow + x * bytesPerPixel)
                            .copyMemory(from: source.baseAddress! + from.y * sourceRow + from.x * bytesPerPixel, byteCount: bytesPerPixel)
                    }
                }
            }
        }
        result.integrity = integrity
        return result
    }
}
