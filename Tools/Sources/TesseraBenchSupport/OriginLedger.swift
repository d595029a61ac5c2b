import TesseraImaging
@_spi(Internal) import TesseraImaging

/// What an ``Origin`` serves and what it has seen: resources per path, request counts, the arrival
/// log and the tasks waiting for arrivals. Shared by the origin and its route.
final class OriginLedger: Sendable {
    private struct State {
        var resources: [String: Origin.Resource] = [:]
        var gates: [OriginGate] = []
        var counts: [String: Int] = [:]
        var log: [Origin.Arrival] = []
        var waiters: [(path: String, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    let latency: Duration
    let logsArrivals: Bool
    let generator: Origin.Generator?
    private let state = LockedValue(State())

    init(latency: Duration, logsArrivals: Bool, generator: Origin.Generator?) {
        self.latency = latency
        self.logsArrivals = logsArrivals
        self.generator = generator
    }

    func set(_ path: String, _ resource: Origin.Resource) {
        state.withLock { state in
            state.gates += [resource.gate, resource.stall].compactMap { $0 }
            state.resources[path] = resource
        }
    }

    func openGates() {
        for gate in state.withLock({ $0.gates }) { gate.open() }
    }

    func count(_ path: String) -> Int { state.withLock { $0.counts[path, default: 0] } }

    func requests(under prefix: String) -> [String: Int] {
        state.withLock { $0.counts.filter { $0.key.hasPrefix(prefix) } }
    }

    var arrivals: [Origin.Arrival] { state.withLock { $0.log } }

    func waitForArrivals(_ path: String, count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.counts[path, default: 0] >= count { return true }
                state.waiters.append((path, count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Counts and logs `arrival`, resumes the waiters it satisfies, and returns the resource that
    /// answers it: the one set for its path, a generated one, or the one set for `"*"`.
    func arrive(_ arrival: Origin.Arrival) async -> Origin.Resource? {
        let (ready, resource, fallback) = state.withLock { state in
            state.counts[arrival.path, default: 0] += 1
            if logsArrivals { state.log.append(arrival) }
            let total = state.counts[arrival.path, default: 0]
            let isReady = { (waiter: (path: String, count: Int, continuation: CheckedContinuation<Void, Never>)) in
                waiter.path == arrival.path && total >= waiter.count
            }
            let ready = state.waiters.filter(isReady).map(\.continuation)
            state.waiters.removeAll(where: isReady)
            return (ready, state.resources[arrival.path], state.resources["*"])
        }
        for continuation in ready { continuation.resume() }
        if let resource { return resource }
        if let generator, let generated = await generator(arrival.path) { return generated }
        return fallback
    }
}
