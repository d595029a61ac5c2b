import Foundation
import Testing
@_spi(Internal) import Tessera
import TesseraBenchSupport
import TesseraTestSupport

/// The thumbor virtualenv's interpreter, when it imports thumbor, libthumbor and pyimgproxy (the set-up
/// step `tessera bench peers --only thumbor` makes it; without PyPI the dialect suites are skipped).
enum DialectPeers {
    static let python: URL? = {
        guard let venv = try? BenchEndToEndTests.thumborVirtualenv() else { return nil }
        let python = venv.appendingPathComponent("bin/python")
        let probe = Process()
        probe.executableURL = python
        probe.arguments = ["-c", "import thumbor, libthumbor, pyimgproxy"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return nil }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? python : nil
    }()
}

/// imgproxy's and thumbor's URLs on the release binary: URLs built and signed by the client libraries
/// people use (pyimgproxy, libthumbor, from the thumbor virtualenv `make test` makes), the answers' sizes
/// as imgproxy's documentation and thumbor's geometry give them, the negatives (flipped, truncated and
/// missing signatures, `unsafe/` with a key, hash injection, unknown options and filters), both health
/// checks, and one image asked for in both dialects made once. Then thumbor 7.8 itself as the oracle.
@Suite("tessera serve, imgproxy and thumbor URLs, release binary",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"),
       .enabled(if: DialectPeers.python != nil, "no thumbor virtualenv with libthumbor and pyimgproxy (`tessera bench peers --only thumbor`)"))
