/// A request started with a callback API (the `loadImage(…completion:)` methods of the caches): the
/// request is registered before the method returns, so cancelling the ticket — or the cache's own
/// `cancelRequest` — can never be lost to the request not having started yet. The completion then
/// receives `TesseraError(.cancelled)`.
public struct RequestTicket: Sendable {
    let task: Task<Void, Never>

    /// Wraps the task that runs the request and calls its completion.
    package init(task: Task<Void, Never>) {
        self.task = task
    }

    /// Cancels the request. Other requesters of the same image are not affected.
    public func cancel() { task.cancel() }

    /// Waits until the completion handler has run.
    public func wait() async { await task.value }
}
