import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// Several processes on one tables directory, as an operator runs them: two `tessera serve` processes
/// (a blue/green restart, or one per NUMA node) and `tessera table ingest --serve-config` filling the
/// tables of a running server. What one process draws is a table hit in the others, with no decode.
@Suite("tessera serve, shared tables, release binary", .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ServeSharedTablesEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    /// The decodes `server` has made (`tessera_decode_seconds_count`).
    static func decodes(_ server: Server) async throws -> Double {
        PrometheusText.value(try await server.get("/metrics").text, "tessera_decode_seconds_count")
    }

    static func path(_ name: String) -> String { "/v1/thumb/" + name.replacingOccurrences(of: " ", with: "%20") }

    @Test("two servers on one --tables directory: a thumbnail one made is a table hit in the other, with no decode and the same bytes")
    func twoServers() async throws {
        let scratch = try ScratchDirectory("serve-shared-tables")
        let (root, names) = try ServeEndToEndTests.photoRoot(scratch)
        let arguments = ["--root", root, "--tables", scratch.path("tables")]
        let blue = try await Server(arguments, scratch: scratch)
        let green = try await Server(arguments, scratch: scratch)
        #expect(blue.port != green.port)

        let made = try await blue.get(Self.path(names[0]))
        #expect(made.status == 200 && made.headers["x-tessera-cache"] == "produced")
        let shared = try await green.get(Self.path(names[0]))
        #expect(shared.headers["x-tessera-cache"] == "table", "the other server's entry is read in place")
        #expect(try await Self.decodes(green) == 0)
        #expect(shared.body == made.body && shared.headers["etag"] == made.headers["etag"])

        // And the other way round, with both still running.
        #expect(try await green.get(Self.path(names[1])).headers["x-tessera-cache"] == "produced")
        #expect(try await blue.get(Self.path(names[1])).headers["x-tessera-cache"] == "table")
        #expect(try await Self.decodes(blue) == 1)

        #expect(await blue.terminate().status == 0)
        // The survivor goes on storing and reading after the other process ended.
        #expect(try await green.get(Self.path(names[2])).headers["x-tessera-cache"] == "produced")
        let verify = try await ReleaseCLI.run(["table", "verify", "--dir", scratch.path("tables")])
        #expect(verify.status == 0, "\(verify)")
        #expect(await green.terminate().status == 0)
    }

    @Test("tessera table ingest --serve-config fills a running server's preset tables: its next requests are table hits, no decode")
    func ingestIntoRunningServer() async throws {
        let scratch = try ScratchDirectory("serve-shared-ingest")
        let (root, names) = try ServeEndToEndTests.photoRoot(scratch)
        let config = scratch.path("serve.json")
        let settings: [String: Any] = ["root": root, "tablesDirectory": scratch.path("tables"),
                                       "presets": [["name": "thumb", "width": 120, "height": 90, "mode": "fill"]]]
        try JSONSerialization.data(withJSONObject: settings).write(to: URL(fileURLWithPath: config))
        let server = try await Server(["--config", config], scratch: scratch)

        let ingest = try await ReleaseCLI.run(["table", "ingest", "--serve-config", config, "--json"] + names.map { root + "/" + $0 })
        #expect(ingest.status == 0, "\(ingest)")
        let summary = try JSONSerialization.jsonObject(with: Data(ingest.output.utf8)) as? [String: Any]
        #expect(summary?["stored"] as? Int == names.count)
        #expect((summary?["failed"] as? [Any])?.isEmpty == true)

        for name in names {
            let answer = try await server.get(Self.path(name))
            #expect(answer.status == 200)
            #expect(answer.headers["x-tessera-cache"] == "table", "\(name): filled by the ingest")
        }
        #expect(try await Self.decodes(server) == 0)

        // Ingesting again finds every entry current; an unknown preset is a failure, not a silent skip.
        let again = try await ReleaseCLI.run(["table", "ingest", "--serve-config", config, "--json", root + "/" + names[0]])
        #expect((try JSONSerialization.jsonObject(with: Data(again.output.utf8)) as? [String: Any])?["current"] as? Int == 1)
        let unknown = try await ReleaseCLI.run(["table", "ingest", "--serve-config", config, "--preset", "nosuch", names[0]])
        #expect(unknown.status != 0 && unknown.errors.contains("unknown preset"), "\(unknown)")
        #expect(await server.terminate().status == 0)
    }
}
