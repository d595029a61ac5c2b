import Foundation
import Testing
@_spi(Internal) import Tessera
import TesseraTestSupport

/// Animated sources on the release binary, with Pillow (Debian's python3-pil) on both sides: it writes a
/// three-frame GIF (red, green, blue; 100, 200 and 300 ms; looping for ever) and decodes every answer frame
/// by frame (count, size, durations, loop, each frame's centre colour), a decoder that is not ours.
@Suite("tessera serve, animations kept, release binary, decoded by Pillow",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ServeAnimationEndToEndTests {
    typealias Server = ServeEndToEndTests.Server
    static let python = "/usr/bin/python3"

    /// What Pillow reads of an image file.
    struct Frames: Decodable {
        var format: String
        var n: Int
        var size: [Int]
        var loop: Int?
        var durations: [Int?]
        var centre: [[Int]]
    }

    static let reader = """
        import json, sys
        from PIL import Image
        im = Image.open(sys.argv[1])
        out = {"format": im.format, "n": getattr(im, "n_frames", 1), "size": list(im.size), "loop": im.info.get("loop"),
               "durations": [], "centre": []}
        for i in range(out["n"]):
            im.seek(i)
            im.load()   # Pillow's WebP reader sets a frame's duration when it loads it
            out["durations"].append(im.info.get("duration"))
            out["centre"].append(list(im.convert("RGBA").getpixel((im.size[0] // 2, im.size[1] // 2))))
        print(json.dumps(out))
        """

    static let writer = """
        import sys
        from PIL import Image
        count = int(sys.argv[2])
        colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
        frames = [Image.new("RGB", (120, 80), colours[i % 3]) for i in range(count)]
        frames[0].save(sys.argv[1], save_all=True, append_images=frames[1:], duration=[100 * (i % 3 + 1) for i in range(count)], loop=0)
        """

    static func pillow(_ script: String, _ arguments: [String]) async throws -> ProgramRun {
        let run = try await ProgramRun.run(URL(fileURLWithPath: python), ["-c", script] + arguments)
        try #require(run.status == 0, "\(run) (scripts/setup installs python3-pil)")
        return run
    }

    static func close(_ a: [Int], _ b: [Int]) -> Bool { zip(a, b).allSatisfy { abs($0 - $1) <= 16 } }
    static let colours = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]]

    @Test("GIF and WebP stay animated (fmt, Accept), animation=first and AVIF are stills, over the limit the first frame; a preset")
    func animations() async throws {
        let scratch = try ScratchDirectory("serve-animation")
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        _ = try await Self.pillow(Self.writer, [root + "/anim.gif", "3"])
        _ = try await Self.pillow(Self.writer, [root + "/long.gif", "6"])
        let config = #"{"presets": [{"name": "moving", "width": 60, "format": "webp"}]}"#
        try Data(config.utf8).write(to: URL(fileURLWithPath: scratch.path("serve.json")))
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--config", scratch.path("serve.json"),
                         "--max-animation-frames", "5"]
        var count = 0
        func frames(_ server: Server, _ target: String, accept: String? = nil) async throws -> (Frames, RawHTTP.Response) {
            let answer = try await server.get(target, headers: accept.map { ["Accept": $0] } ?? [:])
            try #require(answer.status == 200, "\(target): \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
            count += 1
            let file = scratch.path("answer-\(count)")
            try Data(answer.body).write(to: URL(fileURLWithPath: file))
            let read = try await Self.pillow(Self.reader, [file])
            return (try read.json(Frames.self), answer)
        }
        func expectAnimated(_ read: Frames, _ format: String, _ target: String) {
            #expect(read.format == format && read.n == 3 && read.size == [60, 40], "\(target): \(read)")
            #expect(read.durations == [100, 200, 300] && read.loop == 0, "\(target): \(read)")
            #expect(zip(read.centre, Self.colours).allSatisfy(Self.close), "\(target): \(read.centre)")
        }
        let server = try await Server(arguments, scratch: scratch)
        for (format, pillowName) in [("gif", "GIF"), ("webp", "WEBP")] {
            let target = "/v1/resize?src=anim.gif&w=60&fmt=\(format)"
            let (read, answer) = try await frames(server, target)
            expectAnimated(read, pillowName, target)
            #expect(answer.headers["content-type"] == "image/\(format)" && answer.headers["x-tessera-animation"] == "3 frames")
        }
        let chrome = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
        let (negotiated, negotiatedAnswer) = try await frames(server, "/v1/resize?src=anim.gif&w=60", accept: chrome)
        expectAnimated(negotiated, "WEBP", "a browser's Accept")
        #expect(negotiatedAnswer.headers["content-type"] == "image/webp", "never AVIF for an animation")
        let (legacy, _) = try await frames(server, "/v1/resize?src=anim.gif&w=60")
        expectAnimated(legacy, "GIF", "no Accept")

        let (first, firstAnswer) = try await frames(server, "/v1/resize?src=anim.gif&w=60&fmt=webp&animation=first")
        #expect(first.n == 1 && Self.close(first.centre[0], Self.colours[0]) && firstAnswer.headers["x-tessera-animation"] == "first frame")
        let (png, pngAnswer) = try await frames(server, "/v1/resize?src=anim.gif&w=60&fmt=png")
        #expect(png.n == 1 && pngAnswer.headers["x-tessera-animation"] == "first frame")
        let avif = try await server.get("/v1/resize?src=anim.gif&w=60&fmt=avif")
        #expect(avif.headers["content-type"] == "image/avif" && avif.headers["x-tessera-animation"] == "first frame", "AVIF is written still")
        let (long, longAnswer) = try await frames(server, "/v1/resize?src=long.gif&w=60&fmt=gif")
        #expect(long.n == 1 && longAnswer.headers["x-tessera-animation"] == "first frame: over the limit", "6 frames, 5 allowed: \(long)")
        let refused = try await server.get("/v1/resize?src=anim.gif&w=60&animation=none")
        #expect(refused.status == 400 && String(decoding: refused.body, as: UTF8.self).contains("bad_animation"))

        // A preset: animated (its table holds still sources only), before and after a restart.
        let (preset, presetAnswer) = try await frames(server, "/v1/moving/anim.gif")
        expectAnimated(preset, "WEBP", "preset")
        #expect(presetAnswer.headers["x-tessera-cache"] == "produced")
        #expect(await server.terminate().status == 0)
        let restarted = try await Server(arguments, scratch: scratch)
        let (again, _) = try await frames(restarted, "/v1/moving/anim.gif")
        expectAnimated(again, "WEBP", "preset after a restart")
        #expect(await restarted.terminate().status == 0)
    }
}
