import Foundation
import Synchronization
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport

/// A clock the test moves by hand (for ages, time-to-live and HTTP freshness; nothing waits on it).
final class TestClock: Sendable {
    private let date = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
    var now: Date { date.withLock { $0 } }
    func advance(by seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var closure: @Sendable () -> Date { { [self] in now } }
}

/// A manager over the shared HTTP loader with a disk cache in a fresh directory (unless `disk` is false).
func makeManager(directory: URL? = nil, disk: Bool = true, clock: TestClock = TestClock(), loader: any DataLoading = HTTPDataLoader.shared,
                 _ tweak: (inout ImageManager.Configuration) -> Void = { _ in }) throws -> ImageManager {
    var configuration = ImageManager.Configuration(disk: nil, diskSweepInterval: nil)
    if disk { configuration.disk = DiskCache.Configuration(directory: try directory ?? temporaryDirectory("fetch")) }
    tweak(&configuration)
    return try ImageManager(configuration: configuration, loader: loader, now: clock.closure)
}

/// Wraps a real loader to record how each load ended (the loader under test stays the real one).
final class RecordingLoader: DataLoading {
    enum Outcome: Sendable, Equatable { case success(Int), cancelled, failed(String) }
    let base: any DataLoading
    private let outcomes = Mutex<[Outcome]>([])
    private let requests = Mutex<[LoadRequest]>([])

    init(_ base: any DataLoading = HTTPDataLoader.shared) { self.base = base }

    var recorded: [Outcome] { outcomes.withLock { $0 } }
    var loads: [LoadRequest] { requests.withLock { $0 } }

    func load(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
        requests.withLock { $0.append(request) }
        do {
            let response = try await base.load(request, progress: progress)
            outcomes.withLock { $0.append(.success(response.statusCode)) }
            return response
        } catch is CancellationError {
            outcomes.withLock { $0.append(.cancelled) }
            throw CancellationError()
        } catch {
            outcomes.withLock { $0.append(.failed("\(error)")) }
            throw error
        }
    }
}

/// The ``FetchFailure`` inside `error`, if it is one.
func fetchFailure(_ error: any Error) -> FetchFailure? {
    guard let error = error as? TesseraError, case .fetching(let failure) = error.reason else { return nil }
    return failure
}
