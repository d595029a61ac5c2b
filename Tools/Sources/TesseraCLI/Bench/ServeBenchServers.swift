import ArgumentParser
import Foundation
import TesseraBenchSupport

/// One server of `bench serve`, a child process leading its own process group on 127.0.0.1:`port`:
/// `tessera serve` (this very binary), thumbor (several processes) or nginx (master and workers).
final class BenchServer {
    /// `tessera`, `tessera-s3`, `tessera-baseline`, `thumbor`, `thumbor-result-storage` or `nginx`.
    let name: String
    let port: Int
    /// The request path of the thumbnail of a source at `relative` (a path under the root, percent-encoded).
    let target: (String) -> String
    private let launch: () throws -> TesseraBenchSupport.ChildProcess
    private var child: TesseraBenchSupport.ChildProcess?

    init(name: String, port: Int, target: @escaping (String) -> String, launch: @escaping () throws -> TesseraBenchSupport.ChildProcess) {
        self.name = name
        self.port = port
        self.target = target
        self.launch = launch
    }

    deinit { stop() }

    /// Starts the server and waits until it answers HTTP (any status) on its port, for at most 60 s.
    func start() throws {
        stop()
        let child = try launch()
        self.child = child
        let deadline = Date().addingTimeInterval(60)
        while (try? RawHTTP.getBlocking(port: port, "/healthz")) == nil {
            var status: Int32 = 0
            if waitpid(child.pid, &status, WNOHANG) == child.pid {
                self.child = nil
                throw ValidationError("\(name) exited before it listened on 127.0.0.1:\(port) (status \(status))")
            }
            guard Date() < deadline else { throw ValidationError("\(name) did not listen on 127.0.0.1:\(port) within 60 s") }
            usleep(50_000)
        }
    }

    /// Kills the server's whole process group and reaps the leader.
    func stop() {
        guard let child else { return }
        self.child = nil
        child.signalGroup(SIGKILL)
        _ = child.wait()
    }

