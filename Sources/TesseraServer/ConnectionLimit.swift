#if Serving
import Foundation
import NIOCore
import Synchronization

/// `--max-connections`: counts the open connections of one listener, shared by every event loop, and
/// refuses the connections above the limit as they are accepted.
///
/// A refused connection is closed in its channel's initializer: before it is registered with its event
/// loop, so not a byte of it is read and no task is started for it, and with `SO_LINGER` 0, so the client
/// gets a reset at once (its `connect` has succeeded, the kernel accepted it; its first read fails) and
/// the server keeps no `TIME_WAIT` entry for it. Hummingbird's `MaximumAvailableConnections` instead stops
/// accepting at the limit, which leaves new clients waiting in the listen backlog without an answer.
final class ConnectionLimit: Sendable {
    /// Connections that may be open at once.
    let maximum: Int
    private let open = Atomic<Int>(0)

    /// A count of open connections admitting at most `maximum` at once.
    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Connections counted as open now.
    var openConnections: Int { open.load(ordering: .relaxed) }

    /// Counts `channel` as open until it closes and returns `true`, or, when `maximum` connections are
    /// already open, closes it and returns `false`.
    func admit(_ channel: any Channel) -> Bool {
        guard open.add(1, ordering: .relaxed).newValue <= maximum else {
            open.subtract(1, ordering: .relaxed)
            _ = (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))   // done at once: on the channel's loop
            channel.close(promise: nil)
            return false
        }
        channel.closeFuture.whenComplete { _ in self.open.subtract(1, ordering: .relaxed) }
        return true
    }
}
#endif
