import TesseraImaging
import TesseraTables
/// A request made with ``ImageManager/loadImage(for:size:mode:priority:progress:completion:)``; cancel it
/// when the image is no longer wanted (the completion then receives `CancellationError`).
public struct FetchTicket: Sendable {
    let task: Task<Void, Never>

    /// Cancels the request. Other requesters of the same URL are not affected.
    public func cancel() { task.cancel() }

    /// Waits until the completion handler has run.
    public func wait() async { await task.value }
}