struct ServeDialectsEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    static let imgproxyKey = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let imgproxySalt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
    static let thumborKey = "my-security-key"

    /// Runs `script` in the virtualenv and reads its standard output as a JSON object of strings.
    static func urls(_ script: String) async throws -> [String: String] {
        let run = try await ProgramRun.run(try #require(DialectPeers.python), ["-c", script])
        try #require(run.status == 0, "python: \(run.errors)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: String])
    }

    /// A root with the smallest JPEG and PNG photograph as `a.jpg` and `b.png`, and their sizes.
    static func root(_ scratch: ScratchDirectory) throws -> (root: String, jpeg: PixelSize, png: PixelSize) {
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: try RealPhotos.smallest(1, ext: "jpg")[0], to: URL(fileURLWithPath: root + "/a.jpg"))
        try FileManager.default.copyItem(at: try RealPhotos.smallest(1, ext: "png")[0], to: URL(fileURLWithPath: root + "/b.png"))
        return (root, try RealPhotos.size(of: root + "/a.jpg"), try RealPhotos.size(of: root + "/b.png"))
    }

    /// The decoded size of an answer, after checking its status is 200.
    static func size(_ answer: RawHTTP.Response, _ what: String) throws -> PixelSize? {
        guard answer.status == 200 else {
            Issue.record("\(what): \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
            return nil
        }
        let image = try ImageDecoder().decode(Data(answer.body))
        return PixelSize(width: image.width, height: image.height)
    }

    /// `size` fitted in `box` without enlarging, rounded half up (imgproxy's `fit` and thumbor's `fit-in`).
    static func fitted(_ size: PixelSize, in box: PixelSize) -> PixelSize {
        let s = min(1, min(Double(box.width) / Double(size.width), Double(box.height) / Double(size.height)))
        return PixelSize(width: Int((Double(size.width) * s).rounded()), height: Int((Double(size.height) * s).rounded()))
    }

    /// The JSON `error` code of an answer.
    static func code(_ answer: RawHTTP.Response) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: String])?["error"]
    }

    @Test("URLs signed by pyimgproxy and libthumbor: sizes, formats, negatives, health, one image for two dialects")
    func signedByTheirLibraries() async throws {
        let scratch = try ScratchDirectory("serve-dialects")
        let (root, jpeg, png) = try Self.root(scratch)
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"),
                                       "--imgproxy-prefix", "/img", "--imgproxy-key", Self.imgproxyKey, "--imgproxy-salt", Self.imgproxySalt,
                                       "--thumbor-prefix", "/th", "--thumbor-key", Self.thumborKey], scratch: scratch)
        let urls = try await Self.urls("""
            import json
            from pyimgproxy import ImgProxy
            from libthumbor import CryptoURL
            p = ImgProxy(url="http://x/img", key="\(Self.imgproxyKey)", salt="\(Self.imgproxySalt)")
            a = p.image("local:///a.jpg")
            t = CryptoURL(key="\(Self.thumborKey)")
            def i(image): return image.url[len("http://x"):]
            print(json.dumps({
              "fill": i(a.resize("fill", 300, 200)),
              "fit": i(a.resize("fit", 300, 300)),
              "width": i(a.width(200)),
              "force": i(a.resize("force", 123, 77)),
              "rotated": i(a.rotate(90).resize("fill", 300, 200)),
              "padded": i(a.resize("fill", 100, 100).padding(10, 10, 10, 10)),
              "webp": i(a.resize("fit", 150, 150).format("webp")),
              "png": i(p.image("local:///b.png").resize("fill", 64, 64)),
              "unknown": i(a.add_option("brightness", 10)),
              "auto": i(a.resize("auto", 100, 100)),
              "expired": i(a.add_option("expires", 1).width(10)),
              "both": i(a.resize("fill", 200, 100, True).keep_copyright(False).format("png")),
              "t_fill": "/th" + t.generate(width=300, height=200, image_url="a.jpg"),
              "t_fit": "/th" + t.generate(width=300, height=300, fit_in=True, image_url="a.jpg"),
              "t_crop": "/th" + t.generate(width=100, height=50, crop=((10, 10), (210, 110)), image_url="a.jpg"),
              "t_flip": "/th" + t.generate(width=-120, height=80, halign="left", valign="top", image_url="b.png"),
              "t_format": "/th" + t.generate(width=100, height=100, filters=["format(webp)", "quality(70)"], image_url="a.jpg"),
              "t_unknown": "/th" + t.generate(width=100, height=100, filters=["brightness(20)"], image_url="a.jpg"),
              "t_both": "/th" + t.generate(width=200, height=100, filters=["format(png)"], image_url="a.jpg"),
            }))
            """)
        func get(_ name: String) async throws -> RawHTTP.Response { try await server.get(try #require(urls[name], "\(name)")) }

        #expect(try Self.size(try await get("fill"), "fill") == PixelSize(width: 300, height: 200))
        #expect(try Self.size(try await get("fit"), "fit") == Self.fitted(jpeg, in: PixelSize(width: 300, height: 300)))
        #expect(try Self.size(try await get("width"), "width") == Self.fitted(jpeg, in: PixelSize(width: 200, height: 1_000_000)))
        #expect(try Self.size(try await get("force"), "force") == PixelSize(width: 123, height: 77))
        #expect(try Self.size(try await get("rotated"), "rotated") == PixelSize(width: 300, height: 200), "sized in the turned orientation")
        #expect(try Self.size(try await get("padded"), "padded") == PixelSize(width: 120, height: 120))
        let webp = try await get("webp")
        #expect(webp.headers["content-type"] == "image/webp")
        #expect(try Self.size(webp, "webp") == Self.fitted(jpeg, in: PixelSize(width: 150, height: 150)))
        let kept = try await get("png")
        #expect(kept.headers["content-type"] == "image/png", "the source's format without an extension")
        #expect(try Self.size(kept, "png") == PixelSize(width: 64, height: 64))
        for (name, status, code) in [("unknown", 404, "unknown_parameter"), ("auto", 404, "unsupported_option"), ("expired", 404, "expired")] {
            let answer = try await get(name)
            #expect(answer.status == status && Self.code(answer) == code, "\(name): \(answer.status) \(Self.code(answer) ?? "-")")
        }
        let health = try await server.get("/img/health")
        #expect(health.status == 200 && health.text.contains("ok"))

        // Signature negatives: a flipped character, a cut signature, none (insecure) with a key set.
        let signed = try #require(urls["fill"])
        let parts = signed.split(separator: "/", maxSplits: 2)
        let signature = String(parts[1]), rest = String(parts[2])
        let flippedCharacter: Character = signature.first == "A" ? "B" : "A"
        for forged in [String(flippedCharacter) + signature.dropFirst(), String(signature.dropLast(2)), "insecure"] {
            let answer = try await server.get("/img/\(forged)/\(rest)")
            #expect(answer.status == 403 && Self.code(answer) == "bad_signature", "\(forged): \(answer.status)")
        }

        #expect(try Self.size(try await get("t_fill"), "t_fill") == PixelSize(width: 300, height: 200))
        #expect(try Self.size(try await get("t_fit"), "t_fit") == Self.fitted(jpeg, in: PixelSize(width: 300, height: 300)))
        #expect(try Self.size(try await get("t_crop"), "t_crop") == PixelSize(width: 100, height: 50))
        let mirrored = try await get("t_flip")
        #expect(mirrored.headers["content-type"] == "image/png")
        #expect(try Self.size(mirrored, "t_flip") == PixelSize(width: 120, height: 80))
        _ = png
        let thumborWebP = try await get("t_format")
        #expect(thumborWebP.headers["content-type"] == "image/webp")
        #expect(try Self.size(thumborWebP, "t_format") == PixelSize(width: 100, height: 100))
        let unknownFilter = try await get("t_unknown")
        #expect(unknownFilter.status == 400 && Self.code(unknownFilter) == "unsupported_option")
        let bogus = try await server.get("/th/unsafe/100x100/filters:bogus(1)/a.jpg")
        #expect(bogus.status == 400, "unsafe/ with a key set is refused before the filters are read")
        let thumborHealth = try await server.get("/th/healthcheck")
        #expect(thumborHealth.status == 200)

        // thumbor's negatives: a flipped character, a cut hash, unsafe/ with a key, a signature moved to
        // another path (hash injection), a path that climbs out of the signed one.
        let thumbSigned = try #require(urls["t_fill"])
        let thumbParts = thumbSigned.split(separator: "/", maxSplits: 2)
        let hash = String(thumbParts[1]), thumbRest = String(thumbParts[2])
        let flippedHash = (hash.first == "A" ? "B" : "A") + hash.dropFirst()
        for path in ["/th/\(flippedHash)/\(thumbRest)", "/th/\(hash.dropLast(3))/\(thumbRest)", "/th/unsafe/\(thumbRest)",
                     "/th/\(hash)/\(thumbRest.replacingOccurrences(of: "300x200", with: "3000x2000"))",
                     "/th/\(hash)/300x200/b.png", "/th/\(hash)/\(thumbRest)/../b.png", "/th/unsafe/\(hash)/\(thumbRest)"] {
            let answer = try await server.get(path)
            #expect(answer.status == 400 && ["bad_signature", "missing_signature"].contains(Self.code(answer) ?? ""),
                    "\(path): \(answer.status) \(Self.code(answer) ?? "-")")
        }

        // One image in two dialects: the same processing value, one key, one encode.
        let first = try await get("both")
        let second = try await get("t_both")
        #expect(try Self.size(first, "both") == PixelSize(width: 200, height: 100))
        #expect(first.headers["etag"] != nil && first.headers["etag"] == second.headers["etag"])
        #expect(second.headers["x-tessera-cache"] == "memory", "made once, for the first dialect")
        #expect(await server.terminate().status == 0)
    }

    /// The documented signature examples, and imgproxy's own variables (`IMGPROXY_KEY`, `IMGPROXY_SALT`,
    /// `IMGPROXY_SIGNATURE_SIZE`) read unchanged, with a signature truncated to 8 bytes.
    @Test("imgproxy's variables and a truncated signature; thumbor without a key takes unsafe/ only")
    func environmentAndUnsafe() async throws {
        let scratch = try ScratchDirectory("serve-dialects-env")
        let (root, jpeg, _) = try Self.root(scratch)
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"), "--imgproxy-prefix", "/", "--thumbor-prefix", "/t"],
                                      scratch: scratch,
                                      environment: ["IMGPROXY_KEY": Self.imgproxyKey, "IMGPROXY_SALT": Self.imgproxySalt, "IMGPROXY_SIGNATURE_SIZE": "8"])
        let urls = try await Self.urls("""
            import base64, hashlib, hmac, json
            path = "/rs:fit:300:300/plain/local:///a.jpg"
            mac = hmac.new(bytes.fromhex("\(Self.imgproxyKey)"), bytes.fromhex("\(Self.imgproxySalt)") + path.encode(), hashlib.sha256).digest()
            print(json.dumps({"short": "/" + base64.urlsafe_b64encode(mac[:8]).decode().rstrip("=") + path,
                              "full": "/" + base64.urlsafe_b64encode(mac).decode().rstrip("=") + path}))
            """)
        #expect(try Self.size(try await server.get(try #require(urls["short"])), "short") == Self.fitted(jpeg, in: PixelSize(width: 300, height: 300)))
        let full = try await server.get(try #require(urls["full"]))
        #expect(full.status == 403, "a signature of 32 bytes where 8 are configured")
        #expect((try await server.get("/health")).status == 200)
        #expect(try Self.size(try await server.get("/t/unsafe/fit-in/300x300/a.jpg"), "unsafe") == Self.fitted(jpeg, in: PixelSize(width: 300, height: 300)))
        let signed = try await server.get("/t/8ammJH8D-7tXy6kU3lTvoXlhu4o=/300x200/a.jpg")
        #expect(signed.status == 400 && Self.code(signed) == "bad_signature", "a hash where no thumbor key is set")
        #expect(await server.terminate().status == 0)
    }
}
