import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import TesseraServer

/// `tessera health [--url URL]`: asks a running `tessera serve` whether it is healthy, with no curl
/// needed: what a container's `HEALTHCHECK` or a Kubernetes exec probe runs. Exit status 0 when
/// `/healthz` answers `200` with `{"status":"ok"}` within the timeout, 1 otherwise (refused, timed out,
/// another status or body), with one line saying which.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 when a running tessera serve answers /healthz healthy, 1 otherwise.",
        discussion: """
        Without --url, the address is the one `tessera serve` would listen on, read as serve reads it \
        (--config FILE or TESSERA_CONFIG, then TESSERA_LISTEN), with a wildcard host (0.0.0.0, ::) asked on loopback.
        """
    )

    @Option(help: "The health URL to ask (default: http://LISTEN/healthz from the serve settings).")
    var url: String?

    @Option(help: "A tessera serve config file to read the listen address from (also TESSERA_CONFIG).")
    var config: String?

    @Option(help: "Seconds to wait for the answer.")
    var timeout: Double = 5

    func validate() throws {
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds") }
    }

    func run() async throws {
        let target = try url ?? Self.defaultURL(config: config, environment: ProcessInfo.processInfo.environment)
        let verdict = await Self.check(target, timeout: .milliseconds(Int64(timeout * 1000)))
        print("tessera health: \(verdict.healthy ? "healthy" : "unhealthy"): \(target): \(verdict.detail)")
        if !verdict.healthy { throw ExitCode.failure }
    }

    /// `http://HOST:PORT/healthz` for the address `tessera serve` listens on with `environment` (and the
    /// config file `config`, else `TESSERA_CONFIG`'s): a wildcard or empty host is asked on loopback.
    static func defaultURL(config: String?, environment: [String: String]) throws -> String {
        let arguments = config.map { ["--config", $0] } ?? []
        let address: (host: String, port: Int)
        do {
            address = try ServeSettingsReader().read(arguments: arguments, environment: environment).server.listenAddress()
        } catch {
            throw ValidationError("the serve settings cannot be read to find the address (\(error)); give --url")
        }
        let host = switch address.host {
        case "", "0.0.0.0": "127.0.0.1"
        case "::": "[::1]"
        case let host where host.contains(":"): "[\(host)]"
        case let host: host
        }
        return "http://\(host):\(address.port)/healthz"
    }

    /// Whether `url` answers healthy within `timeout`, and what it answered.
    static func check(_ url: String, timeout: TimeAmount) async -> (healthy: Bool, detail: String) {
        do {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: timeout)
            let body = try await response.body.collect(upTo: 64 * 1024)
            let status = (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["status"] as? String
            guard response.status == .ok, status == "ok" else {
                return (false, "answered \(response.status.code) \(String(buffer: body).prefix(200))")
            }
            return (true, "200 \(String(buffer: body))")
        } catch {
            return (false, "\(error)")
        }
    }
}
