import CPNG
import CTesseraCodecs
import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import TesseraTestSupport

/// PNG's cheap scaled decode: the fast path gives libpng's pixels, the box reduction gives block
/// means, and a thumbnail made through it looks like one made from the full-size decode.
@Suite("PNG fast path and box reduction")
struct CodecPNGReductionTests {
    typealias S = CodecTestSupport

    /// Premultiplied BGRA of `file` through libpng's simplified API alone (the reference).
    static func libpngPremultiplied(_ file: [UInt8]) throws -> (width: Int, height: Int, pixels: [UInt8]) {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        defer { png_image_free(&image) }
        let begun = file.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        #expect(begun != 0)
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_BGR | PNG_FORMAT_FLAG_ALPHA)
        image.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        let w = Int(image.width), h = Int(image.height)
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        let finished = pixels.withUnsafeMutableBytes { png_image_finish_read(&image, nil, $0.baseAddress, Int32(w * 4), nil) }
        #expect(finished != 0)
        pixels.withUnsafeMutableBufferPointer { p in
            for i in 0..<(w * h) { PixelConversion.premultiplyRow(p.baseAddress! + i * 4, width: 1) }
        }
        return (w, h, pixels)
    }

    /// A photo-like RGBA image: smooth gradients, fine detail and varying alpha.
    static func photoLike(width: Int, height: Int, alpha: Bool) throws -> Bitmap {
        var generator = SeededGenerator(seed: 12)
        let noise = (0..<(width * height)).map { _ in Int(generator.next() % 24) }
        return try S.bitmap(width: width, height: height, style: .bgra32) { x, y in
            let a = alpha ? 96 + (x * 159) / max(1, width - 1) : 255
            let b = (x * 255 / width + noise[y * width + x]) % 256
            let g = (y * 255 / height + ((x / 3 + y / 3) % 2) * 40) % 256
            let r = ((x + y) * 255 / (width + height) + noise[(y * width + x + 7) % noise.count] / 2) % 256
            return [b, g, r].map { UInt8($0 * a / 255) } + [UInt8(a)]
        }
    }

    /// A 16-bit PNG (no filtering, one IDAT) with varied samples and, for alpha types, every kind of alpha.
    static func sixteenBit(width: Int, height: Int, colorType: UInt8, channels: Int) -> [UInt8] {
        var raw: [UInt8] = []
        for y in 0..<height {
            raw.append(0)
            for x in 0..<width {
                for c in 0..<channels {
                    var v = (x * 677 + y * 331 + c * 9000 + (x * y * 13) % 3001) % 65536
                    if (colorType == 4 || colorType == 6) && c == channels - 1 { v = y % 3 == 0 ? (x % 2 == 0 ? 65535 : 0) : x * 65535 / (width - 1) }
                    raw += [UInt8(v >> 8), UInt8(v & 255)]
                }
            }
        }
        return storedPNG(width: width, height: height, depth: 16, colorType: colorType, raw: raw)
    }

    /// An 8-bit PNG whose row y is written with PNG filter `filters[y % filters.count]` (0 None, 1 Sub, 2 Up,
    /// 3 Average, 4 Paeth), with varied samples and, for alpha types, opaque, clear and partial alpha.
    static func filtered(width: Int, height: Int, colorType: UInt8, channels: Int, filters: [UInt8]) -> [UInt8] {
        let stride = width * channels
        var image = [UInt8](repeating: 0, count: stride * height)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<channels {
                    var v = (x * 37 + y * 91 + c * 53 + (x * y) % 17 * 11 + (x % 5 == 0 ? 128 : 0)) % 256
                    if (colorType == 4 || colorType == 6) && c == channels - 1 { v = [255, 0, x * 255 / max(1, width - 1)][y % 3] }
                    image[y * stride + x * channels + c] = UInt8(v)
                }
            }
        }
        var raw: [UInt8] = []
        for y in 0..<height {
            let filter = filters[y % filters.count]
            raw.append(filter)
            for i in 0..<stride {
                let x = Int(image[y * stride + i])
                let a = i >= channels ? Int(image[y * stride + i - channels]) : 0
                let b = y > 0 ? Int(image[(y - 1) * stride + i]) : 0
                let c = y > 0 && i >= channels ? Int(image[(y - 1) * stride + i - channels]) : 0
                let predictor: Int
                switch filter {
                case 1: predictor = a
                case 2: predictor = b
                case 3: predictor = (a + b) / 2
                case 4:
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                default: predictor = 0
                }
                raw.append(UInt8((x - predictor) & 255))
            }
        }
        return storedPNG(width: width, height: height, depth: 8, colorType: colorType, raw: raw)
    }

    /// A PNG of `raw` (filter bytes and samples) in one IDAT chunk holding a stored (uncompressed) zlib stream.
    static func storedPNG(width: Int, height: Int, depth: UInt8, colorType: UInt8, raw: [UInt8]) -> [UInt8] {
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 255), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
            let typed = Array(type.utf8) + body
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in typed {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            return be32(body.count) + typed + be32(Int(~crc))
        }
        // Blocks of at most 65535 bytes, then Adler-32.
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65535, raw.count - offset)
            zlib += [offset + n == raw.count ? 1 : 0, UInt8(n & 255), UInt8(n >> 8), UInt8(~n & 255), UInt8(~n >> 8 & 255)]
            zlib += raw[offset..<offset + n]
            offset += n
        } while offset < raw.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        zlib += be32(Int(b << 16 | a))
        let header = be32(width) + be32(height) + [depth, colorType, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    /// The fast path's decode of `file` reduced by `factor`, or nil when it declined.
    static func fastPath(_ file: [UInt8], factor: Int, width: Int, height: Int) -> [UInt8]? {
        let w = (width + factor - 1) / factor, h = (height + factor - 1) / factor
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        let status = file.withUnsafeBytes { raw in
            tessera_png_decode_reduced(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count, Int32(factor), &pixels,
                                       w * 4, Int32(w), Int32(h))
        }
        return Int(status) == TESSERA_PNG_OK ? pixels : nil
    }

    /// `reference` (premultiplied BGRA, `width` wide) reduced by `factor`: the rounded mean of each block.
    static func blockMeans(_ reference: [UInt8], width: Int, height: Int, factor: Int) -> [UInt8] {
        let w = (width + factor - 1) / factor, h = (height + factor - 1) / factor
        var out = [UInt8](repeating: 0, count: w * h * 4)
        for oy in 0..<h {
            for ox in 0..<w {
                var sums = [0, 0, 0, 0], count = 0
                for y in (oy * factor)..<min(height, (oy + 1) * factor) {
                    for x in (ox * factor)..<min(width, (ox + 1) * factor) {
                        for c in 0..<4 { sums[c] += Int(reference[(y * width + x) * 4 + c]) }
                        count += 1
                    }
                }
                for c in 0..<4 { out[(oy * w + ox) * 4 + c] = UInt8((sums[c] + count / 2) / count) }
            }
        }
        return out
    }

    @Test("Every filter type on 1-, 2-, 3- and 4-byte pixels, rows shorter and longer than 16 bytes: libpng's pixels, and exact block means on both sides of a 257-row block",
          arguments: [(UInt8(0), 1), (4, 2), (2, 3), (6, 4)])
    func everyFilter(colorType: UInt8, channels: Int) throws {
        for (width, height) in [(5, 11), (37, 29), (70, 23)] {
            for filters: [UInt8] in [[0, 1, 2, 3, 4], [4], [3], [1], [2, 4, 3, 1]] {
                let file = Self.filtered(width: width, height: height, colorType: colorType, channels: channels, filters: filters)
                let reference = try Self.libpngPremultiplied(file)
                let name = "colour type \(colorType), \(width)x\(height), filters \(filters)"
                #expect(Self.fastPath(file, factor: 1, width: width, height: height) == reference.pixels, "\(name)")
                for factor in [2, 3, 7] {
                    #expect(Self.fastPath(file, factor: factor, width: width, height: height)
                            == Self.blockMeans(reference.pixels, width: width, height: height, factor: factor), "\(name), factor \(factor)")
                }
            }
        }
        // Blocks of 257 rows sum down the columns in 16 bits; 258 and more sum each row across at once.
        for (width, height) in [(600, 300), (520, 260)] {
            let file = Self.filtered(width: width, height: height, colorType: colorType, channels: channels, filters: [0, 1, 2, 3, 4])
            let reference = try Self.libpngPremultiplied(file)
            for factor in [257, 258, 300] {
                #expect(Self.fastPath(file, factor: factor, width: width, height: height)
                        == Self.blockMeans(reference.pixels, width: width, height: height, factor: factor), "\(width)x\(height), factor \(factor)")
            }
        }
    }

    @Test("Fast path pixels equal libpng's (premultiplied) for every colour type it takes, 8 and 16 bits")
    func fastPathMatchesLibpng() throws {
        var files: [(String, [UInt8])] = [("gray.png", try S.fixture("gray.png")), ("trns.png", try S.fixture("trns.png"))]
        let image = try Self.photoLike(width: 67, height: 45, alpha: true)
        files.append(("rgba", try PNGEncoder().encode(image)))
        files.append(("rgb", try PNGEncoder().encode(try Self.photoLike(width: 67, height: 45, alpha: false))))
        files.append(("gray16.png", try S.fixture("gray16.png")))
        for (colorType, channels) in [(UInt8(2), 3), (6, 4), (4, 2)] {
            files.append(("16-bit colour type \(colorType)", Self.sixteenBit(width: 37, height: 23, colorType: colorType, channels: channels)))
        }
        for (name, file) in files {
            let reference = try Self.libpngPremultiplied(file)
            let fast = [UInt8](unsafeUninitializedCapacity: reference.width * reference.height * 4) { buffer, count in
                let status = file.withUnsafeBytes { raw in
                    tessera_png_decode_reduced(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count, 1, buffer.baseAddress!,
                                               reference.width * 4, Int32(reference.width), Int32(reference.height))
                }
                #expect(Int(status) == TESSERA_PNG_OK, "\(name): the fast path should take this file")
                count = Int(status) == TESSERA_PNG_OK ? buffer.count : 0
                if count == 0 { count = buffer.count; buffer.initialize(repeating: 0) }
            }
            #expect(fast == reference.pixels, "\(name)")
            // And the decoder (whichever path) gives the same at full size.
            let (_, bitmap) = try S.decode(file, with: PNGDecoder())
            var same = true
            for y in 0..<reference.height { for x in 0..<reference.width where bitmap.pixel(x: x, y: y) != Array(reference.pixels[(y * reference.width + x) * 4..<(y * reference.width + x) * 4 + 4]) { same = false } }
            #expect(same, "\(name)")
        }
    }

    @Test("Reduced decodes are block means of the full decode, on the fast path and through libpng",
          arguments: ["generated", "generated16", "interlaced.png", "gray16.png", "palette.png", "trns.png"])
    func reductionIsBoxMean(name: String) throws {
        let file = switch name {
        case "generated": try PNGEncoder().encode(try Self.photoLike(width: 103, height: 61, alpha: true))
        case "generated16": Self.sixteenBit(width: 103, height: 61, colorType: 6, channels: 4)
        default: try S.fixture(name)
        }
        let reference = try Self.libpngPremultiplied(file)
        let decoder = PNGDecoder()
        for target in [PixelSize(width: 5, height: 5), PixelSize(width: 8, height: 4), PixelSize(width: 3, height: 2)] {
            let (info, bitmap) = try S.decode(file, with: decoder, atLeast: target)
            let factor = try #require(PNGDecoder.factor(reducing: info.storedSize, to: bitmap.layout.size))
            #expect(bitmap.layout.size == PNGDecoder.reduced(info.storedSize, by: factor))
            #expect(factor >= max(1, min(info.width / (2 * target.width), info.height / (2 * target.height))))
            #expect(bitmap.width >= min(info.width, 2 * target.width) && bitmap.height >= min(info.height, 2 * target.height))
            #expect(bitmap.width >= target.width && bitmap.height >= target.height)
            var worst = 0
            for oy in 0..<bitmap.height {
                for ox in 0..<bitmap.width {
                    var sums = [0, 0, 0, 0], count = 0
                    for y in (oy * factor)..<min(reference.height, (oy + 1) * factor) {
                        for x in (ox * factor)..<min(reference.width, (ox + 1) * factor) {
                            for c in 0..<4 { sums[c] += Int(reference.pixels[(y * reference.width + x) * 4 + c]) }
                            count += 1
                        }
                    }
                    let pixel = bitmap.pixel(x: ox, y: oy)
                    for c in 0..<4 { worst = max(worst, abs(Int(pixel[c]) - (sums[c] + count / 2) / count)) }
                }
            }
            #expect(worst == 0, "\(name) \(target): worst channel difference \(worst)")
        }
    }

    @Test("Thumbnails through the box reduction look like those from the full-size decode (PSNR)")
    func thumbnailPSNR() throws {
        let file = try PNGEncoder().encode(try Self.photoLike(width: 900, height: 610, alpha: false))
        let target = PixelSize(width: 100, height: 100)
        // The previous path: decode at full size, then cairo's box filter into the thumbnail.
        let full = try S.decode(file, with: PNGDecoder()).bitmap
        #expect(full.layout.size == PixelSize(width: 900, height: 610))
        let previous = try Bitmap(width: 100, height: 100, style: .bgra32) { (view: MutableBitmapView) throws(TesseraError) in
            view.prepareForDrawing()
            let context = try DrawingContext(target: view)
            try context.draw(full, in: context.bounds, mode: .fill)
            context.flush()
        }
        let current = try ImageDecoder().thumbnail(Data(file), size: target, mode: .fill)
        var squared = 0.0
        for y in 0..<100 { for x in 0..<100 { for (p, q) in zip(previous.pixel(x: x, y: y), current.pixel(x: x, y: y)) { squared += pow(Double(Int(p) - Int(q)), 2) } } }
        let mse = squared / Double(100 * 100 * 4)
        let psnr = mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
        #expect(psnr >= 35, "PSNR \(psnr) dB")
    }

    @Test("The fast path declines damaged files, so libpng reports them as before")
    func damagedFallsBack() throws {
        var file = try PNGEncoder().encode(try Self.photoLike(width: 40, height: 30, alpha: true))
        // Flip a byte inside the first IDAT payload: its CRC no longer matches.
        let idat = try #require((0..<(file.count - 4)).first { file[$0..<$0 + 4].elementsEqual(Array("IDAT".utf8)) })
        file[idat + 10] ^= 0x55
        let status = file.withUnsafeBytes { raw in
            var out = [UInt8](repeating: 0, count: 40 * 30 * 4)
            return tessera_png_decode_reduced(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count, 1, &out, 160, 40, 30)
        }
        #expect(Int(status) == TESSERA_PNG_UNSUPPORTED)
        let reason = S.failure { _ = try S.decode(file, with: PNGDecoder()) }
        #expect(reason != nil)
    }
}
