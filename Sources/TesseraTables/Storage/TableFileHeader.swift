import TesseraImaging
/// The first page of a table file: what format the file was written for.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `"TSRTABL1"` |
/// | 8 | 4 | version (1) |
/// | 12 | 4 | page size (4096) |
/// | 16 | 4 | pixel style code (1 bgra32, 2 bgr32, 3 bgr565, 4 gray8) |
/// | 20 | 4 | width |
/// | 24 | 4 | height |
/// | 28 | 4 | bytes per row |
/// | 32 | 8 | bytes per entry |
/// | 40 | 8 | maximum count |
/// | 48 | 8 | slot header offset (4096) |
/// | 56 | 8 | pixel region offset (``ImageFormat/headerBytes``) |
/// | 64 | 4 | name length *n* (≤ 200) |
/// | 68 | *n* | name, UTF-8 |
/// | 272 | 4 | 1 when entries keep a ThumbHash after their pixels (``ImageFormat/storesThumbHash``), else 0 |
/// | 4088 | 8 | ``PixelChecksum`` of bytes 0..<4088 |
///
/// Any difference from the format being opened — including a bad checksum — discards the file.
enum TableFileHeader {
    static let magic: [UInt8] = Array("TSRTABL1".utf8)
    static let version: UInt32 = 1
    /// Where the ThumbHash flag sits: after the longest name (68 + 200), aligned. Tables written before the
    /// flag existed have zero there, as formats without hashes still write.
    static let thumbHashFlagOffset = 272

    static func styleCode(_ style: PixelStyle) -> UInt32 {
        switch style {
        case .bgra32: 1
        case .bgr32: 2
        case .bgr565: 3
        case .gray8: 4
        }
    }

    /// The header page for `format`.
    static func encode(_ format: ImageFormat) -> [UInt8] {
        var page = [UInt8](repeating: 0, count: ImageFormat.pageSize)
        page.withUnsafeMutableBytes { p in
            for (i, b) in magic.enumerated() { p[i] = b }
            p.storeBytes(of: version, toByteOffset: 8, as: UInt32.self)
            p.storeBytes(of: UInt32(ImageFormat.pageSize), toByteOffset: 12, as: UInt32.self)
            p.storeBytes(of: styleCode(format.style), toByteOffset: 16, as: UInt32.self)
            p.storeBytes(of: UInt32(format.size.width), toByteOffset: 20, as: UInt32.self)
            p.storeBytes(of: UInt32(format.size.height), toByteOffset: 24, as: UInt32.self)
            p.storeBytes(of: UInt32(format.bytesPerRow), toByteOffset: 28, as: UInt32.self)
            p.storeBytes(of: UInt64(format.bytesPerEntry), toByteOffset: 32, as: UInt64.self)
            p.storeBytes(of: UInt64(format.maximumCount), toByteOffset: 40, as: UInt64.self)
            p.storeBytes(of: UInt64(ImageFormat.pageSize), toByteOffset: 48, as: UInt64.self)
            p.storeBytes(of: UInt64(format.headerBytes), toByteOffset: 56, as: UInt64.self)
            let name = Array(format.name.utf8.prefix(200))
            p.storeBytes(of: UInt32(name.count), toByteOffset: 64, as: UInt32.self)
            for (i, b) in name.enumerated() { p[68 + i] = b }
            p.storeBytes(of: UInt32(format.storesThumbHash ? 1 : 0), toByteOffset: thumbHashFlagOffset, as: UInt32.self)
            let sum = PixelChecksum.hash(p.baseAddress!, count: ImageFormat.pageSize - 8)
            p.storeBytes(of: sum, toByteOffset: ImageFormat.pageSize - 8, as: UInt64.self)
        }
        return page
    }

    /// Whether `page` is exactly the header `format` would write (which also checks the checksum).
    static func matches(_ page: [UInt8], _ format: ImageFormat) -> Bool {
        page == encode(format)
    }
}