    /// The sum of the peak resident set sizes (`VmHWM` in /proc/PID/status) of the server's processes now alive.
    func peakResidentBytes() -> Int {
        guard let child else { return 0 }
        return child.groupMembers().reduce(0) { sum, pid in
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                  let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return sum }
            return sum + kilobytes * 1024
        }
    }

    /// The processor time (user and system, seconds) the server's processes now alive have used so far
    /// (`utime` and `stime` in /proc/PID/stat, every thread included).
    func cpuSeconds() -> Double {
        guard let child else { return 0 }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return child.groupMembers().reduce(0) { sum, pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return sum }
            // After "(comm)": state is the first field, utime the 12th and stime the 13th.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return sum }
            return sum + (user + system) / ticks
        }
    }

    /// The round `load` makes, with the processor time the server's processes used meanwhile, per request
    /// (``ServeBenchLoad/Round/cpuMicrosecondsPerRequest``; left `nil` for a round of no requests).
    func measuringCPU(_ load: () throws -> ServeBenchLoad.Round) rethrows -> ServeBenchLoad.Round {
        let before = cpuSeconds()
        var round = try load()
        if round.requests > 0 { round.cpuMicrosecondsPerRequest = (cpuSeconds() - before) / Double(round.requests) * 1e6 }
        return round
    }

    /// Waits until the server has done the work a round sent it: a server slower than the load (thumbor)
    /// goes on answering the requests queued when wrk stopped, and the next server's round would share the
    /// cores with that backlog. Idle is at most one clock tick (10 ms at 100 Hz) of processor time in
    /// 200 ms, 5 % of a core; 60 s at most.
    func waitUntilIdle() {
        let deadline = Date().addingTimeInterval(60)
        let tick = 1 / Double(sysconf(Int32(_SC_CLK_TCK)))
        var last = cpuSeconds()
        while Date() < deadline {
            usleep(200_000)
            let now = cpuSeconds()
            if now - last <= tick * 1.5 { break }
            last = now
        }
    }

    /// Spawns `path` in a process group of its own, standard output and error into `log`, with this process's
    /// environment plus `environment`.
    static func spawn(_ path: String, _ arguments: [String], log: URL, environment: [String: String] = [:]) throws -> TesseraBenchSupport.ChildProcess {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw ValidationError("\(path) is not installed") }
        let fd = open(log.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ValidationError("cannot write \(log.path)") }
        defer { close(fd) }
        return try TesseraBenchSupport.ChildProcess.spawn(path, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                      standardOutput: fd, standardError: fd, newProcessGroup: true)
    }

    // MARK: The three servers

    /// `tessera serve` with one preset `thumb:SIZExSIZE:fill`, tables in `tables()` (a fresh directory on every
    /// start when the closure says so) of `tableCapacity` entries, per-request log lines off (`--log-level warning`); requests
    /// `/v1/thumb/PREFIX PATH` with `pathPrefix` (`@NAME/` for a named source given in `extraArguments`), and
    /// `environment` added to the child's.
    static func tessera(name: String = "tessera", binary: String, root: URL, size: Int, port: Int, sourceCheckInterval: Int,
                        tables: @escaping () -> URL, tableCapacity: Int, log: URL, pathPrefix: String = "", extraArguments: [String] = [],
                        environment: [String: String] = [:]) -> BenchServer {
        BenchServer(name: name, port: port, target: { "/v1/thumb/\(pathPrefix)\($0)" }) {
            try spawn(binary, ["serve", "--root", root.path, "--listen", "127.0.0.1:\(port)", "--preset", "thumb:\(size)x\(size):fill",
                               "--tables", tables().path, "--table-capacity", "\(tableCapacity)", "--log-level", "warning", "--source-check-interval", "\(sourceCheckInterval)"]
                               + extraArguments, log: log, environment: environment)
        }
    }

    /// thumbor with its file loader on `root`, unsafe URLs (loopback only), no original storage, JPEG quality
    /// 82 (tessera's default), `processes` processes. `resultStorage` nil: no result storage, as thumbor ships
    /// (its default `RESULT_STORAGE = None`: every request is decoded and resized again; thumbor's
    /// documentation puts a cache in front), named `thumbor`; otherwise its file result storage in
    /// `resultStorage()` (finished thumbnails kept as files), named `thumbor-result-storage`.
    /// Requests `/unsafe/SIZExSIZE/filters:format(jpeg)/PATH`: a centred crop to exactly SIZE×SIZE, JPEG.
    /// Its configuration and log are `scratch/NAME.conf` and `scratch/NAME.log`.
    static func thumbor(venv: URL, root: URL, size: Int, port: Int, processes: Int, scratch: URL,
                        resultStorage: (() -> URL)?) -> BenchServer {
        let name = resultStorage == nil ? "thumbor" : "thumbor-result-storage"
        return BenchServer(name: name, port: port, target: { "/unsafe/\(size)x\(size)/filters:format(jpeg)/\($0)" }) {
            let configuration = scratch.appendingPathComponent("\(name).conf")
            var settings = """
            LOADER = 'thumbor.loaders.file_loader'
            FILE_LOADER_ROOT_PATH = '\(root.path)'
            ALLOW_UNSAFE_URL = True
            STORAGE = 'thumbor.storages.no_storage'
            QUALITY = 82

            """
            if let resultStorage {
                settings += """
                RESULT_STORAGE = 'thumbor.result_storages.file_storage'
                RESULT_STORAGE_FILE_STORAGE_ROOT_PATH = '\(resultStorage().path)'
                RESULT_STORAGE_STORES_UNSAFE = True

                """
            }
            try settings.write(to: configuration, atomically: true, encoding: .utf8)
            return try spawn(venv.appendingPathComponent("bin/thumbor").path,
                             ["-i", "127.0.0.1", "-p", "\(port)", "-c", configuration.path, "-l", "warning",
                              "--processes", "\(processes)"], log: scratch.appendingPathComponent("\(name).log"))
        }
    }

    /// nginx serving the files under `prefix/www` (made from tessera's own responses), `workers` worker
    /// processes, sendfile, no access log, keep-alive connections never closed by count; with
    /// `fileCheckInterval` > 0 an open-file cache whose entries are checked again after that many seconds
    /// (tessera's `--source-check-interval`), otherwise every request opens its file.
    static func nginx(prefix: URL, port: Int, workers: Int, fileCheckInterval: Int, log: URL) -> BenchServer {
        BenchServer(name: "nginx", port: port, target: { "/\($0)" }) {
            var configuration = NginxConfiguration(prefix: prefix, port: port)
            configuration.workers = workers
            configuration.workerConnections = 4096
            configuration.http = """
                types { image/jpeg jpg; image/png png; image/webp webp; image/avif avif; }
                default_type application/octet-stream;
                access_log off;
                sendfile on;
                tcp_nopush on;
                keepalive_requests 10000000;
            """
            if fileCheckInterval > 0 {
                configuration.http += """

                    open_file_cache max=10000 inactive=600s;
                    open_file_cache_valid \(fileCheckInterval)s;
                """
            }
            configuration.server = "        location = /healthz { return 200; }"
            try configuration.write()
            return try spawn("/usr/sbin/nginx", ["-p", prefix.path, "-c", configuration.file.path], log: log)
        }
    }
}
