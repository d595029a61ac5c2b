import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// What an operator's tooling runs beside the server, on the release binary: `tessera health` (a
/// container's `HEALTHCHECK`, a Kubernetes exec probe) and `tessera serve --check-config` (before a restart).
@Suite("tessera health and serve --check-config, release binary",
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct OperatorCommandsEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    @Test("health: 0 against a running server (by --url, and by the serve settings' listen address), 1 against a port nobody answers")
    func health() async throws {
        let scratch = try ScratchDirectory("health")
        let (root, _) = try ServeEndToEndTests.photoRoot(scratch)
        let server = try await Server(["--root", root, "--tables", scratch.path("tables")], scratch: scratch)
        let byURL = try await ReleaseCLI.run(["health", "--url", "http://127.0.0.1:\(server.port)/healthz"])
        #expect(byURL.status == 0, "\(byURL)")
        #expect(byURL.output.contains("healthy"))
        // As in a container: the address from the same variable `tessera serve` reads, its wildcard host asked on loopback.
        let bySettings = try await ReleaseCLI.run(["health"], environment: ["TESSERA_LISTEN": "0.0.0.0:\(server.port)"])
        #expect(bySettings.status == 0, "\(bySettings)")
        #expect(bySettings.output.contains("http://127.0.0.1:\(server.port)/healthz"))
        // A path that is not a health check answers 404: unhealthy.
        let wrongPath = try await ReleaseCLI.run(["health", "--url", "http://127.0.0.1:\(server.port)/nothing-here"])
        #expect(wrongPath.status == 1, "\(wrongPath)")
        #expect(await server.terminate().status == 0)

        let closed = try ClosedPort()
        let refused = try await ReleaseCLI.run(["health", "--url", "http://127.0.0.1:\(closed.port)/healthz", "--timeout", "2"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.output.contains("unhealthy"))
    }

    @Test("--check-config: every effective setting with where it came from, secrets masked, exit 0")
    func checkConfigValid() async throws {
        let scratch = try ScratchDirectory("check-config")
        let (root, _) = try ServeEndToEndTests.photoRoot(scratch)
        let config = scratch.path("serve.json")
        try Data(#"{"tableCapacity": 500, "presets": [{"name": "card", "width": 160, "height": 120, "mode": "fill"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        let secret = "check-config-secret-4711"
        let run = try await ReleaseCLI.run(["serve", "--check-config", "--root", root, "--tables", scratch.path("tables"), "--config", config,
                                            "--max-decodes", "3"],
                                           environment: ["TESSERA_ADMIN_KEY": secret, "TESSERA_LISTEN": "127.0.0.1:9"])
        #expect(run.status == 0, "\(run)")
        let lines = run.output.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        #expect(lines.contains("tableCapacity 500 (tableCapacity in \(config))"))
        #expect(lines.contains("limits.maximumConcurrentDecodes 3 (--max-decodes)"))
        #expect(lines.contains("listen 127.0.0.1:9 (TESSERA_LISTEN)"))
        #expect(lines.contains("adminKey (secret) (TESSERA_ADMIN_KEY)"))
        #expect(lines.contains { $0.hasPrefix("limits.maximumQueuedDecodes 64 (default)") })
        #expect(!run.output.contains(secret) && !run.errors.contains(secret), "a secret is never printed")
        #expect(run.output.contains("the configuration is valid"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("tables")), "checking writes nothing")
    }

    @Test("--check-config names every problem, from every source and the files, and exits 1")
    func checkConfigProblems() async throws {
        let scratch = try ScratchDirectory("check-config-bad")
        let config = scratch.path("serve.json")
        try Data(#"{"tableCapacty": 500, "limits": {"maximumQueuedDecodes": "many"}}"#.utf8).write(to: URL(fileURLWithPath: config))
        let run = try await ReleaseCLI.run(["serve", "--check-config", "--root", scratch.path("no-such-root"), "--config", config,
                                            "--max-decodes", "abc", "--bogus", "--watermark", "logo=" + scratch.path("no-logo.png")],
                                           environment: ["TESSERA_GALLERY_THUMBHASH_SECONDS": "soon", "TESSERA_ADMIN_KEY_FILE": scratch.path("no-key")])
        #expect(run.status == 1, "\(run)")
        for problem in ["--bogus is not an option", "TESSERA_ADMIN_KEY_FILE", "tableCapacty in \(config) is not a tessera serve setting",
                        "limits.maximumQueuedDecodes in \(config)", "--max-decodes 'abc'", "TESSERA_GALLERY_THUMBHASH_SECONDS 'soon'",
                        "--root '\(scratch.path("no-such-root"))' does not exist", "watermark 'logo'"] {
            #expect(run.errors.contains(problem), "\(problem) is named: \(run.errors)")
        }
        #expect(run.errors.contains("8 problems"), "\(run.errors)")
    }
}
