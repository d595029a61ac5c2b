import Foundation
import Logging
import Synchronization
@_spi(Internal) import TesseraImaging
import TesseraTestSupport

/// A swift-log handler that keeps every message it receives (level, text, metadata) for a test to read.
final class CapturedLog: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let entries = Mutex<[Entry]>([])

    /// Everything logged so far, in order.
    var all: [Entry] { entries.withLock { $0 } }

    /// The messages logged at `level`.
    func messages(at level: Logger.Level) -> [String] { all.filter { $0.level == level }.map(\.message) }

    /// A logger at `trace` level that writes here.
    var logger: Logger {
        var logger = Logger(label: "tessera.test") { _ in Handler(log: self) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(Entry(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
