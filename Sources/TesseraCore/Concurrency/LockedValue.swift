#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`, with the same `withLock` shape as
/// `Synchronization.Mutex`.
///
/// Why not `Mutex`: on Linux its contended path hands the lock over inside the kernel
/// (`FUTEX_LOCK_PI`), which ThreadSanitizer cannot see, so `swift test --sanitize=thread` reports
/// "Swift access race" on any state guarded by a contended `Mutex` — a false positive that a
/// 10-line program reproduces (see docs/RELIABILITY.md). TSan intercepts `pthread_mutex_*`, so with
/// this lock the sanitizer checks the locking for real instead of needing suppressions. Speed is
/// the same for Tessera's short critical sections (both are a futex underneath).
///
/// `@unchecked Sendable` is safe because `value` is only ever touched inside `withLock`, between
/// `pthread_mutex_lock` and `pthread_mutex_unlock` on the mutex this object owns.
@_spi(Internal) public final class LockedValue<Value: ~Copyable>: @unchecked Sendable {
    // Internal but inlinable, so that `withLock` is specialised into the layers and tools that call
    // it (a generic call across modules otherwise costs a table hit about as much as the hit itself).
    // Unchecked: every access is inside `withLock`, so the mutex already makes it exclusive, and the
    // run-time exclusivity check each access would otherwise make is redundant.
    @exclusivity(unchecked) @usableFromInline var value: Value
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Wraps `value`.
    public init(_ value: consuming Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Not reentrant.
    @inlinable
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
