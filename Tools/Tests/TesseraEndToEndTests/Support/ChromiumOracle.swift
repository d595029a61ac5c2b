import Foundation
import Testing
import TesseraTestSupport

/// One headless Chromium (``Chromium/start(_:scratch:log:extraArguments:)``: loopback only) on a blank
/// page, used as the reference decoder: an image goes in as a `data:` URL (no file:// canvas
/// tainting, no network), is drawn into a canvas at its natural size and comes back as the canvas's
/// RGBA (`getImageData`).
///
/// Started on first use inside ``ChromiumOracleScope`` (a suite trait) and stopped when the suite
/// ends, so that a suite pays Chromium's start-up once. Calls are serialised by a lock and block a
/// thread of their own, never Swift's cooperative pool.
final class ChromiumOracle: @unchecked Sendable {
    /// What Chromium made of an image.
    struct Rendering: Sendable {
        /// Whether the `<img>` fired `load` (not `error`) with a natural size above zero.
        var loaded: Bool
        var width: Int
        var height: Int
        /// The canvas's pixels: RGBA, not premultiplied (what `getImageData` returns), row after row.
        var rgba: [UInt8]
    }

    /// The oracle of the running suite (set by ``ChromiumOracleScope``).
    @TaskLocal static var current: ChromiumOracle?

    private let lock = NSLock()
    private let scratch: ScratchDirectory
    private var browser: (process: ChildProcess, devTools: DevToolsPipe)?
    private var session: String?

    init(scratch: ScratchDirectory) {
        self.scratch = scratch
    }

    /// The running suite's oracle; fails the test when there is none.
    static func require() throws -> ChromiumOracle {
        try #require(current, "the suite runs inside ChromiumOracleScope")
    }

    /// Chromium's log so far (its end), for failure messages.
    var log: String {
        String((try? String(contentsOfFile: scratch.path("chromium.log"), encoding: .utf8))?.suffix(3000) ?? "")
    }

    /// Draws `image` (a file's bytes, `mimeType` for the `data:` URL) in Chromium and reads the canvas back.
    func render(_ image: Data, mimeType: String) async throws -> Rendering {
        try await onOwnThread { try self.renderBlocking(image, mimeType: mimeType) }
    }

    /// Stops Chromium if it was started.
    func stop() async {
        let process: ChildProcess? = lock.withLock {
            defer { browser = nil; session = nil }
            return browser?.process
        }
        if let process { await Chromium.stop(process) }
    }

    private func renderBlocking(_ image: Data, mimeType: String) throws -> Rendering {
        try lock.withLock {
            let (devTools, session) = try pageSession()
            let url = "data:\(mimeType);base64,\(image.base64EncodedString())"
            let script = """
            (async () => {
              const img = new Image();
              const loaded = await new Promise(done => {
                img.onload = () => done(true);
                img.onerror = () => done(false);
                img.src = "\(url)";
              });
              const width = img.naturalWidth, height = img.naturalHeight;
              if (!loaded || width === 0 || height === 0) return { loaded: false, width, height, rgba: "" };
              const canvas = document.createElement("canvas");
              canvas.width = width;
              canvas.height = height;
              const context = canvas.getContext("2d", { willReadFrequently: true });
              context.drawImage(img, 0, 0);
              const data = context.getImageData(0, 0, width, height).data;
              let binary = "";
              for (let i = 0; i < data.length; i += 0x8000) binary += String.fromCharCode.apply(null, data.subarray(i, i + 0x8000));
              return { loaded: true, width, height, rgba: btoa(binary) };
            })()
            """
            let answer = try devTools.call("Runtime.evaluate", ["expression": script, "awaitPromise": true, "returnByValue": true],
                                           session: session, seconds: 120)
            if let exception = answer["exceptionDetails"] {
                throw DevToolsPipe.Failure(description: "the page threw: \(exception)")
            }
            guard let value = (answer["result"] as? [String: Any])?["value"] as? [String: Any],
                  let loaded = value["loaded"] as? Bool, let width = value["width"] as? Int, let height = value["height"] as? Int,
                  let base64 = value["rgba"] as? String, let rgba = Data(base64Encoded: base64) else {
                throw DevToolsPipe.Failure(description: "unexpected answer: \(String(describing: answer).prefix(500))")
            }
            if loaded, rgba.count != width * height * 4 {
                throw DevToolsPipe.Failure(description: "\(rgba.count) bytes of RGBA for \(width)x\(height)")
            }
            return Rendering(loaded: loaded, width: width, height: height, rgba: Array(rgba))
        }
    }

    /// The DevTools pipe and the blank page's session, starting Chromium on first use (under the lock).
    private func pageSession() throws -> (DevToolsPipe, String) {
        if browser == nil {
            // An sRGB output profile whatever the machine's display says (the canvas is sRGB either way).
            browser = try Chromium.start("about:blank", scratch: scratch, log: scratch.path("chromium.log"),
                                         extraArguments: ["--force-color-profile=srgb"])
        }
        let devTools = browser!.devTools
        if let session { return (devTools, session) }
        // A page of our own (the start-up page may not be a target yet when the pipe first answers).
        guard let page = try devTools.call("Target.createTarget", ["url": "about:blank"])["targetId"] as? String else {
            throw DevToolsPipe.Failure(description: "no page target; chromium said: \(log)")
        }
        guard let attached = try devTools.call("Target.attachToTarget", ["targetId": page, "flatten": true])["sessionId"] as? String else {
            throw DevToolsPipe.Failure(description: "no session for the page")
        }
        session = attached
        return (devTools, attached)
    }
}

/// A suite trait that gives the suite's tests one ``ChromiumOracle`` (``ChromiumOracle/current``) and
/// stops its Chromium when the last of them is done.
struct ChromiumOracleScope: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let scratch = try ScratchDirectory("chromium-oracle")
        let oracle = ChromiumOracle(scratch: scratch)
        do {
            try await ChromiumOracle.$current.withValue(oracle) { try await function() }
        } catch {
            await oracle.stop()
            throw error
        }
        await oracle.stop()
    }
}

extension Trait where Self == ChromiumOracleScope {
    /// One headless Chromium for the whole suite (``ChromiumOracleScope``).
    static var chromiumOracle: Self { ChromiumOracleScope() }
}
