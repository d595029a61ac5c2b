import Foundation
import Testing
import TesseraTestSupport

/// Headless Chromium from Debian's `chromium` package (`scripts/setup` installs it for the gallery test
/// only), started so that it can only reach loopback.
///
/// Every non-loopback request goes to a proxy on 127.0.0.1:9, where nothing listens (Chromium sends
/// loopback addresses around a proxy by itself), host names other than 127.0.0.1 do not resolve, and
/// the background services that would phone home (component updates, sync, translation…) are off.
enum Chromium {
    /// The browser, when installed.
    static let path: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// The flags of every run: headless, a profile and home of its own under `scratch`, loopback only.
    static func arguments(profile: String, windowWidth: Int = 1280, windowHeight: Int = 800) -> [String] {
        [
            "--headless=new", "--no-sandbox", "--user-data-dir=\(profile)", "--window-size=\(windowWidth),\(windowHeight)",
            "--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-extensions", "--disable-default-apps", "--disable-dev-shm-usage", "--mute-audio",
            "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication",
            "--disable-renderer-backgrounding", "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows",
            "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        ]
    }

    /// Starts Chromium on `url` with its output in `log` and the DevTools protocol on a pipe;
    /// `extraArguments` go after ``arguments(profile:windowWidth:windowHeight:)``.
    static func start(_ url: String, scratch: ScratchDirectory, log: String,
                      extraArguments: [String] = []) throws -> (process: ChildProcess, devTools: DevToolsPipe) {
        let binary = try #require(path, "chromium (scripts/setup installs Debian's chromium for the gallery test)")
        let home = scratch.path("chromium-home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["XDG_CONFIG_HOME"] = home + "/config"
        environment["XDG_CACHE_HOME"] = home + "/cache"
        let output = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(output) }
        // Chromium reads commands on its descriptor 3 and writes answers on 4.
        let commands = try ChildProcess.makePipe(), answers = try ChildProcess.makePipe()
        // Above 4 and close-on-exec, so that the child gets exactly 3 and 4 (dup2 clears the flag there).
        let childReads = fcntl(commands.read, F_DUPFD_CLOEXEC, 10), childWrites = fcntl(answers.write, F_DUPFD_CLOEXEC, 10)
        for descriptor in [commands.read, answers.write] { close(descriptor) }
        defer { close(childReads); close(childWrites) }
        let devTools = DevToolsPipe(commands: commands.write, answers: answers.read)   // closes them when dropped
        let process = try ChildProcess.spawn(binary, arguments(profile: scratch.path("chromium-profile")) + extraArguments + ["--remote-debugging-pipe", url],
                                             environment: environment, standardOutput: output, standardError: output,
                                             descriptors: [3: childReads, 4: childWrites])
        return (process, devTools)
    }

    /// Waits for `child` to exit, at most `seconds`; past that it is killed (SIGKILL). Returns whether it
    /// exited within the time. The waiting happens on threads of its own, not on Swift's cooperative pool.
    @discardableResult
    static func wait(_ child: ChildProcess, seconds: Double) async -> Bool {
        await onOwnThread {
            let exited = DispatchSemaphore(value: 0)
            Thread {
                _ = child.wait()
                exited.signal()
            }.start()
            if exited.wait(timeout: .now() + seconds) == .success { return true }
            kill(child.pid, SIGKILL)
            exited.wait()
            return false
        }
    }

    /// Asks `child` to quit (SIGTERM) and waits for it, killing it if it takes more than a minute.
    static func stop(_ child: ChildProcess) async {
        kill(child.pid, SIGTERM)
        await wait(child, seconds: 60)
    }
}

/// Chromium's DevTools protocol over `--remote-debugging-pipe`: each message is a JSON text ended by a
/// NUL byte; commands go to Chromium's descriptor 3, answers and events come from its descriptor 4.
/// Calls block the calling thread, each for at most its time limit.
final class DevToolsPipe {
    private let commands: Int32
    private let answers: Int32
    /// Bytes read and not yet handed out; one answer holding an image's pixels is megabytes long. `Data`'s
    /// own search, append and removal (Foundation's, optimised) rather than generic collection code, which
    /// the test targets compile without optimisation.
    private var pending = Data()
    private var nextID = 0

    /// A command that failed, timed out, or a pipe that closed.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The byte that ends each message.
    private static let terminator = Data([0])

    init(commands: Int32, answers: Int32) {
        self.commands = commands
        self.answers = answers
    }

    deinit {
        close(commands)
        close(answers)
    }

    /// Sends `method` (to a page's `session` when given) and returns its `result`; events that arrive
    /// in between are skipped. Waits at most `seconds` for the answer.
    func call(_ method: String, _ parameters: [String: Any] = [:], session: String? = nil, seconds: Int = 120) throws -> [String: Any] {
        nextID += 1
        var message: [String: Any] = ["id": nextID, "method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        let bytes = Array(try JSONSerialization.data(withJSONObject: message)) + [0]
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            guard count > 0 else { throw Failure(description: "\(method): the DevTools pipe is closed (errno \(errno))") }
            sent += count
        }
        let deadline = ContinuousClock.now + .seconds(seconds)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        // Where the search for the next NUL goes on: the bytes before it hold none (each read is searched once).
        var searched = pending.startIndex
        while true {
            while let end = pending.range(of: Self.terminator, in: searched..<pending.endIndex)?.lowerBound {
                let text = pending.subdata(in: pending.startIndex..<end)
                pending = pending.subdata(in: end + 1..<pending.endIndex)
                searched = pending.startIndex
                guard let answer = try JSONSerialization.jsonObject(with: text) as? [String: Any],
                      answer["id"] as? Int == nextID else { continue }
                if let error = answer["error"] { throw Failure(description: "\(method): \(error)") }
                return answer["result"] as? [String: Any] ?? [:]
            }
            searched = pending.endIndex
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw Failure(description: "\(method): no answer within \(seconds) s") }
            var descriptor = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(left.components.seconds * 1000 + 1))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(answers, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure(description: "\(method): the DevTools pipe closed") }
            buffer.withUnsafeBufferPointer { pending.append($0.baseAddress!, count: count) }
        }
    }

    /// A PNG of what the first page shows (`Page.captureScreenshot`).
    func screenshot() throws -> Data {
        let targets = try call("Target.getTargets")["targetInfos"] as? [[String: Any]] ?? []
        guard let page = targets.first(where: { $0["type"] as? String == "page" })?["targetId"] as? String else {
            throw Failure(description: "no page among \(targets)")
        }
        guard let session = try call("Target.attachToTarget", ["targetId": page, "flatten": true])["sessionId"] as? String else {
            throw Failure(description: "no session for the page")
        }
        guard let base64 = try call("Page.captureScreenshot", ["format": "png"], session: session)["data"] as? String,
              let png = Data(base64Encoded: base64) else {
            throw Failure(description: "no screenshot data")
        }
        return png
    }
}
