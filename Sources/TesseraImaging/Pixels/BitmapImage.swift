/// Read access to the pixels of a decoded image, wherever they live: an owned ``Bitmap`` or a
/// slot of a memory-mapped image table.
public protocol BitmapImage: Sendable {
    /// Size, style and row stride of the pixels.
    var layout: BitmapLayout { get }

    /// Calls `body` with the pixel bytes (`layout.byteCount` of them; the padding at the end of each
    /// row is included). The pointer is valid only during the call.
    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R
}

extension BitmapImage {
    /// Width in pixels.
    public var width: Int { layout.width }
    /// Height in pixels.
    public var height: Int { layout.height }
    /// Pixel style.
    public var style: PixelStyle { layout.style }
    /// Bytes per row.
    public var bytesPerRow: Int { layout.bytesPerRow }

    /// The bytes of pixel (`x`, `y`), `style.bytesPerPixel` of them, for tests and tools in this package.
    @_spi(Internal) public func pixel(x: Int, y: Int) -> [UInt8] {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(layout)")
        return withUnsafeBytes { bytes in
            let start = y * bytesPerRow + x * style.bytesPerPixel
            return Array(bytes[start..<start + style.bytesPerPixel])
        }
    }

    /// Whether two images have the same size and style and the same visible pixels (row padding ignored).
    public func hasSamePixels(as other: some BitmapImage) -> Bool {
        guard width == other.width, height == other.height, style == other.style else { return false }
        let rowBytes = width * style.bytesPerPixel
        return withUnsafeBytes { a in
            other.withUnsafeBytes { b in
                for y in 0..<height {
                    let ra = UnsafeRawBufferPointer(rebasing: a[y * bytesPerRow..<y * bytesPerRow + rowBytes])
                    let rb = UnsafeRawBufferPointer(rebasing: b[y * other.bytesPerRow..<y * other.bytesPerRow + rowBytes])
                    if memcmp(ra.baseAddress!, rb.baseAddress!, rowBytes) != 0 { return false }
                }
                return true
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
