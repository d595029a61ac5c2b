/// How one pixel is laid out in memory: the four styles of Fast Image Cache.
///
/// All multi-byte styles are little-endian in memory, which is what cairo's native formats use on
/// x86-64 and arm64:
/// - ``bgra32``: 4 bytes per pixel, blue, green, red, alpha, **premultiplied** alpha (cairo `ARGB32`).
/// - ``bgr32``: 4 bytes per pixel, blue, green, red and an unused byte that Tessera sets to 255 (cairo `RGB24`).
/// - ``bgr565``: 2 bytes per pixel, one little-endian `UInt16` with red in the top 5 bits,
///   green in the middle 6, blue in the low 5 (cairo `RGB16_565`).
/// - ``gray8``: 1 byte per pixel, luminance.
public enum PixelStyle: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// 32-bit BGRA with premultiplied alpha.
    case bgra32
    /// 32-bit BGR, the fourth byte unused (opaque).
    case bgr32
    /// 16-bit 5-6-5 RGB packed in a little-endian `UInt16`.
    case bgr565
    /// 8-bit grayscale.
    case gray8

    /// Bytes one pixel occupies.
    public var bytesPerPixel: Int {
        switch self {
        case .bgra32, .bgr32: 4
        case .bgr565: 2
        case .gray8: 1
        }
    }

    /// Whether the style stores an alpha channel.
    public var hasAlpha: Bool { self == .bgra32 }

    /// The row alignment every Tessera bitmap uses, in bytes.
    ///
    /// The rule: a row is a multiple of 8 pixels × bytes per pixel (what Core Animation needs to
    /// use a bitmap without copying it, as Fast Image Cache explains) **and** a multiple of 64 bytes
    /// (one cache line, and the widest SIMD load). For 1, 2 and 4 bytes per pixel, 8 × bpp is 8, 16
    /// or 32, each of which divides 64, so both conditions reduce to rounding the row up to 64 bytes:
    /// `bytesPerRow = ⌈width × bpp / 64⌉ × 64`. A 100-pixel BGRA row (400 bytes) becomes 448 bytes.
    public static let rowAlignment = 64

    /// The aligned bytes per row for a row of `width` pixels; see ``rowAlignment``.
    public func bytesPerRow(forWidth width: Int) -> Int {
        let raw = width * bytesPerPixel
        return (raw + Self.rowAlignment - 1) / Self.rowAlignment * Self.rowAlignment
    }

    /// The short name used on the command line and in table descriptions.
    public var description: String { rawValue }
}
