import ArgumentParser
import CHeapControl
import Foundation
import Logging
import Prometheus
@_spi(Internal) import TesseraImaging
import TesseraServer

/// `tessera serve --root DIR [--listen 127.0.0.1:8080] [--preset NAME:WxH:MODE …] [--config FILE]`: the image
/// service (docs/SERVING.md). Every setting is declared once in `ServeSettings.declarations` and read by
/// `ServeSettingsReader`: flags over `TESSERA_…` variables over the config file. ArgumentParser gives the
/// command its name and help; the settings' flags reach the reader as they were typed.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve images from a directory in named presets and ad-hoc sizes, with the cache built in.",
        discussion: helpText(ServeSettings.declarations)
    )

    /// `--check-config`: read and check the configuration, print it, and exit instead of serving.
    @Flag(name: .customLong("check-config"),
          help: "Read the configuration as the server would, print the effective settings (secrets masked) and exit: 0 when the server can start with it, 1 naming every problem.")
    var checkConfig = false

    /// The settings as typed (`--root DIR --listen :8080 …`), read by `ServeSettingsReader`.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Settings: see the list below.", valueName: "setting"))
    var settings: [String] = []

    func run() async throws {
        if checkConfig {
            let report = Self.checkReport(arguments: settings, environment: ProcessInfo.processInfo.environment)
            FileHandle.standardOutput.write(Data(report.settings.utf8))
            guard report.problems.isEmpty else {
                FileHandle.standardError.write(Data(report.problems.utf8))
                throw ExitCode.failure
            }
            return
        }
        let settings = try readSettings(environment: ProcessInfo.processInfo.environment)
        let configuration = settings.server
        if settings.logFormat == .json {
            LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
        }
        var logger = Logger(label: "tessera.serve")
        if let level = settings.logLevel { logger.logLevel = level }
        var server = try ImageServer(configuration: configuration, logger: logger)
        if let file = settings.galleryReport { server.addGalleryTestMode(reportFile: file) }
        let trimming = Task.detached(priority: .background) { [registry = server.registry] in await Self.returnFreedHeapPages(reportingTo: registry) }
        defer { trimming.cancel() }
        try await server.run(onListening: { port in
            Self.announce("listening on", address: configuration.listen, port: port)
        }, onMetricsListening: { port in
            Self.announce("metrics on", address: configuration.metricsListen ?? "", port: port)
        })
    }

    /// The log formats of `--log-format`.
    typealias LogFormat = ServeSettings.LogFormat

    /// `name` as a log format (`nil`: text).
    static func logFormat(_ name: String?) throws -> LogFormat {
        guard let name else { return .text }
        do throws(SettingValueFailure) {
            return try LogFormat(settingText: name)
        } catch {
            throw ValidationError("log format '\(name)' \(error.reason)")
        }
    }

    /// Every setting from the flags, `environment` and the config file, checked: a malformed value or an
    /// impossible configuration is a `ValidationError` naming the setting and the value.
    func readSettings(environment: [String: String]) throws -> ServeSettings {
        let settings: ServeSettings
        do throws(ServeSettingError) {
            settings = try ServeSettingsReader().read(arguments: self.settings, environment: environment)
        } catch {
            throw ValidationError(error.description)
        }
        do throws(ServerConfigurationError) { try settings.server.validate() } catch { throw ValidationError(error.description) }
        return settings
    }

    /// The service's configuration from the flags, `environment` and the config file (``readSettings(environment:)``).
    func makeConfiguration(environment: [String: String]) throws -> ServerConfiguration {
        try readSettings(environment: environment).server
    }

    /// Prints `tessera serve: WHAT HOST:PORT` on standard output, with the host of `address` and the port
    /// bound (so `:0` shows the port the system chose); tests and scripts wait for these lines.
    static func announce(_ what: String, address: String, port: Int) {
        let line = "tessera serve: \(what) \(address.split(separator: ":").dropLast().joined(separator: ":")):\(port)\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    /// glibc gives freed heap memory back to the system only from the top of each arena, so the free
    /// pages a server's churn leaves inside its arenas (evicted responses, a decode's row buffers, one
    /// arena per thread that allocated) stay resident: RSS creeps up long after the caches are full
    /// (docs/RELIABILITY.md, soak). `malloc_trim(0)` returns every whole free page inside the arenas;
    /// every 10 s it costs a few milliseconds of one thread, like jemalloc's background purging.
    /// Each round also sets three gauges from glibc's statistics (mallinfo2), which tell live memory from
    /// what the allocator keeps: `tessera_heap_in_use_bytes` (allocated, not freed),
    /// `tessera_heap_free_bytes` (free inside the arenas, before the trim) and `tessera_heap_mapped_bytes`
    /// (allocations with a mapping of their own, part of in use).
    static func returnFreedHeapPages(reportingTo registry: PrometheusCollectorRegistry) async {
        func gauge(_ name: String, _ help: String) -> Gauge {
            registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "tessera", metricName: name, unitName: "bytes", helpText: help))
        }
        let inUse = gauge("heap_in_use", "Heap bytes allocated and not freed (glibc mallinfo2)")
        let free = gauge("heap_free", "Free bytes inside the heap arenas before the periodic trim")
        let mapped = gauge("heap_mapped", "Heap bytes in allocations with a mapping of their own")
        func record() {
            let now = tessera_heap_statistics_now()
            inUse.set(Double(now.inUse))
            free.set(Double(now.freeInArenas))
            mapped.set(Double(now.mapped))
        }
        record()
        while (try? await Task.sleep(for: .seconds(10))) != nil {
            record()
            _ = tessera_heap_trim()
        }
    }
}
