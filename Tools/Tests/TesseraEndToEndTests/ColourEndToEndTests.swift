import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// `tessera thumbnail` (release build) on Display P3 JPEGs: the thumbnails it writes are in sRGB.
@Suite("release tessera thumbnail converts embedded colour profiles",
       .enabled(if: ReleaseCLI.isAvailable, "set TESSERA_RELEASE_BINARY (make test builds the release CLI and sets it)"))
struct ColourEndToEndTests {
    /// A flat Display P3 (200, 100, 50) JPEG (profile in three APP2 chunks) becomes a thumbnail whose
    /// pixels are the sRGB value the two spaces' definitions give, (214.9, 92.6, 31.0), within
    /// 3 levels; and a real photograph tagged Display P3 gives the library's thumbnail of the same
    /// tagged file, visibly unlike the untagged photograph's.
    @Test("thumbnail of a Display P3 JPEG writes sRGB pixels")
    func displayP3Thumbnail() async throws {
        let scratch = try ScratchDirectory("colour")
        let p3 = try ICCProfiles.displayP3()
        let flat = Bitmap(width: 240, height: 160, style: .bgra32) { view in
            for y in 0..<160 {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<240 { row[x * 4] = 50; row[x * 4 + 1] = 100; row[x * 4 + 2] = 200; row[x * 4 + 3] = 255 }
            }
        }
        let flatFile = scratch.path("flat-p3.jpg")
        try Data(ICCProfiles.jpeg(try JPEGEncoder(quality: 100).encode(flat), embedding: p3, chunks: 3)).write(to: URL(fileURLWithPath: flatFile))

        let photo = try #require(try RealPhotos.smallest(1, ext: "jpg").first)
        let taggedPhoto = URL(fileURLWithPath: scratch.path("photo-p3.jpg"))
        try Data(ICCProfiles.jpeg(Array(try Data(contentsOf: photo)), embedding: p3)).write(to: taggedPhoto)

        let size = PixelSize(width: 60, height: 40)
        let out = scratch.path("out")
        let run = try await ReleaseCLI.run(["thumbnail", flatFile, taggedPhoto.path, "--size", size.description, "--mode", "fill", "--out", out])
        #expect(run.status == 0, "\(run)")

        let thumb = try PixelComparison.decodeFile(out + "/flat-p3.png")
        let expected = ICCProfiles.sRGB(fromDisplayP3: [200, 100, 50])
        for (x, y) in [(5, 5), (30, 20), (55, 35)] {
            let rgb = thumb.withUnsafeBytes { bytes in   // BGRA
                let o = y * thumb.bytesPerRow + x * 4
                return [Double(bytes[o + 2]), Double(bytes[o + 1]), Double(bytes[o])]
            }
            #expect(zip(rgb, expected).allSatisfy { abs($0 - $1) <= 3 }, "(\(x), \(y)): \(rgb) vs \(expected)")
        }

        let photoThumb = try PixelComparison.decodeFile(out + "/photo-p3.png")
        let library = try PixelComparison.libraryThumbnail(of: taggedPhoto, size: size, mode: .fill)
        let untagged = try PixelComparison.libraryThumbnail(of: photo, size: size, mode: .fill)
        let same = try #require(PixelComparison.meanAbsoluteDifference(photoThumb, library))
        let converted = try #require(PixelComparison.meanAbsoluteDifference(photoThumb, untagged))
        #expect(same < 1, "the CLI's thumbnail is the library's: mean difference \(same)")
        #expect(converted > 2, "the P3 tag changes the photograph's thumbnail: mean difference \(converted)")
    }
}
