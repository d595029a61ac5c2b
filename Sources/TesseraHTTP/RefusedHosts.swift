#if HTTPLoader
@_spi(Internal) import TesseraImaging

/// A per-host circuit breaker: after a host refuses a connection (or cannot be reached), loads for it
/// fail at once for ``cooldown`` instead of trying again; the first load after that tries the host
/// again, and a success forgets the failure.
///
/// Hosts are keyed by `scheme://host:port`, so one closed port does not block the rest of a server.
final class RefusedHosts: Sendable {
    /// How long a refused host is not tried; `.zero` turns the breaker off.
    let cooldown: Duration
    private let until = LockedValue<[String: ContinuousClock.Instant]>([:])

    init(cooldown: Duration) {
        self.cooldown = cooldown
    }

    /// Whether `host` refused within the cooldown (loads for it should fail without trying).
    func isOpen(_ host: String, now: ContinuousClock.Instant = .now) -> Bool {
        guard cooldown > .zero else { return false }
        return until.withLock { table in
            guard let end = table[host] else { return false }
            if now < end { return true }
            table[host] = nil
            return false
        }
    }

    /// `host` refused a connection: refuse it locally until the cooldown has passed.
    func refused(_ host: String, now: ContinuousClock.Instant = .now) {
        guard cooldown > .zero else { return }
        until.withLock { $0[host] = now + cooldown }
    }

    /// `host` answered: forget any earlier refusal.
    func answered(_ host: String) {
        guard cooldown > .zero else { return }
        _ = until.withLock { $0.removeValue(forKey: host) }
    }
}
#endif
