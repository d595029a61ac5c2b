import Foundation
import Logging
@_spi(Internal) import TesseraCore

/// `tessera serve --log-format json`: one JSON object per line, for log collectors that parse JSON.
///
/// Each line has `timestamp` (ISO 8601, UTC, milliseconds: `2026-11-23T17:22:01.042Z`), `level`, `label`,
/// `message`, and every metadata key as a string field: the handler's own metadata, then its metadata
/// provider's, then the call's, a later one replacing an earlier one of the same key (as swift-log's
/// `StreamLogHandler` merges them). Nested values (lists, dictionaries) are written as their text. The
/// four fixed fields win over metadata keys of the same name. Keys are sorted, so a line is the same
/// whatever the order of its metadata; `JSONSerialization` escapes the values.
struct JSONLogHandler: LogHandler {
    /// Where the lines go: standard error (where the text format writes too), one `write` per line.
    static let standardError: @Sendable (Data) -> Void = { line in
        writeLock.withLock { _ in FileHandle.standardError.write(line) }
    }

    /// Keeps lines of concurrent loggers from interleaving.
    private static let writeLock = LockedValue(())

    /// The logger's label.
    let label: String
    /// Receives each line, newline included.
    let write: @Sendable (Data) -> Void
    /// The least level written.
    var logLevel: Logger.Level = .info
    /// Metadata added to every line of this handler.
    var metadata: Logger.Metadata = [:]
    /// Metadata added to every line at the time it is written.
    var metadataProvider: Logger.MetadataProvider?

    /// A handler for the logger `label`, writing to `write` (by default standard error).
    init(label: String, metadataProvider: Logger.MetadataProvider? = nil, write: @escaping @Sendable (Data) -> Void = Self.standardError) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    /// One metadata value of this handler.
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line (swift-log calls it only at `logLevel` or above). An error attached to the event is
    /// its `error` field, unless metadata has one.
    func log(event: LogEvent) {
        var fields: [String: String] = [:]
        if let error = event.error { fields["error"] = String(describing: error) }
        for (key, value) in metadata { fields[key] = Self.text(value) }
        if let provided = metadataProvider?.get() { for (key, value) in provided { fields[key] = Self.text(value) } }
        if let explicit = event.metadata { for (key, value) in explicit { fields[key] = Self.text(value) } }
        fields["timestamp"] = Self.timestamp(Date())
        fields["level"] = event.level.rawValue
        fields["label"] = label
        fields["message"] = event.message.description
        // Strings only: serialisation cannot fail.
        guard var data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        data.append(0x0A)
        write(data)
    }

    /// A metadata value as a string field: strings as they are, everything else as its description.
    static func text(_ value: Logger.Metadata.Value) -> String {
        if case .string(let string) = value { return string }
        return value.description
    }

    /// `date` in ISO 8601, UTC, with milliseconds.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds.quotient(1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int32, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return "\(digits(parts.tm_year + 1900, 4))-\(digits(parts.tm_mon + 1, 2))-\(digits(parts.tm_mday, 2))T"
            + "\(digits(parts.tm_hour, 2)):\(digits(parts.tm_min, 2)):\(digits(parts.tm_sec, 2))."
            + "\(digits(Int32(milliseconds.remainder(1000)), 3))Z"
    }
}

private extension Int64 {
    /// Division rounding towards minus infinity (dates before 1970 included).
    func quotient(_ divisor: Int64) -> Int64 { self >= 0 ? self / divisor : (self - divisor + 1) / divisor }
    /// The remainder of ``quotient(_:)``, from 0 to `divisor - 1`.
    func remainder(_ divisor: Int64) -> Int64 { self - quotient(divisor) * divisor }
}
