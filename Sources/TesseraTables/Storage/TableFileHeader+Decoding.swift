import TesseraImaging
import Foundation

extension TableFileHeader {
    /// The format a header page describes, or `nil` when the page is not a valid header (bad magic,
    /// version, checksum or values). The family is not stored in a table file; it comes back empty.
    static func decode(_ page: [UInt8]) -> ImageFormat? {
        guard page.count == ImageFormat.pageSize, Array(page.prefix(8)) == magic else { return nil }
        return page.withUnsafeBytes { p -> ImageFormat? in
            let sum = PixelChecksum.hash(p.baseAddress!, count: ImageFormat.pageSize - 8)
            guard p.load(fromByteOffset: ImageFormat.pageSize - 8, as: UInt64.self) == sum,
                  p.load(fromByteOffset: 8, as: UInt32.self) == version else { return nil }
            let code = p.load(fromByteOffset: 16, as: UInt32.self)
            guard let style = PixelStyle.allCases.first(where: { styleCode($0) == code }) else { return nil }
            let width = Int(p.load(fromByteOffset: 20, as: UInt32.self))
            let height = Int(p.load(fromByteOffset: 24, as: UInt32.self))
            // Any 64-bit value can be on disk: convert without trapping.
            guard let maximumCount = Int(exactly: p.load(fromByteOffset: 40, as: UInt64.self)) else { return nil }
            let nameLength = Int(p.load(fromByteOffset: 64, as: UInt32.self))
            guard nameLength <= 200, width > 0, height > 0, maximumCount > 0 else { return nil }
            let name = String(decoding: page[68..<68 + nameLength], as: UTF8.self)
            let format = ImageFormat(name: name, style: style, size: PixelSize(width: width, height: height),
                                     maximumCount: maximumCount,
                                     storesThumbHash: p.load(fromByteOffset: thumbHashFlagOffset, as: UInt32.self) == 1)
            // Only a format a table can have (this also bounds the sizes `encode` multiplies, which
            // would overflow for arbitrary values), and the description must round-trip exactly,
            // or the file is not one we wrote.
            guard (try? format.validate()) != nil else { return nil }
            return matches(page, format) ? format : nil
        }
    }
}

extension ImageTable {
    /// The formats of the table files in `directory`, read from their headers (sorted by name), for
    /// tools that open tables without knowing their formats in advance. Files that are not valid
    /// tables, or whose header names another file, are skipped. Families are not stored in table files, so ``ImageFormat/family`` is empty.
    public static func existingFormats(in directory: URL) -> [ImageFormat] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var formats: [ImageFormat] = []
        for name in names.sorted() where name.hasSuffix(".tesseratable") {
            let path = directory.appendingPathComponent(name).path
            guard let handle = FileHandle(forReadingAtPath: path) else { continue }
            defer { try? handle.close() }
            guard let data = try? handle.read(upToCount: ImageFormat.pageSize),
                  let format = TableFileHeader.decode(Array(data)),
                  format.fileName == name else { continue }   // a header naming another file lies
            formats.append(format)
        }
        return formats
    }
}
