import Foundation
import Testing
@_spi(Internal) import Tessera
import TesseraTestSupport

/// `metadata=strip|copyright|keep` on the release binary, with exiftool (Debian's libimage-exiftool-perl)
/// on both sides: it writes EXIF (camera, GPS, artist, copyright, orientation 6), XMP (rights, creator,
/// licence, subject) and IPTC (by-line, copyright notice, keywords) into a JPEG of the 200×100 quadrants,
/// and reads back what Tessera wrote in every output format.
@Suite("tessera serve, metadata, release binary, read back by exiftool",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ServeMetadataEndToEndTests {
    typealias Server = ServeEndToEndTests.Server
    static let exiftool = "/usr/bin/exiftool"

    /// exiftool's tags of `file` (`-G1 -n`: names with their group, numbers as numbers).
    static func tags(_ file: String) async throws -> [String: String] {
        let run = try await ProgramRun.run(URL(fileURLWithPath: exiftool), ["-j", "-G1", "-n", file])
        try #require(run.status == 0, "\(run)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [[String: Any]])
        return try #require(list.first).mapValues { "\($0)" }
    }

    @Test("strip, copyright and keep in JPEG, PNG, WebP and AVIF; a preset that keeps them, across a restart; a bad value")
    func metadata() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.exiftool), "\(Self.exiftool) (scripts/setup installs libimage-exiftool-perl)")
        let scratch = try ScratchDirectory("serve-metadata")
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let photo = root + "/photo.jpg"
        let quadrants = try ImageDecoder().decode(Data(try Quadrants.png()))
        try Data(try JPEGEncoder(quality: 95).encode(quadrants)).write(to: URL(fileURLWithPath: photo))
        let written = try await ProgramRun.run(URL(fileURLWithPath: Self.exiftool), [
            "-overwrite_original", "-n", "-Orientation=6", "-Make=TestCam", "-Model=M1", "-Artist=Ada Lovelace",
            "-Copyright=(c) 2026 Ada Lovelace", "-GPSLatitude=48.85", "-GPSLatitudeRef=N",
            "-XMP-dc:Rights=CC BY 4.0, Ada Lovelace", "-XMP-dc:Creator=Ada Lovelace",
            "-XMP-cc:License=https://creativecommons.org/licenses/by/4.0/", "-XMP-dc:Subject=private",
            "-IPTC:By-line=Ada Lovelace", "-IPTC:CopyrightNotice=(c) Ada", "-IPTC:Keywords=private", photo])
        try #require(written.status == 0, "\(written)")
        let source = try await Self.tags(photo)
        try #require(source["IFD0:Make"] == "TestCam" && source["IPTC:Keywords"] == "private", "exiftool wrote the source's metadata: \(source)")

        let config = #"{"presets": [{"name": "kept", "width": 50, "metadata": "keep", "format": "jpeg"}]}"#
        try Data(config.utf8).write(to: URL(fileURLWithPath: scratch.path("serve.json")))
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--config", scratch.path("serve.json")]
        let server = try await Server(arguments, scratch: scratch)
        func tags(_ path: String) async throws -> [String: String] {
            let answer = try await server.get(path)
            try #require(answer.status == 200, "\(path): \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
            let file = scratch.path("out-\(abs(path.hashValue))")
            try Data(answer.body).write(to: URL(fileURLWithPath: file))
            let image = try ImageDecoder().decode(Data(answer.body))
            #expect(image.width == 50 && image.height == 100, "\(path): turned upright by the orientation, then 50 wide")
            return try await Self.tags(file)
        }
        for format in ["jpeg", "png", "webp", "avif"] {
            let base = "/v1/resize?src=photo.jpg&w=50&fmt=\(format)"
            let stripped = try await tags(base)
            #expect(stripped["IFD0:Artist"] == nil && stripped["IFD0:Make"] == nil && stripped["XMP-dc:Rights"] == nil
                    && stripped["IPTC:By-line"] == nil, "\(format), strip (the default): \(stripped)")

            let rights = try await tags(base + "&metadata=copyright")
            #expect(rights["IFD0:Artist"] == "Ada Lovelace" && rights["IFD0:Copyright"] == "(c) 2026 Ada Lovelace", "\(format), copyright: \(rights)")
            #expect(rights["IFD0:Make"] == nil && rights["GPS:GPSLatitude"] == nil && rights["IFD0:Orientation"] == nil, "\(format), copyright: \(rights)")
            #expect(rights["XMP-dc:Rights"] == "CC BY 4.0, Ada Lovelace" && rights["XMP-dc:Creator"] == "Ada Lovelace"
                    && rights["XMP-cc:License"] == "https://creativecommons.org/licenses/by/4.0/", "\(format), copyright: \(rights)")
            #expect(rights["XMP-dc:Subject"] == nil && rights["IPTC:Keywords"] == nil, "\(format), copyright: \(rights)")

            let all = try await tags(base + "&metadata=keep")
            #expect(all["IFD0:Make"] == "TestCam" && all["IFD0:Model"] == "M1" && all["GPS:GPSLatitude"] == "48.85", "\(format), keep: \(all)")
            #expect(all["IFD0:Orientation"] == "1", "\(format), keep: the pixels are upright, so the orientation is 1: \(all)")
            #expect(all["XMP-dc:Subject"] == "private" && all["XMP-dc:Rights"] == "CC BY 4.0, Ada Lovelace", "\(format), keep: \(all)")
            if format == "jpeg" {
                #expect(rights["IPTC:By-line"] == "Ada Lovelace" && rights["IPTC:CopyrightNotice"] == "(c) Ada", "jpeg, copyright: \(rights)")
                #expect(all["IPTC:Keywords"] == "private" && all["IPTC:By-line"] == "Ada Lovelace", "jpeg, keep: \(all)")
            }
        }
        let refused = try await server.get("/v1/resize?src=photo.jpg&w=50&metadata=all")
        #expect(refused.status == 400 && String(decoding: refused.body, as: UTF8.self).contains("bad_metadata"))

        // A preset that keeps metadata: its table holds pixels, its answers carry the source's metadata,
        // after a restart (a table hit) as before.
        let first = try await tags("/v1/kept/photo.jpg")
        #expect(first["IFD0:Make"] == "TestCam" && first["IPTC:Keywords"] == "private", "preset: \(first)")
        #expect(await server.terminate().status == 0)
        let restarted = try await Server(arguments, scratch: scratch)
        let again = try await restarted.get("/v1/kept/photo.jpg")
        #expect(again.status == 200 && again.headers["x-tessera-cache"] == "table")
        let file = scratch.path("again.jpg")
        try Data(again.body).write(to: URL(fileURLWithPath: file))
        let afterRestart = try await Self.tags(file)
        #expect(afterRestart["IFD0:Make"] == "TestCam" && afterRestart["IFD0:Orientation"] == "1", "preset after a restart: \(afterRestart)")
        #expect(await restarted.terminate().status == 0)
    }
}
