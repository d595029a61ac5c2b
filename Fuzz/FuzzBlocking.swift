import Foundation

/// Runs `body` to completion on the global executor and blocks the calling (libFuzzer's) thread until
/// it has finished: the fuzzing entry point is synchronous, the disk cache's API is async.
func blocking(_ body: @escaping @Sendable () async -> Void) {
    let semaphore = DispatchSemaphore(value: 0)
    Task.detached {
        await body()
        semaphore.signal()
    }
    semaphore.wait()
}
