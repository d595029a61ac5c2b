import Foundation
import Testing
@_spi(Internal) import Tessera
import TesseraTestSupport

/// thumbor 7.8 (PyPI) as the oracle of thumbor's URLs: it runs beside `tessera serve --thumbor-prefix /`
/// on the same root (its file loader, no storage, EXIF orientation respected as Tessera always does), and
/// every URL of a matrix of sizes, fit-in variants, alignments, `smart`, crop boxes and filters, on a real
/// JPEG and a real PNG photograph, must get the same status, format and size from both, and close pixels
/// (PSNR; different resamplers). `smart/` is compared by size and format only: thumbor without detectors
/// keeps the alignment, Tessera looks for the busy part. `grayscale()` has a lower floor: Pillow's greys are
/// Rec. 601 luma, Tessera's Rec. 709.
@Suite("thumbor as the oracle of thumbor URLs, release binary",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"),
       .enabled(if: DialectPeers.python != nil, "no thumbor virtualenv (`tessera bench peers --only thumbor`)"))
struct ThumborOracleEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    /// thumbor on `root` at a free port, its configuration and log in `scratch`; ready when `/healthcheck` answers.
    final class Thumbor: Sendable {
        let port: Int
        let process: ChildProcess

        init(root: String, scratch: ScratchDirectory) async throws {
            let venv = try BenchEndToEndTests.thumborVirtualenv()
            port = try Origin.unusedPort()
            let configuration = scratch.path("thumbor.conf")
            try """
                LOADER = 'thumbor.loaders.file_loader'
                FILE_LOADER_ROOT_PATH = '\(root)'
                ALLOW_UNSAFE_URL = True
                STORAGE = 'thumbor.storages.no_storage'
                RESULT_STORAGE = 'thumbor.result_storages.no_storage'
                RESPECT_ORIENTATION = True
                QUALITY = 82

                """.write(toFile: configuration, atomically: true, encoding: .utf8)
            let log = try OutputWatcher(path: scratch.path("thumbor.log"))
            process = try ChildProcess.spawn(venv.appendingPathComponent("bin/thumbor").path,
                                             ["-i", "127.0.0.1", "-p", "\(port)", "-c", configuration, "-l", "warning"],
                                             environment: ProcessInfo.processInfo.environment,
                                             standardOutput: log.writeEnd, standardError: log.writeEnd)
            log.childStarted()
            try await Server.waitUntilAnswering(port: port, path: "/healthcheck", process: process, name: "thumbor", log: log.path)
        }

        func get(_ target: String) async throws -> RawHTTP.Response { try await RawHTTP.get(port: port, target) }

        func stop() async {
            kill(process.pid, SIGTERM)
            _ = await process.wait()
        }
    }

    /// The PSNR of two decoded images of one size over their RGB channels (each flattened onto black as
    /// decoded), in dB; infinite when identical.
    static func psnr(_ a: Bitmap, _ b: Bitmap) -> Double {
        var squares = 0.0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let pa = a.pixel(x: x, y: y), pb = b.pixel(x: x, y: y)
                for c in 0..<3 { let d = Double(Int(pa[c]) - Int(pb[c])); squares += d * d }
            }
        }
        let mse = squares / Double(a.width * a.height * 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// The URLs (after `unsafe/`, before the image) and the PSNR each must reach.
    static let matrix: [(url: String, psnr: Double?)] = [
        ("300x200/", 28), ("200x300/", 28), ("300x0/", 28), ("0x150/", 28), ("fit-in/300x300/", 28), ("fit-in/5000x5000/", 28),
        ("full-fit-in/300x300/", 28), ("adaptive-fit-in/200x400/", 28), ("adaptive-full-fit-in/200x400/", 28),
        ("-300x200/", 28), ("300x-200/", 28), ("300x200/left/top/", 28), ("300x200/right/bottom/", 28), ("300x200/center/bottom/", 28),
        ("300x200/smart/", nil), ("40x30:440x330/200x200/", 28), ("fit-in/300x300/filters:fill(ff0000)/", 28),
        ("300x200/filters:format(png)/", 28), ("300x200/filters:format(webp)/", 26), ("300x200/filters:grayscale()/", 25),
        ("300x200/filters:rotate(90)/", 28), ("-300x200/filters:rotate(90)/", 28), ("3000x2000/filters:no_upscale()/", 28),
        ("fit-in/1800x1800/filters:upscale()/", 28), ("300x200/filters:quality(50)/", 26), ("300x200/filters:stretch()/", 28),
        ("trim/300x200/", 28), ("filters:format(png)/", 28), ("300x300/filters:focal(100x50:300x250)/", 28),
        ("200x300/filters:focal(0x0:40x40)/", 28), ("300x200/filters:round_corner(30,255,0,0)/", 28),
    ]

    @Test("status, format, size and pixels of thumbor's URLs, from thumbor and from tessera serve")
    func sameAsThumbor() async throws {
        let scratch = try ScratchDirectory("thumbor-oracle")
        let (root, _, _) = try ServeDialectsEndToEndTests.root(scratch)
        let thumbor = try await Thumbor(root: root, scratch: scratch)
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"), "--thumbor-prefix", "/"], scratch: scratch)
        var compared = 0
        for image in ["a.jpg", "b.png"] {
            for (url, floor) in Self.matrix {
                let target = "/unsafe/" + url + image
                let expected = try await thumbor.get(target)
                let answer = try await server.get(target)
                #expect(answer.status == expected.status, "\(target): tessera \(answer.status), thumbor \(expected.status)")
                guard expected.status == 200, answer.status == 200 else { continue }
                #expect(answer.headers["content-type"] == expected.headers["content-type"],
                        "\(target): tessera \(answer.headers["content-type"] ?? "-"), thumbor \(expected.headers["content-type"] ?? "-")")
                let ours = try ImageDecoder().decode(Data(answer.body)), theirs = try ImageDecoder().decode(Data(expected.body))
                #expect(ours.width == theirs.width && ours.height == theirs.height,
                        "\(target): tessera \(ours.width)x\(ours.height), thumbor \(theirs.width)x\(theirs.height)")
                guard let floor, ours.width == theirs.width, ours.height == theirs.height else { continue }
                let psnr = Self.psnr(ours, theirs)
                print("thumbor-oracle: \(target) \(ours.width)x\(ours.height) \(answer.headers["content-type"] ?? "-") PSNR \(String(format: "%.1f", psnr)) dB")
                #expect(psnr >= floor, "\(target): PSNR \(String(format: "%.1f", psnr)) dB, below \(floor)")
                compared += 1
            }
        }
        #expect(compared >= 2 * (Self.matrix.count - 1), "every URL compared on both photographs")
        // The refusals: what thumbor would ignore, Tessera refuses with thumbor's status.
        for target in ["/unsafe/300x200/filters:bogus(1)/a.jpg", "/unsafe/300x200/filters:max_bytes(2000)/a.jpg"] {
            let answer = try await server.get(target)
            #expect(answer.status == 400, "\(target): \(answer.status)")
        }
        #expect((try await server.get("/unsafe/300x200/missing.jpg")).status == (try await thumbor.get("/unsafe/300x200/missing.jpg")).status)
        #expect((try await server.get("/healthcheck")).status == 200)
        await thumbor.stop()
        #expect(await server.terminate().status == 0)
    }
}
