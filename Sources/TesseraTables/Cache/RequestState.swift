import Foundation
import TesseraImaging

/// The bookkeeping of ``ImageCache``'s in-flight requests, guarded by its lock: one job per source URL
/// in the library's ``CoalescingJobs``, plus the tickets of ``ImageCache/loadImage(for:format:completion:)``.
struct RequestState: ~Copyable {
    /// One caller waiting for one entity in one format.
    struct Waiter {
        let entity: any ImageEntity
        let format: ImageFormat
        let continuation: CheckedContinuation<TableImage, any Error>
    }

    /// A request started with ``ImageCache/loadImage(for:format:completion:)``, registered before that
    /// method returns so that ``ImageCache/cancelRequest(for:format:)`` finds it even before it runs.
    struct Ticket {
        let entityID: UUID
        let format: String
        let task: Task<Void, Never>
    }

    /// The jobs by source URL. A job is committed once its source is decoded: from then on it serves
    /// every waiter, including late joiners, and is no longer abandoned.
    var jobs = CoalescingJobs<URL, Waiter, Void>()
    var tickets: [Int: Ticket] = [:]

    mutating func makeWaiterID() -> Int { jobs.makeID() }
}
