import Foundation
import Testing
@_spi(Internal) import Tessera
import TesseraTestSupport

/// `tessera serve` (the release binary) on sources that browsers show although they are not whole: a
/// JPEG cut short, a JPEG with stray bytes before a marker. Answers say so (`X-Tessera-Decode`), a
/// truncated source's answer is cached briefly, survives a restart from the table as partial, and is
/// replaced as soon as the file is whole; `--decoding strict` refuses it.
@Suite("tessera serve, damaged and truncated sources, release binary",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ServeDecodeEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    /// A real photograph re-encoded as a baseline JPEG (so that a cut leaves rows that never arrived).
    static func baselinePhoto() throws -> [UInt8] {
        let photo = try RealPhotos.smallest(1, ext: "jpg")[0]
        let bitmap = try ImageDecoder().decode(Data(contentsOf: photo), minimumSize: PixelSize(width: 640, height: 640))
        return try JPEGEncoder(quality: 90).encode(bitmap)
    }

    /// The mean and the largest distance from grey 128 of row `y`'s colour channels.
    static func greyness(of image: Bitmap, row y: Int) -> (mean: Double, worst: Int) {
        var sum = 0, worst = 0
        for x in 0..<image.width {
            for channel in image.pixel(x: x, y: y).prefix(3) {
                sum += Int(channel)
                worst = max(worst, abs(Int(channel) - 128))
            }
        }
        return (Double(sum) / Double(image.width * 3), worst)
    }

    @Test("a truncated JPEG: partial, briefly cached, partial again from the table after a restart, whole once the file is")
    func truncatedSourceLifecycle() async throws {
        let scratch = try ScratchDirectory("serve-truncated")
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let whole = try Self.baselinePhoto()
        let file = URL(fileURLWithPath: root + "/p.jpg")
        try Data(whole.prefix(whole.count * 6 / 10)).write(to: file)
        // Every request checks its file (no interval), so the completed file below is seen at once.
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--preset", "t:200x200:fill", "--source-check-interval", "0"]

        let first = try await Server(arguments, scratch: scratch)
        let partial = try await first.get("/v1/t/p.jpg?fmt=png")
        #expect(partial.status == 200)
        #expect(partial.headers["x-tessera-decode"] == "partial")
        #expect(partial.headers["cache-control"] == "public, max-age=60")
        #expect(partial.headers["x-tessera-cache"] == "produced")
        let image = try ImageDecoder().decode(Data(partial.body))
        #expect(image.width == 200 && image.height == 200)
        // The bottom rows never arrived: grey. The top rows did: a photograph, not grey.
        let bottom = Self.greyness(of: image, row: 199), top = Self.greyness(of: image, row: 10)
        #expect(bottom.worst <= 3, "bottom row \(bottom)")
        #expect(top.worst > 10, "top row \(top)")
        // A conditional request with the partial answer's ETag: 304, still short-lived and marked.
        let etag = try #require(partial.headers["etag"])
        let revalidated = try await first.get("/v1/t/p.jpg?fmt=png", headers: ["If-None-Match": etag])
        #expect(revalidated.status == 304)
        #expect(revalidated.headers["cache-control"] == "public, max-age=60")
        #expect(revalidated.headers["x-tessera-decode"] == "partial")
        // Ad hoc sizes are marked the same way.
        let resized = try await first.get("/v1/resize?src=p.jpg&w=120&h=90&fmt=png")
        #expect(resized.status == 200)
        #expect(resized.headers["x-tessera-decode"] == "partial")
        #expect(await first.terminate().status == 0)

        // After a restart the table answers, and its record still says partial.
        let second = try await Server(arguments, scratch: scratch)
        let fromTable = try await second.get("/v1/t/p.jpg?fmt=png")
        #expect(fromTable.headers["x-tessera-cache"] == "table")
        #expect(fromTable.headers["x-tessera-decode"] == "partial")
        #expect(fromTable.headers["cache-control"] == "public, max-age=60")
        #expect(fromTable.body == partial.body)

        // The file is completed (a new version): the damaged entry is not served for it.
        try Data(whole).write(to: file)
        let complete = try await second.get("/v1/t/p.jpg?fmt=png")
        #expect(complete.status == 200)
        #expect(complete.headers["x-tessera-decode"] == nil)
        #expect(complete.headers["cache-control"] == "public, max-age=86400")
        #expect(complete.headers["x-tessera-cache"] == "produced")
        #expect(complete.headers["etag"] != etag)
        let wholeImage = try ImageDecoder().decode(Data(complete.body))
        let reference = try PixelComparison.libraryThumbnail(of: file, size: PixelSize(width: 200, height: 200), mode: .fill)
        let difference = PixelComparison.meanAbsoluteDifference(wholeImage, reference)
        #expect(difference.map { $0 < 1 } == true, "mean difference \(String(describing: difference))")
        #expect(Self.greyness(of: wholeImage, row: 199).worst > 3, "the bottom row is the photograph's now")
        #expect(await second.terminate().status == 0)
    }

    @Test("--decoding strict refuses a truncated source with 415 undecodable_source")
    func strictRefuses() async throws {
        let scratch = try ScratchDirectory("serve-strict")
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let whole = try Self.baselinePhoto()
        try Data(whole.prefix(whole.count * 6 / 10)).write(to: URL(fileURLWithPath: root + "/p.jpg"))
        try Data(whole).write(to: URL(fileURLWithPath: root + "/whole.jpg"))
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"), "--preset", "t:200x200:fill",
                                       "--decoding", "strict"], scratch: scratch)
        let refused = try await server.get("/v1/t/p.jpg")
        #expect(refused.status == 415)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("\"error\":\"undecodable_source\""))
        let served = try await server.get("/v1/t/whole.jpg")
        #expect(served.status == 200)
        #expect(served.headers["x-tessera-decode"] == nil)
        #expect(await server.terminate().status == 0)
    }

    @Test("a JPEG with stray bytes before its SOS marker is served whole and marked damaged, with the usual Cache-Control")
    func damagedSource() async throws {
        let scratch = try ScratchDirectory("serve-damaged-source")
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var bytes = try Self.baselinePhoto()
        // Before the SOS marker: libjpeg reads the markers there byte by byte and warns "5 extraneous
        // bytes before marker 0xda" (bytes before EOI may vanish into the entropy decoder's prefetch).
        let sos = try #require((2..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA })
        bytes.insert(contentsOf: [0x00, 0x11, 0x22, 0x33, 0x44], at: sos)
        try Data(bytes).write(to: URL(fileURLWithPath: root + "/d.jpg"))
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"), "--preset", "t:200x200:fill"], scratch: scratch)
        let answer = try await server.get("/v1/t/d.jpg?fmt=png")
        #expect(answer.status == 200)
        #expect(answer.headers["x-tessera-decode"] == "damaged")
        #expect(answer.headers["cache-control"] == "public, max-age=86400")
        let image = try ImageDecoder().decode(Data(answer.body))
        #expect(Self.greyness(of: image, row: 199).worst > 3, "every row decoded")
        #expect(await server.terminate().status == 0)
    }
}
