import TesseraImaging
import Foundation

/// The bookkeeping of ``ImageCache``'s in-flight requests, guarded by its mutex.
struct RequestState: ~Copyable {
    /// One caller waiting for one entity in one format.
    struct Waiter {
        let entity: any ImageEntity
        let format: ImageFormat
        let continuation: CheckedContinuation<TableImage, any Error>
    }

    /// One source URL being loaded for its waiters.
    struct Pending {
        /// Distinguishes this load from a later one for the same URL.
        let id: Int
        let task: Task<Void, Never>
        var waiters: [Int: Waiter] = [:]
        /// Set once the source is decoded: from then on the request can no longer be abandoned.
        var sourceArrived = false
    }

    /// A request started with ``ImageCache/loadImage(for:format:completion:)``, registered before that
    /// method returns so that ``ImageCache/cancelRequest(for:format:)`` finds it even before it runs.
    struct Ticket {
        let entityID: UUID
        let format: String
        let task: Task<Void, Never>
    }

    var requests: [URL: Pending] = [:]
    var waiterURLs: [Int: URL] = [:]
    var tickets: [Int: Ticket] = [:]
    private var nextWaiterID = 0

    mutating func makeWaiterID() -> Int {
        nextWaiterID += 1
        return nextWaiterID
    }
}
