import Foundation
import Testing
import TesseraTestSupport

/// A real nginx (Debian's `nginx-light`, installed by `scripts/setup`) on 127.0.0.1 and a free port, with
/// its own configuration and prefix in a temporary directory.
///
/// Locations under ``root``:
/// - `/fresh/…` files with `Cache-Control: max-age=3600`, `/stale/…` with `max-age=0`, `/swr/…` with
///   `max-age=0, stale-while-revalidate=60, stale-if-error=600`, `/sie/…` with `max-age=0, stale-if-error=600`;
///   nginx adds its own `ETag` and `Last-Modified` and answers `If-None-Match` with `304`;
/// - `/forbidden/…` answers `403`; anything missing `404`;
/// - `/chain/1` → `/chain/2` → `/chain/3` → `/fresh/chain.jpg` (three `301`s), `/long/1` … `/long/8` (a chain of
///   eight, past the loader's limit of five), `/cycle/a` ⇄ `/cycle/b`;
/// - `/sentinel` answers `204` (see ``settledLog()``).
///
/// nginx runs in one process (`master_process off`), so requests are handled, and logged, one after another.
/// It is stopped by ``stop()``, when the value is dropped, and by a watchdog when the test process dies.
final class Nginx {
    /// One line of the access log.
    struct Request: Equatable, CustomStringConvertible {
        var method: String
        var uri: String
        var status: Int
        var bodyBytes: Int
        var ifNoneMatch: String
        /// The `Authorization` header, `-` when absent.
        var authorization: String

        var description: String { "\(method) \(uri) \(status) \(bodyBytes) inm=\(ifNoneMatch) auth=\(authorization)" }
    }

    let port: Int
    /// The document root.
    let root: URL
    private let prefix: ScratchDirectory
    private let wrapper: ChildProcess
    private let lock = NSLock()
    private var stopped = false
    private var sentinels = 0

    /// `http://127.0.0.1:port` + `path`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Starts nginx serving `files` (path under the root → source file to copy there).
    init(files: [String: URL]) throws {
        let nginx = "/usr/sbin/nginx"
        try #require(FileManager.default.isExecutableFile(atPath: nginx), "nginx at \(nginx) (scripts/setup installs nginx-light)")
        prefix = try ScratchDirectory("nginx")
        root = prefix.url.appendingPathComponent("www")
        for (path, source) in files {
            let target = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: source, to: target)
        }
        for directory in ["www/fresh", "www/stale"] {
            try FileManager.default.createDirectory(at: prefix.url.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        port = try Origin.unusedPort()
        let written = Self.configuration(prefix: prefix.url, port: port)
        try written.write()
        let configuration = written.file.path
        // The watchdog ends nginx when this test process goes away, however it goes (a crash included).
        let script = """
        \(nginx) -p '\(prefix.url.path)' -c '\(configuration)' & server=$!
        tail --pid=\(getpid()) -f /dev/null & watch=$!
        wait -n $server $watch
        kill $server $watch 2>/dev/null
        wait
        """
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        wrapper = try ChildProcess.spawn("/bin/bash", ["-c", script], environment: ProcessInfo.processInfo.environment,
                                         standardOutput: null, standardError: null)
        try waitUntilListening()
    }

    deinit { stop() }

    /// Stops nginx (and its watchdog) and waits until it has exited; later connections are refused.
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        if let pid = try? String(contentsOfFile: prefix.path("nginx.pid"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines), let number = Int32(pid) {
            kill(number, SIGTERM)           // nginx exits; the wrapper then ends its watchdog and itself
        } else {
            kill(wrapper.pid, SIGTERM)
        }
        _ = wrapper.wait()
    }

    /// The access log up to now, complete: a `/sentinel` request is made first, and since nginx handles
    /// requests one at a time, every request before it has been logged once its line appears.
    func settledLog() throws -> [Request] {
        lock.lock()
        sentinels += 1
        let marker = "/sentinel?\(sentinels)"
        lock.unlock()
        let status = try Self.get(port: port, path: marker)
        try #require(status == 204, "the sentinel request is answered")
        let lines = try log()
        let index = try #require(lines.firstIndex { $0.uri == marker }, "the sentinel is logged")
        return lines[..<index].filter { !$0.uri.hasPrefix("/sentinel") }
    }

    /// Requests for `uri` in `log`.
    static func requests(_ log: [Request], for uri: String) -> [Request] { log.filter { $0.uri == uri } }

    // MARK: Internals

    private func log() throws -> [Request] {
        let text = try String(contentsOfFile: prefix.path("access.log"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 6, let status = Int(fields[2]), let bytes = Int(fields[3]) else { return nil }
            return Request(method: fields[0], uri: fields[1], status: status, bodyBytes: bytes, ifNoneMatch: fields[4],
                           authorization: fields[5])
        }
    }

    /// Connects until nginx accepts (it opens its socket before it writes the pid file and serves), or fails
    /// with nginx's error log after 10 s.
    private func waitUntilListening() throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if (try? Self.get(port: port, path: "/sentinel?0")) == 204 { return }
            guard kill(wrapper.pid, 0) == 0 else { break }
            usleep(5_000)   // polling an external process's readiness, bounded by the deadline
        }
        let errors = (try? String(contentsOfFile: prefix.path("error.log"), encoding: .utf8)) ?? "(no error log)"
        stop()
        Issue.record("nginx did not start on port \(port): \(errors)")
        throw CancellationError()
    }

    private static func configuration(prefix: URL, port: Int) -> NginxConfiguration {
        var redirects = ""
        for step in 1...2 { redirects += "        location = /chain/\(step) { return 301 /chain/\(step + 1); }\n" }
        redirects += "        location = /chain/3 { return 301 /fresh/chain.jpg; }\n"
        for step in 1...7 { redirects += "        location = /long/\(step) { return 301 /long/\(step + 1); }\n" }
        redirects += "        location = /long/8 { return 301 /fresh/chain.jpg; }\n"
        var configuration = NginxConfiguration(prefix: prefix, port: port)
        configuration.masterProcess = false
        configuration.http = """
            types { image/jpeg jpg jpeg; image/png png; }
            default_type application/octet-stream;
            log_format e2e '$request_method\\t$request_uri\\t$status\\t$body_bytes_sent\\t$http_if_none_match\\t$http_authorization';
            access_log \(prefix.path)/access.log e2e;
        """
        configuration.server = """
                location /fresh/ { add_header Cache-Control "max-age=3600"; }
                location /stale/ { add_header Cache-Control "max-age=0"; }
                location /swr/ { add_header Cache-Control "max-age=0, stale-while-revalidate=60, stale-if-error=600"; }
                location /sie/ { add_header Cache-Control "max-age=0, stale-if-error=600"; }
                location /forbidden/ { return 403; }
                location = /sentinel { return 204; }
        \(redirects)
                location = /cycle/a { return 301 /cycle/b; }
                location = /cycle/b { return 301 /cycle/a; }
        """
        return configuration
    }

    /// `GET path` on 127.0.0.1:`port`; returns the status code.
    static func get(port: Int, path: String) throws -> Int {
        try RawHTTP.getBlocking(port: port, path).status
    }
}
