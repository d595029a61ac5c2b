import TesseraImaging
import TesseraTables
import Foundation

extension ImageManager {
    /// Everything an ``ImageManager`` can be told, as one plain value.
    public struct Configuration: Sendable, Hashable {
        /// Memory cache limits (bytes, count, optional time-to-live).
        public var memory: MemoryCache.Configuration
        /// Disk cache directory and limits, or `nil` for no disk cache. By default a disk cache in
        /// ``defaultDiskDirectory`` with ``DiskCache/Configuration``'s default limits: 512 MiB, entries
        /// dropped 30 days after they were downloaded or last revalidated.
        public var disk: DiskCache.Configuration?
        /// How often the disk cache is swept for its limits in the background, or `nil` for only on insert.
        public var diskSweepInterval: Duration?
        /// Urgent downloads that may run at once (the fast lane's width; the slow lane runs one).
        public var maximumConcurrentDownloads: Int
        /// Decodes that may run at once, across all jobs (downloads do not count). The default is the
        /// number of active cores.
        public var maximumConcurrentDecodes: Int
        /// Two prioritized lanes, or one first-in-first-out queue (the benchmark's baseline).
        @_spi(Internal) public var scheduling: FetchScheduling = .prioritized
        /// Time limit of one load: connection, redirects, head and body.
        public var requestTimeout: Duration
        /// The largest body accepted, in bytes.
        public var maximumResponseBytes: Int
        /// How long a response that gives no `Cache-Control: max-age` nor `Expires` stays fresh.
        public var defaultMaxAge: Duration
        /// When a failed load is tried again: not at all by default (``RetryPolicy``).
        public var retry: RetryPolicy
        /// Answer from the disk cache only, fresh or stale; a URL not cached fails with
        /// ``/TesseraCore/FetchFailure/offlineMiss(url:)``.
        public var offline: Bool
        /// HTTP headers sent with every load of this manager (for example an API key or `Authorization`);
        /// a request's own ``ImageRequest/headers`` override them, name by name (case-insensitively).
        /// They are the manager's identity: see ``ImageManager``, "Credentials and caching".
        public var headers: [String: String]
        /// Image tables for URL requests of a fixed output size (``ImageManager/TableStorage``), or `nil`
        /// (the default) for none. Set it after creating the configuration:
        /// `configuration.tables = ImageManager.TableStorage(directory: dir)`. A qualifying request is stored
        /// in its table when decoded and answered from it later (``ImageResponse/CacheType/table``), also after
        /// a restart, without decoding or copying; the memory cache is still asked first. docs/LIBRARY.md,
        /// "Tables for URL requests", says which requests qualify and how the tables stay right.
        public var tables: TableStorage? = nil
        /// Where the manager's logs and metrics go (docs/OBSERVABILITY.md); nothing by default. Not part
        /// of equality (see `Observability`).
        public var observability: Observability

        /// Creates a configuration. The defaults: 256 MiB / 1000 images in memory, a disk cache of 512 MiB
        /// in ``defaultDiskDirectory`` (`$XDG_CACHE_HOME/tessera/images`, else `~/.cache/tessera/images`;
        /// pass `disk: nil` for none), a sweep every 5 minutes, 4 urgent downloads on the urgent lane, one
        /// decode per core, 30 s per load, 64 MiB per body, no retries, one day of default freshness,
        /// online, no extra headers, no logs or metrics.
        public init(memory: MemoryCache.Configuration = MemoryCache.Configuration(),
                    disk: DiskCache.Configuration? = DiskCache.Configuration(directory: Configuration.defaultDiskDirectory),
                    diskSweepInterval: Duration? = .seconds(300), maximumConcurrentDownloads: Int = 4,
                    maximumConcurrentDecodes: Int = ProcessInfo.processInfo.activeProcessorCount,
                    requestTimeout: Duration = .seconds(30),
                    maximumResponseBytes: Int = 64 << 20, retry: RetryPolicy = .none, defaultMaxAge: Duration = .seconds(24 * 3600),
                    offline: Bool = false, headers: [String: String] = [:], observability: Observability = .default) {
            self.memory = memory
            self.disk = disk
            self.diskSweepInterval = diskSweepInterval
            self.maximumConcurrentDownloads = maximumConcurrentDownloads
            self.maximumConcurrentDecodes = max(1, maximumConcurrentDecodes)
            self.requestTimeout = requestTimeout
            self.maximumResponseBytes = maximumResponseBytes
            self.retry = retry
            self.defaultMaxAge = defaultMaxAge
            self.offline = offline
            self.headers = headers
            self.observability = observability
        }

        /// The defaults (``init(memory:disk:diskSweepInterval:maximumConcurrentDownloads:maximumConcurrentDecodes:requestTimeout:maximumResponseBytes:retry:defaultMaxAge:offline:headers:observability:)``),
        /// disk cache in ``defaultDiskDirectory`` included.
        public static var standard: Configuration { Configuration() }

        /// `$XDG_CACHE_HOME/tessera/images`, or `~/.cache/tessera/images`.
        public static var defaultDiskDirectory: URL {
            let environment = ProcessInfo.processInfo.environment
            let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
            return base.appendingPathComponent("tessera/images", isDirectory: true)
        }
    }
}
