#if Serving
import ServiceLifecycle

extension ImageService: Service {
    /// Runs the service as a service of a swift-service-lifecycle `ServiceGroup`: waits until the group
    /// shuts down gracefully (or the task is cancelled), then calls ``shutdown()`` (the tables flushed,
    /// the loaders and object stores closed). The service answers from its creation on, not only while
    /// `run()` runs. Put it before the HTTP server that calls it in the group's list: a group shuts its
    /// services down in reverse order, so the server drains its requests first.
    public func run() async throws {
        try? await gracefulShutdown()   // throws only when cancelled: shut down then too
        await shutdown()
    }
}
#endif
