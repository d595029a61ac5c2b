@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// Linux's stand-in for a memory warning: polls cgroup v2 `memory.events` and pressure-stall information
/// and trims a ``MemoryCaching`` cache when they show pressure (see ``MemoryPressureSample`` for the
/// files and ``MemoryPressureSample/level(after:someThreshold:fullThreshold:)`` for the rule).
///
/// Polling, not `poll(2)` triggers: PSI triggers need write access to the pressure file and a
/// dedicated thread blocked in `poll`, and cgroup files are often read-only inside containers, whereas
/// reading two small files once a second costs nothing measurable. Missing files (no cgroup v2, no PSI
/// in the kernel) simply read as "no pressure".
///
/// `ImageManager.shared` starts one on its memory cache; for a manager of your own:
///
/// ```swift
/// let manager = try ImageManager(configuration: ImageManager.Configuration(), loader: HTTPDataLoader.shared)
/// let watcher = MemoryPressureWatcher(cache: manager.memoryCache!)   // a manager made so has one
/// watcher.start()          // polls every second until stop() or the watcher is dropped: keep it
/// ```
public final class MemoryPressureWatcher: Sendable {
    /// Where to read and how to react.
    public struct Configuration: Sendable, Hashable {
        /// The `memory.events` file, or `nil` to skip it.
        public var eventsPath: String?
        /// The pressure-stall file, or `nil` to skip it.
        public var pressurePath: String?
        /// Time between two polls.
        public var interval: Duration
        /// `some avg10` percentage from which pressure is moderate.
        public var someThreshold: Double
        /// `full avg10` percentage from which pressure is critical.
        public var fullThreshold: Double
        /// Under moderate pressure the cache is trimmed to this fraction of its current cost.
        public var moderateTrimFraction: Double

        /// Creates a configuration; the paths default to ``defaultPaths()``.
        public init(eventsPath: String? = MemoryPressureWatcher.defaultPaths().events,
                    pressurePath: String? = MemoryPressureWatcher.defaultPaths().pressure,
                    interval: Duration = .seconds(1), someThreshold: Double = 10, fullThreshold: Double = 5,
                    moderateTrimFraction: Double = 0.5) {
            self.eventsPath = eventsPath
            self.pressurePath = pressurePath
            self.interval = interval
            self.someThreshold = someThreshold
            self.fullThreshold = fullThreshold
            self.moderateTrimFraction = moderateTrimFraction
        }
    }

    /// The watched cache.
    public let cache: any MemoryCaching
    /// The configuration.
    public let configuration: Configuration
    private let state = LockedValue<(previous: MemoryPressureSample?, task: Task<Void, Never>?)>((nil, nil))

    /// Creates a watcher; nothing is read before ``check()`` or ``start()``.
    public init(cache: any MemoryCaching, configuration: Configuration = Configuration()) {
        self.cache = cache
        self.configuration = configuration
    }

    deinit { state.withLock { $0.task?.cancel() } }

    /// The files of the cgroup this process belongs to (from `/proc/self/cgroup`, cgroup v2 `0::/path`),
    /// falling back to the machine-wide `/proc/pressure/memory`; `nil` where a file does not exist.
    /// Both are Linux files: elsewhere both are `nil`, the watcher sees no pressure, and
    /// the cache is trimmed only by its own limits or by your calls to `trim(toCost:)`.
    public static func defaultPaths() -> (events: String?, pressure: String?) {
        #if !os(Linux)
        return (nil, nil)
        #else
        var group = "/sys/fs/cgroup"
        if let text = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
           let line = text.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("0::") }) {
            let path = line.dropFirst(3)
            if path != "/" { group += path }
        }
        func existing(_ path: String) -> String? { FileManager.default.isReadableFile(atPath: path) ? path : nil }
        let events = existing(group + "/memory.events") ?? existing("/sys/fs/cgroup/memory.events")
        let pressure = existing(group + "/memory.pressure") ?? existing("/proc/pressure/memory")
        return (events, pressure)
        #endif
    }

    /// Reads the files once, trims the cache according to the pressure seen, and returns the level.
    @discardableResult
    public func check() -> MemoryPressureLevel {
        let sample = MemoryPressureSample(eventsText: Self.read(configuration.eventsPath),
                                          pressureText: Self.read(configuration.pressurePath))
        let previous = state.withLock { state in
            defer { state.previous = sample }
            return state.previous
        }
        let level = sample.level(after: previous, someThreshold: configuration.someThreshold,
                                 fullThreshold: configuration.fullThreshold)
        switch level {
        case .normal: break
        case .moderate: cache.trim(toCost: Int(Double(cache.totalCost) * configuration.moderateTrimFraction))
        case .critical: cache.removeAll()
        }
        return level
    }

    /// Starts polling every ``Configuration/interval`` on a background task (a second call does nothing).
    public func start() {
        state.withLock { state in
            guard state.task == nil else { return }
            let interval = configuration.interval
            state.task = Task.detached { [weak self] in
                while !Task.isCancelled {
                    // Hold the watcher only while checking, so that dropping it ends the loop.
                    do {
                        guard let watcher = self else { return }
                        watcher.check()
                    }
                    try? await Task.sleep(for: interval)
                }
            }
        }
    }

    /// Stops polling.
    public func stop() {
        state.withLock { state in
            state.task?.cancel()
            state.task = nil
        }
    }

    private static func read(_ path: String?) -> String? {
        path.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
    }
}
