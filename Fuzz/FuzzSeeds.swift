import Foundation

/// Seeds the binary generates itself (`TESSERA_FUZZ_SEEDS=DIR`): small images from Tessera's own
/// encoders, hand-built GIF and WebP-shaped inputs, and table files written by ``ImageTable``.
/// `scripts/fuzz` adds Tests/Fixtures and, at run time, files from ../shared/corpus.
enum FuzzSeeds {
    /// Writes the seeds for `target` into `directory` and returns how many.
    static func write(for target: FuzzTarget, into directory: URL) -> Int {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var seeds: [[UInt8]]
        switch target {
        case .jpeg:
            seeds = images().compactMap { try? JPEGEncoder(quality: 80).encode($0) }
            seeds += seeds.prefix(2).compactMap { ColourFuzzing.taggedJPEG($0) }   // APP2 ICC chunks
        case .png: seeds = images().compactMap { try? PNGEncoder().encode($0) }
        case .gif: seeds = [gif(width: 5, height: 4, interlaced: false), gif(width: 9, height: 17, interlaced: true)]
        case .webp: seeds = []   // libwebp's encoder is not linked; Tests/Fixtures has WebP files
        case .heic: seeds = []   // no HEVC encoder in the library; Tests/Fixtures has HEIC files
        case .avif: seeds = images().filter { $0.width * $0.height < 300 }.compactMap { try? AVIFEncoder(speed: 9).encode($0) }
        case .table: seeds = tables()
        case .diskcache: seeds = diskCacheFiles()
        case .freshness: seeds = FuzzSeeds.responseHeaders.map { Array($0.utf8) }
        case .icc: seeds = ColourFuzzing.seeds()
        }
        for (i, seed) in seeds.enumerated() {
            _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("generated-\(i)").path, contents: Data(seed))
        }
        return seeds.count
    }

    /// A few small gradients in every style, odd sizes included.
    static func images() -> [Bitmap] {
        let sizes = [(1, 1), (7, 5), (16, 16), (33, 9)]
        return sizes.flatMap { (w, h) in
            PixelStyle.allCases.map { style in
                Bitmap(width: w, height: h, style: style) { view in
                    for i in 0..<view.layout.byteCount {
                        view.baseAddress.storeBytes(of: UInt8(truncatingIfNeeded: i &* 13 &+ w), toByteOffset: i, as: UInt8.self)
                    }
                }
            }
        }
    }

    /// A GIF89a with a 4-colour global palette, a transparency extension and one frame whose LZW
    /// data is all-literal (a clear code before every 2 pixels keeps the code size at 3 bits).
    static func gif(width: Int, height: Int, interlaced: Bool) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        var out = Array("GIF89a".utf8) + le16(width) + le16(height) + [0xF1, 0, 0]
        out += [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]
        out += [0x21, 0xF9, 4, 1, 0, 0, 2, 0]
        out += [0x2C] + le16(0) + le16(0) + le16(width) + le16(height) + [interlaced ? 0x40 : 0]
        // Codes of 3 bits: 4 = clear, 5 = end; emit clear, pixel, pixel, ... with a clear every 2 pixels.
        var codes: [Int] = []
        for i in 0..<(width * height) {
            if i % 2 == 0 { codes.append(4) }
            codes.append(i % 4)
        }
        codes.append(5)
        var bits: [UInt8] = [], acc = 0, n = 0
        for code in codes {
            acc |= code << n; n += 3
            while n >= 8 { bits.append(UInt8(acc & 0xFF)); acc >>= 8; n -= 8 }
        }
        if n > 0 { bits.append(UInt8(acc & 0xFF)) }
        out.append(2)   // minimum code size
        var rest = bits[...]
        while !rest.isEmpty {
            let block = rest.prefix(255)
            out.append(UInt8(block.count))
            out += block
            rest = rest.dropFirst(block.count)
        }
        out += [0, 0x3B]
        return out
    }

    /// Table files written by ``ImageTable`` (control byte 0: used as they are), and compact
    /// variants (control byte 1: header page supplied by the harness, slots 0 and 1 kept).
    static func tables() -> [[UInt8]] {
        let format = TableFuzzing.format
        let dir = TableFuzzing.directory.appendingPathComponent("seeds", isDirectory: true)
        try? FileManager.default.removeItem(at: dir)
        var seeds: [[UInt8]] = []
        for entries in [0, 1, 3, 16] {
            do {
                let table = try ImageTable(format: format, directory: dir)
                for k in 0..<entries {
                    let id = UUID(uuid: (0xAB, UInt8(k), 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, UInt8(entries)))
                    try table.store(entityID: id, sourceID: id) { view in
                        view.bytes.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: k &* 31 &+ 5))
                    }
                }
                if entries == 3 { table.delete(entityID: UUID(uuid: (0xAB, 1, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 3))) }
            } catch {
                continue
            }
            guard let file = FileManager.default.contents(atPath: dir.appendingPathComponent(format.fileName).path) else { continue }
            let bytes = Array(file)
            seeds.append([0] + bytes)
            let compact = bytes.dropFirst(ImageFormat.pageSize).prefix(format.headerBytes - ImageFormat.pageSize + 2 * format.bytesPerEntry)
            seeds.append([1] + compact)
            seeds.append([15] + compact)
            try? FileManager.default.removeItem(at: dir)
        }
        return seeds
    }

    /// Cached files as the disk cache writes them, and the same JSON for the wrapping mode (bit 0).
    static func diskCacheFiles() -> [[UInt8]] {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let infos = [
            HTTPCacheInfo(url: DiskCacheFuzzing.probeURL.absoluteString, storedAt: date, expiresAt: date.addingTimeInterval(60)),
            HTTPCacheInfo(url: DiskCacheFuzzing.probeURL.absoluteString, etag: "\"abc\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT",
                          storedAt: date.addingTimeInterval(-100_000), expiresAt: date),
        ]
        var seeds: [[UInt8]] = []
        for (i, info) in infos.enumerated() {
            guard let file = try? DiskCacheFile.encode(Data(repeating: UInt8(i), count: 40 * i + 3), info: info) else { continue }
            for control: UInt8 in [0, 2, 4 | 8, 16] { seeds.append([control] + Array(file)) }
            let json = Array(file.dropFirst(8).prefix(file.count - 8 - (40 * i + 3)))
            seeds.append([1] + json + [0, 9, 9, 9])
            seeds.append([1 | 2 | 8] + json + [0] + [UInt8](repeating: 0xFF, count: 16))
        }
        return seeds
    }

    /// Response headers as servers send them (for the freshness harness).
    static let responseHeaders = [
        "Cache-Control: public, max-age=3600\nAge: 100\nETag: \"v1\"",
        "Cache-Control: no-cache\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT",
        "Cache-Control: no-store",
        "Expires: Thu, 01 Dec 2094 16:00:00 GMT\nDate: Sun, 06 Nov 1994 08:49:37 GMT",
        "Expires: 0",
        "Cache-Control: max-age=\"60\", must-revalidate\nAge: 30",
        "Cache-Control: max-age=9223372036854775807\nAge: 1",
    ]
}
