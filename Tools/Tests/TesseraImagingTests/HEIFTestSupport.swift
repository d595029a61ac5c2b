import Foundation
import Testing
@_spi(Internal) import TesseraImaging
import Tessera
import TesseraTestSupport

/// HEIC and AVIF files made at test time with Debian's `heif-enc` (libheif-examples: x265 and
/// libaom), byte patches of their boxes, and PSNR.
enum HEIFTestSupport {
    /// A fresh scratch directory, removed by the caller.
    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-heif-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `heif-enc arguments…` and returns the output file's bytes (`-o` is added).
    static func heifEnc(_ arguments: [String], output: URL) throws -> [UInt8] {
        let run = try ProgramRun.run(URL(fileURLWithPath: "/usr/bin/heif-enc"), arguments + ["-o", output.path])
        try #require(run.status == 0, "heif-enc (scripts/setup installs libheif-examples): \(run)")
        return Array(try Data(contentsOf: output))
    }

    /// Writes `bitmap` as a PNG in `directory` and encodes it with `heif-enc` (`-A` for AVIF, plus
    /// `extra` options such as `-t 64` for a thumbnail item).
    static func encode(_ bitmap: Bitmap, as format: ImageFileFormat, quality: Int = 90, extra: [String] = [],
                       in directory: URL, name: String = "image") throws -> [UInt8] {
        let png = directory.appendingPathComponent("\(name).png")
        try Data(try PNGEncoder().encode(bitmap)).write(to: png)
        let output = directory.appendingPathComponent("\(name).\(format.fileExtension)")
        let flags = (format == .avif ? ["-A", "-p", "speed=9"] : []) + ["-q", "\(quality)"]
        return try heifEnc(flags + extra + [png.path], output: output)
    }

    /// Offsets of every box of type `type` (the offset of its size field), found by scanning for the
    /// four letters; good enough for the small files made here.
    static func boxes(_ type: String, in bytes: [UInt8]) -> [Int] {
        let tag = Array(type.utf8)
        return (4..<max(4, bytes.count - 4)).filter { Array(bytes[$0..<$0 + 4]) == tag }.map { $0 - 4 }
    }

    /// The width and height an `ispe` box at `offset` declares (after size, type, version and flags).
    static func ispe(at offset: Int, in bytes: [UInt8]) -> PixelSize {
        PixelSize(width: Int(be32(bytes, offset + 12)), height: Int(be32(bytes, offset + 16)))
    }

    /// Sets the `ispe` box at `offset` to `size`.
    static func setISPE(at offset: Int, to size: PixelSize, in bytes: inout [UInt8]) {
        for (k, value) in [size.width, size.height].enumerated() {
            for i in 0..<4 { bytes[offset + 12 + k * 4 + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * i)) }
        }
    }

    static func be32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    /// A MATE wallpaper (Debian's mate-backgrounds, installed by scripts/setup) decoded to fit
    /// `width` pixels wide: the photograph the HEIC/AVIF tests encode.
    static func photo(width: Int = 480) throws -> Bitmap {
        let path = "/usr/share/backgrounds/mate/nature/Garden.jpg"
        let data = try #require(FileManager.default.contents(atPath: path), "\(path) (scripts/setup installs mate-backgrounds)")
        let info = try ImageDecoder().probe(data)
        let size = PixelSize(width: width, height: width * info.displaySize.height / info.displaySize.width)
        return try ImageDecoder().thumbnail(data, size: size, mode: .stretch, style: .bgr32)   // opaque: a PNG without alpha
    }
}
