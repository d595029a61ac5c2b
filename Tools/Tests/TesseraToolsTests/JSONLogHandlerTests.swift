import Foundation
import Logging
import Synchronization
import Testing
@testable import TesseraCLI
import TesseraTestSupport

/// `tessera serve --log-format json`'s handler: every line parses back as one JSON object with the fixed
/// fields and the metadata as strings, whatever the message and values hold.
@Suite("JSON log lines")
struct JSONLogHandlerTests {
    /// The lines a handler wrote.
    final class Lines: Sendable {
        private let data = Mutex(Data())
        func append(_ line: Data) { data.withLock { $0.append(line) } }
        /// Each line parsed as a JSON object (a line that does not parse fails the test).
        func objects() throws -> [[String: Any]] {
            let text = String(decoding: data.withLock { $0 }, as: UTF8.self)
            #expect(text.hasSuffix("\n"))
            return try text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an object: \(line)")
            }
        }
    }

    static func logger(_ lines: Lines, label: String = "tessera.serve", provider: Logger.MetadataProvider? = nil) -> Logger {
        Logger(label: label) { label in JSONLogHandler(label: label, metadataProvider: provider, write: lines.append) }
    }

    @Test func oneObjectPerLineWithTheFixedFieldsAndMetadataAsStrings() throws {
        let lines = Lines()
        var logger = Self.logger(lines)
        logger[metadataKey: "server"] = "a"
        logger.info("request", metadata: ["path": "/v1/thumb/a b.jpg", "status": "200", "latency_ms": .stringConvertible(1.25)])
        logger.debug("not written at info")
        logger.warning("second", metadata: ["server": "b"])
        let objects = try lines.objects()
        try #require(objects.count == 2)
        #expect(objects[0]["level"] as? String == "info")
        #expect(objects[0]["label"] as? String == "tessera.serve")
        #expect(objects[0]["message"] as? String == "request")
        #expect(objects[0]["path"] as? String == "/v1/thumb/a b.jpg")
        #expect(objects[0]["status"] as? String == "200")
        #expect(objects[0]["latency_ms"] as? String == "1.25")
        #expect(objects[0]["server"] as? String == "a")
        #expect(objects[1]["level"] as? String == "warning")
        #expect(objects[1]["server"] as? String == "b")   // the call's metadata replaces the handler's
        for object in objects {
            #expect(Set(object.keys).isSuperset(of: ["timestamp", "level", "label", "message"]))
            #expect(object.values.allSatisfy { $0 is String })
        }
    }

    @Test func hostileTextIsEscapedAndNestedMetadataFlattened() throws {
        let lines = Lines()
        let logger = Self.logger(lines, label: "label \"quoted\"")
        let nasty = "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7} emoji 🧩 slash / {\"fake\":1}"
        logger.error("\(nasty)", metadata: [
            nasty: .string(nasty),
            "list": .array(["a", .stringConvertible(2)]),
            "dict": .dictionary(["k": "v"]),
            "message": "metadata cannot replace the message",
        ])
        let objects = try lines.objects()
        try #require(objects.count == 1)   // the newline inside stayed inside the line
        let object = objects[0]
        #expect(object["message"] as? String == nasty)
        #expect(object[nasty] as? String == nasty)
        #expect(object["label"] as? String == "label \"quoted\"")
        #expect(object["list"] as? String == #"["a", "2"]"#)
        #expect(object["dict"] as? String == #"["k": "v"]"#)
    }

    @Test func metadataProviderValuesAreFields() throws {
        let lines = Lines()
        let provider = Logger.MetadataProvider { ["trace": "t-1", "path": "overridden by the call"] }
        let logger = Self.logger(lines, provider: provider)
        logger.notice("with provider", metadata: ["path": "/x"])
        let object = try #require(try lines.objects().first)
        #expect(object["trace"] as? String == "t-1")
        #expect(object["path"] as? String == "/x")
    }

    @Test func timestampsAreUTCWithMilliseconds() {
        #expect(JSONLogHandler.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(JSONLogHandler.timestamp(Date(timeIntervalSince1970: 1_795_455_721.042_9)) == "2026-11-23T17:42:01.042Z")
        #expect(JSONLogHandler.timestamp(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(JSONLogHandler.timestamp(Date()).wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil)
    }

    @Test func logFormatNames() throws {
        #expect(try ServeCommand.logFormat(nil) == .text)
        #expect(try ServeCommand.logFormat("JSON") == .json)
        #expect(throws: (any Error).self) { try ServeCommand.logFormat("xml") }
    }
}
