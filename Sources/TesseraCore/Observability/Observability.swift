import CoreMetrics
import Logging
import Metrics

/// Where a Tessera component reports what it does: a swift-log `Logger` for events and a swift-metrics
/// factory for counters and timers (docs/OBSERVABILITY.md lists both). Every component's configuration
/// carries one.
///
/// ```swift
/// import Logging
/// import Tessera
///
/// var configuration = ImageManager.Configuration()
/// configuration.observability = Observability(logger: Logger(label: "app.images"))
/// ```
///
/// The default reports nothing: a logger whose handler drops every message
/// (`SwiftLogNoOpLogHandler`), and metrics on the global `MetricsSystem` factory, a no-op until the
/// application bootstraps a backend. Components never log on a cache hit.
///
/// ## Equality
/// Two values are always equal and hash alike: where events go is not part of how a component
/// behaves, and neither `Logger` nor `any MetricsFactory` is `Hashable`. So the configurations that
/// hold one stay `Hashable`, and compare by their behaviour alone.
public struct Observability: Sendable, Hashable {
    /// Receives the component's events (downloads, repairs, evictions…), at the levels the
    /// component documents.
    public var logger: Logger
    /// Makes the component's counters and timers; `nil` uses the global `MetricsSystem.factory`.
    /// Tests and applications that keep several registries pass their own factory instead of
    /// bootstrapping the process-wide one.
    public var metricsFactory: (any MetricsFactory)?

    /// Creates a destination for logs and metrics; the defaults report nothing (see the type).
    public init(logger: Logger = Observability.silentLogger, metricsFactory: (any MetricsFactory)? = nil) {
        self.logger = logger
        self.metricsFactory = metricsFactory
    }

    /// The default: no logging, metrics on the global factory (a no-op unless bootstrapped).
    public static var `default`: Observability { Observability() }

    /// A logger that drops every message, labelled `tessera`.
    public static var silentLogger: Logger { Logger(label: "tessera", factory: { _ in SwiftLogNoOpLogHandler() }) }

    /// Always `true` (see "Equality").
    public static func == (lhs: Observability, rhs: Observability) -> Bool { true }

    /// Hashes nothing (see "Equality").
    public func hash(into hasher: inout Hasher) {}

    /// A counter named `label` on this value's factory.
    package func counter(_ label: String, dimensions: [(String, String)] = []) -> Counter {
        Counter(label: label, dimensions: dimensions, factory: factory)
    }

    /// A timer named `label` on this value's factory, reporting in nanoseconds.
    package func timer(_ label: String, dimensions: [(String, String)] = []) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory)
    }

    private var factory: any MetricsFactory { metricsFactory ?? MetricsSystem.factory }
}

extension CoreMetrics.Timer {
    /// Records the time since `start` (on the continuous clock).
    package func recordSince(_ start: ContinuousClock.Instant) {
        let elapsed = (ContinuousClock.now - start).components
        recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
    }

    /// Runs `body` and records how long it took, also when it throws.
    package func time<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let start = ContinuousClock.now
        defer { recordSince(start) }
        return try body()
    }
}
