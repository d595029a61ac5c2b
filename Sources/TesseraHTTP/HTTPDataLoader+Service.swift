#if HTTPLoader
import ServiceLifecycle

extension HTTPDataLoader: Service {
    /// Runs the loader as a service of a swift-service-lifecycle `ServiceGroup`: waits until the group
    /// shuts down gracefully (or the task is cancelled), then calls ``shutdown()``, so the loader's loads
    /// fail from then on and a client it owns is shut down. Loads work from the loader's creation on, not
    /// only while `run()` runs. Put the loader before the services that load through it in the group's
    /// list: a group shuts its services down in reverse order, so they stop before the loader does.
    public func run() async throws {
        try? await gracefulShutdown()   // throws only when cancelled: shut down then too
        try await shutdown()
    }
}
#endif
