@_spi(Internal) import TesseraImaging
import Foundation

/// When and how often ``ImageManager`` loads a URL again after a failure (``ImageManager/Configuration/retry``).
///
/// Every load is a `GET`, so every load may be repeated. Retried: a `5xx` status, a timeout, a
/// connection refused or broken (``/TesseraCore/FetchFailure/connectionRefused(url:recently:)`` with
/// `recently: false`, ``/TesseraCore/FetchFailure/transport(url:message:)``). Never retried: `4xx`
/// (the answer would be the same), a body over the size limit, a redirect loop, an invalid URL,
/// cancellation, and a refusal the loader answered locally (`recently: true`: `HTTPDataLoader`'s
/// per-host breaker, which knows the host refused moments ago). The waits grow exponentially:
/// ``initialDelay``, then each one ``multiplier`` times the last, at most ``maximumDelay``. A retry keeps
/// the download's lane slot while it waits.
///
/// Off by default (``none``): a failure reaches the caller at once, and a page of URLs on a host that is
/// down fails in milliseconds. ``standard`` retries twice, after 0.5 s and 1 s.
///
/// ```swift
/// var configuration = ImageManager.Configuration()
/// configuration.retry = .standard
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// Loads after the first one, at most.
    public var maximumRetries: Int
    /// The wait before the first retry.
    public var initialDelay: Duration
    /// Each wait is the previous one times this.
    public var multiplier: Double
    /// The longest wait.
    public var maximumDelay: Duration
    /// How a wait is spent: `Task.sleep(for:)` by default. Tests give one that records the delay and
    /// returns at once. It must throw `CancellationError` when its task is cancelled. Not part of equality.
    public var sleep: @Sendable (Duration) async throws -> Void

    /// Creates a policy.
    public init(maximumRetries: Int, initialDelay: Duration = .milliseconds(500), multiplier: Double = 2,
                maximumDelay: Duration = .seconds(10),
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) {
        self.maximumRetries = max(0, maximumRetries)
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.sleep = sleep
    }

    /// No retries: the default.
    public static var none: RetryPolicy { RetryPolicy(maximumRetries: 0) }
    /// Two retries, after 0.5 s and 1 s.
    public static var standard: RetryPolicy { RetryPolicy(maximumRetries: 2) }

    /// The wait before retry `number` (1 for the first).
    public func delay(beforeRetry number: Int) -> Duration {
        let factor = pow(multiplier, Double(max(0, number - 1)))
        let seconds = min(initialDelay.timeInterval * factor, maximumDelay.timeInterval)
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    /// Runs `attempt`, and again after each failure `isRetryable` accepts, as often as ``maximumRetries``
    /// allows, waiting ``delay(beforeRetry:)`` through ``sleep`` before each retry (`willRetry` hears of it
    /// first). A wait that is cancelled ends with `cancelled()`; any other failure is the attempt's own.
    public func run<T, E: Error>(_ attempt: () async throws(E) -> T, retryingIf isRetryable: (E) -> Bool,
                                 cancelled: () -> E, willRetry: (E, Int, Duration) -> Void = { _, _, _ in }) async throws(E) -> T {
        var retries = 0
        while true {
            do {
                return try await attempt()
            } catch {
                guard retries < maximumRetries, isRetryable(error) else { throw error }
                retries += 1
                let wait = delay(beforeRetry: retries)
                willRetry(error, retries, wait)
                do { try await sleep(wait) } catch { throw cancelled() }
            }
        }
    }

    /// Whether a load that failed with `error` may be tried again.
    public static func isRetryable(_ error: any Error) -> Bool {
        guard let error = error as? TesseraError, case .fetching(let failure) = error.reason else { return false }
        switch failure {
        case .httpStatus(let code, _): return (500..<600).contains(code)
        case .timeout, .transport, .connectionRefused(_, recently: false): return true
        default: return false
        }
    }

    /// Equal when every number is: ``sleep`` is not compared.
    public static func == (lhs: RetryPolicy, rhs: RetryPolicy) -> Bool {
        lhs.maximumRetries == rhs.maximumRetries && lhs.initialDelay == rhs.initialDelay
            && lhs.multiplier == rhs.multiplier && lhs.maximumDelay == rhs.maximumDelay
    }

    /// Hashes the numbers (``sleep`` is left out, as in ``==(_:_:)``).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(maximumRetries)
        hasher.combine(initialDelay)
        hasher.combine(multiplier)
        hasher.combine(maximumDelay)
    }
}
