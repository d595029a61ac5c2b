import Foundation
import TesseraImaging

/// What ``ImageCache`` keeps about its requests besides the pool of loads: the tickets of
/// ``ImageCache/loadImage(for:format:completion:)``, guarded by its lock.
struct RequestState: ~Copyable {
    /// What one caller waits for: one entity in one format (a request of the cache's pool of loads).
    struct Waiter: Sendable {
        let entity: any ImageEntity
        let format: ImageFormat
        /// The level the caller wants the image at (``FetchPriority``).
        var priority: FetchPriority = .normal
    }

    /// A request started with ``ImageCache/loadImage(for:format:completion:)``, registered before that
    /// method returns so that ``ImageCache/cancelRequest(for:format:)`` finds it even before it runs.
    struct Ticket {
        let entityID: UUID
        let format: String
        let task: Task<Void, Never>
    }

    var tickets: [Int: Ticket] = [:]
    private var lastTicketID = 0

    /// A fresh ticket id (increasing, never reused).
    mutating func makeTicketID() -> Int {
        lastTicketID += 1
        return lastTicketID
    }
}
