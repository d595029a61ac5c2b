/// A four-byte-per-pixel layout for handing pixels to code outside Tessera (a GUI toolkit, a texture
/// upload, an encoder that wants RGBA).
public struct ExportedPixelFormat: Sendable, Hashable {
    /// Byte order within a pixel.
    public enum Order: Sendable, Hashable {
        /// Red, green, blue, alpha (most toolkits and GPU uploads).
        case rgba
        /// Blue, green, red, alpha (Tessera's own `bgra32` order, cairo's on little-endian machines).
        case bgra
    }

    /// Byte order within a pixel.
    public var order: Order
    /// Whether colour is premultiplied by alpha (cairo, Core Graphics) or straight (PNG, most toolkits).
    public var premultiplied: Bool

    /// A format.
    public init(order: Order, premultiplied: Bool) {
        self.order = order
        self.premultiplied = premultiplied
    }

    /// RGBA with straight alpha: what most image toolkits take.
    public static let rgbaStraight = ExportedPixelFormat(order: .rgba, premultiplied: false)
    /// RGBA premultiplied.
    public static let rgbaPremultiplied = ExportedPixelFormat(order: .rgba, premultiplied: true)
    /// BGRA premultiplied (Tessera's `bgra32`).
    public static let bgraPremultiplied = ExportedPixelFormat(order: .bgra, premultiplied: true)
}

extension BitmapImage {
    /// The pixels copied into owned memory in `format`, rows packed without padding (`width × 4` bytes
    /// per row, top row first). Works for every pixel style (opaque styles get alpha 255).
    ///
    /// Use it when pixels must outlive the image or go to code that wants another layout. To read
    /// without copying, use `withUnsafeBytes` (valid during the call) or, for a `TableImage`,
    /// `baseAddress` (valid while the `TableImage` lives).
    public func copyPixels(as format: ExportedPixelFormat) -> [UInt8] {
        let rowBytes = width * 4
        var out = [UInt8](repeating: 0, count: rowBytes * height)
        withUnsafeBytes { source in
            out.withUnsafeMutableBytes { target in
                for y in 0..<height {
                    let src = source.baseAddress! + y * bytesPerRow
                    let dst = target.baseAddress! + y * rowBytes
                    PixelConversion.toBGRA(src, style: style, to: dst, width: width)
                    let row = dst.assumingMemoryBound(to: UInt8.self)
                    if !format.premultiplied { PixelConversion.unpremultiplyRow(row, to: row, width: width) }
                    if format.order == .rgba {
                        for o in stride(from: 0, to: rowBytes, by: 4) { (row[o], row[o + 2]) = (row[o + 2], row[o]) }
                    }
                }
            }
        }
        return out
    }
}
