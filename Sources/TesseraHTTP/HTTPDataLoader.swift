#if HTTPLoader
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Tessera
@_spi(Internal) import TesseraImaging

/// The default `DataLoading` loader: HTTP and HTTPS GET on AsyncHTTPClient.
///
/// - **Timeout**: `LoadRequest/timeout` is the deadline of the whole load (connection, redirects, head
///   and body, also a body that stops trickling); past it the load fails with `FetchFailure/timeout(url:)`.
/// - **Size**: a `Content-Length` above `LoadRequest/maximumBytes` fails before the body is read; a
///   body without one is counted while it streams and cut off as soon as it passes the limit
///   (`FetchFailure/tooLarge(bytes:limit:url:)`).
/// - **Redirects**: followed up to ``Configuration/maximumRedirects``, cycles refused
///   (`FetchFailure/redirectLimit(url:)`).
/// - **Refused connections** fail at once with `FetchFailure/connectionRefused(url:recently:)`
///   (connection establishment is not retried by default), and the host is then refused locally for
///   ``Configuration/refusedHostCooldown`` (a per-host circuit breaker): a batch of URLs on a closed port
///   costs one connection attempt per download lane, not one connect timeout per URL.
/// - **Status**: 2xx is a success, 304 is returned as is for a conditional request, anything else is
///   `FetchFailure/httpStatus(code:url:)`.
/// - **Progress** is reported after every chunk; **cancellation** of the calling task cancels the
///   request (AsyncHTTPClient closes the connection) and throws `CancellationError`.
/// - **Ownership**: ``init(configuration:urlCheck:)`` makes an `HTTPClient` that the loader owns and
///   ``shutdown()`` shuts down; ``init(client:configuration:urlCheck:)`` borrows the application's client,
///   which the application shuts down (after the loader). Either way ``shutdown()`` ends the loader's loads.
/// - **Lifecycle**: a swift-service-lifecycle `Service`: in a `ServiceGroup`, ``run()`` waits for the
///   group's graceful shutdown and then calls ``shutdown()``.
public final class HTTPDataLoader: DataLoading {
    /// Client-wide settings (per-load limits come with each `LoadRequest`).
    public struct Configuration: Sendable, Hashable {
        /// Redirects followed before failing.
        public var maximumRedirects: Int
        /// Time allowed to establish a connection.
        public var connectTimeout: Duration
        /// Longest silence between two reads of one connection before AsyncHTTPClient gives up on it.
        public var readTimeout: Duration = .seconds(30)
        /// Connections kept per host.
        public var maximumConnectionsPerHost: Int
        /// The `User-Agent` header.
        public var userAgent: String
        /// Whether a failed connection attempt is retried with backoff until ``connectTimeout`` (robust
        /// against a flaky network, but a closed port then costs the whole connect timeout per load) rather
        /// than failing at once, the default.
        public var retriesConnectionEstablishment: Bool
        /// After a host refuses a connection or cannot be reached, loads for it fail at once for this long
        /// without connecting; then it is tried again. `.zero` turns this off.
        public var refusedHostCooldown: Duration

        /// Creates settings: 5 redirects, 10 s to connect, 8 connections per host, refused connections
        /// failing at once and their host refused locally for 2 s.
        public init(maximumRedirects: Int = 5, connectTimeout: Duration = .seconds(10), maximumConnectionsPerHost: Int = 8,
                    userAgent: String = "Tessera/1 (AsyncHTTPClient)", retriesConnectionEstablishment: Bool = false,
                    refusedHostCooldown: Duration = .seconds(2)) {
            self.maximumRedirects = maximumRedirects
            self.connectTimeout = connectTimeout
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.userAgent = userAgent
            self.retriesConnectionEstablishment = retriesConnectionEstablishment
            self.refusedHostCooldown = refusedHostCooldown
        }
    }

    /// A loader with the default settings that lives as long as the process (never shut down: do not call
    /// ``shutdown()`` on it or run it in a `ServiceGroup`, since `ImageManager.shared` loads through it).
    public static let shared = HTTPDataLoader()

    /// The settings.
    public let configuration: Configuration
    private let client: HTTPClient
    /// Whether the loader made ``client`` (and so shuts it down) or borrowed it from the application.
    private let ownsClient: Bool
    /// Set by the first ``shutdown()``; loads fail from then on.
    private let shutDown = LockedValue(false)
    private let refusedHosts: RefusedHosts
    /// Called with the URL before the first request and before following each redirect; throwing refuses
    /// it, and an address it returns is connected to instead of the URL's host (plain `http` only).
    private let urlCheck: (@Sendable (URL) async throws -> String?)?

    /// Creates a loader with its own `HTTPClient` on the shared event loop group. Call ``shutdown()``
    /// when done with it (dropping it without does so in the background).
    ///
    /// With `urlCheck`, the loader follows redirects itself (AsyncHTTPClient's following is off) and calls
    /// `urlCheck` before the first request and before each redirect; an error it throws ends the load.
    /// An SSRF guard (TesseraServer) checks hosts and resolved addresses there.
    ///
    /// `urlCheck` may return an IP address literal (`203.0.113.7`, `2001:db8::1`): for an `http` URL the
    /// loader then connects to that address and sends the URL's host in the `Host` header, so the
    /// address checked is the address connected to, without a second DNS lookup in between (DNS
    /// rebinding). For `https` the address is not used: the certificate is checked against the name, and
    /// AsyncHTTPClient resolves the name again when it connects (docs/SERVING.md, "SSRF guard").
    public convenience init(configuration: Configuration = Configuration(), urlCheck: (@Sendable (URL) async throws -> String?)? = nil) {
        var settings = HTTPClient.Configuration()
        settings.redirectConfiguration = configuration.maximumRedirects > 0 && urlCheck == nil
            ? .follow(max: configuration.maximumRedirects, allowCycles: false) : .disallow
        // The read timeout ends a load abandoned after its deadline whose body stalls (see `load`).
        settings.timeout = HTTPClient.Configuration.Timeout(connect: TimeAmount(configuration.connectTimeout),
                                                            read: TimeAmount(configuration.readTimeout))
        settings.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maximumConnectionsPerHost
        settings.connectionPool.retryConnectionEstablishment = configuration.retriesConnectionEstablishment
        settings.decompression = .disabled
        self.init(client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings), ownsClient: true,
                  configuration: configuration, urlCheck: urlCheck)
    }

    /// Creates a loader on the application's own `client`, which it borrows: the application owns the
    /// client and shuts it down after the loader is done with it. The loader's ``shutdown()`` and its
    /// deinit never shut a borrowed client down; after ``shutdown()`` the loader's own loads fail, while
    /// the client stays usable for everything else.
    ///
    /// What still holds with a borrowed client, from the loader's own code: the deadline of the whole load
    /// (`LoadRequest/timeout`, also for a body that stops trickling), the size limit
    /// (`LoadRequest/maximumBytes`, on `Content-Length` and while streaming), the status handling, the
    /// ``Configuration/userAgent`` header, the refused-host cooldown (``Configuration/refusedHostCooldown``)
    /// and, with a `urlCheck`, the loader's own following of redirects up to
    /// ``Configuration/maximumRedirects`` with the check (and address pinning) before each hop.
    ///
    /// What is the client's and not the loader's: ``Configuration/connectTimeout``,
    /// ``Configuration/readTimeout``, ``Configuration/maximumConnectionsPerHost`` and
    /// ``Configuration/retriesConnectionEstablishment`` are ignored (they configure a client, and this one
    /// is configured already); redirects without a `urlCheck` are followed as the client's
    /// `redirectConfiguration` says (``Configuration/maximumRedirects`` does not apply); with the client's
    /// decompression on, bodies are decompressed and the size limit counts decompressed bytes while
    /// streaming (a `Content-Length` is still checked as sent).
    ///
    /// - Important: with a `urlCheck`, `client` must not follow redirects
    ///   (`redirectConfiguration = .disallow`): a redirect the client follows on its own is never shown to
    ///   the check. AsyncHTTPClient does not let the loader read the client's configuration, so the loader
    ///   cannot refuse such a client up front; it does refuse every response the client reached through a
    ///   redirect (`FetchFailure/transport(url:message:)`, the body not read), but the client has sent the
    ///   redirected request by then.
    public convenience init(client: HTTPClient, configuration: Configuration = Configuration(),
                            urlCheck: (@Sendable (URL) async throws -> String?)? = nil) {
        self.init(client: client, ownsClient: false, configuration: configuration, urlCheck: urlCheck)
    }

    private init(client: HTTPClient, ownsClient: Bool, configuration: Configuration, urlCheck: (@Sendable (URL) async throws -> String?)?) {
        self.client = client
        self.ownsClient = ownsClient
        self.configuration = configuration
        self.urlCheck = urlCheck
        refusedHosts = RefusedHosts(cooldown: configuration.refusedHostCooldown)
    }

    deinit {
        // The shutdown callback keeps the client alive until it has closed its connections.
        if ownsClient, !shutDown.withLock({ $0 }) { client.shutdown { _ in } }
    }

    /// Ends the loader: loads after this fail (`FetchFailure/transport(url:message:)`). A client the loader
    /// made is shut down (its connections closed); a borrowed one (``init(client:configuration:urlCheck:)``)
    /// is left to its owner. Only the first call does anything; later ones return at once.
    public func shutdown() async throws {
        let first = shutDown.withLock { done in
            defer { done = true }
            return !done
        }
        if first, ownsClient { try await client.shutdown() }
    }

    /// Whether ``shutdown()`` has been called.
    public var isShutdown: Bool { shutDown.withLock { $0 } }

    /// Loads `request` (see the type's documentation for limits and errors).
    ///
    /// AsyncHTTPClient's deadline only bounds the wait for the response head: a body that stalls after
    /// its first bytes (slow-loris) would hang the load forever (`FetchHostileTests.stalledBody`).
    /// So the load races a timer for the whole `LoadRequest/timeout`; when the timer wins, the load's
    /// task is cancelled (AsyncHTTPClient closes the connection) and `FetchFailure/timeout(url:)` is thrown.
    public func load(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
        let address = request.url.absoluteString
        if isShutdown { throw TesseraError(.fetching(.transport(url: address, message: "the loader has been shut down"))) }
        let deadline = ContinuousClock.now + request.timeout
        // Unstructured on purpose: a task group would wait for a cancelled load that AsyncHTTPClient
        // does not end promptly (a stalled body under load), so the timeout would not bound the call.
        // The abandoned load ends on its own: cancelled, and bounded by the client's read timeout.
        let work = Task { try await self.perform(request, progress: progress) }
        let outcome = FirstOutcome<LoadResponse>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.install(continuation)
                let timer = Task {
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    if !Task.isCancelled, outcome.finish(.failure(TesseraError(.fetching(.timeout(url: address))))) { work.cancel() }
                }
                Task {
                    let result = await work.result
                    timer.cancel()
                    outcome.finish(result)
                }
            }
        } onCancel: {
            work.cancel()
            outcome.finish(.failure(CancellationError()))
        }
    }

    /// The load itself; with a URL check, one checked hop per redirect.
    private func perform(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
        guard let urlCheck else { return try await performHop(request, progress: progress) }
        var hop = request
        var visited: Set<String> = []
        while true {
            let pinned = try await urlCheck(hop.url)
            do {
                return try await performHop(hop, connectingTo: pinned, progress: progress)
            } catch let redirect as Redirect {
                guard visited.insert(hop.url.absoluteString).inserted, visited.count <= configuration.maximumRedirects,
                      let next = URL(string: redirect.location, relativeTo: hop.url)?.absoluteURL else {
                    throw TesseraError(.fetching(.redirectLimit(url: request.url.absoluteString)))
                }
                hop.url = next
            }
        }
    }

    /// A 3xx answer with a `Location`, when the loader follows redirects itself.
    private struct Redirect: Error { var location: String }

    /// One request, bounded by AsyncHTTPClient's deadline up to the response head; an `http` request
    /// with a `pinned` address connects there, with the URL's host as `Host`.
    private func performHop(_ request: LoadRequest, connectingTo pinned: String? = nil,
                            progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
        let address = request.url.absoluteString
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = request.url.host, !host.isEmpty else {
            throw TesseraError(.fetching(.invalidURL(address)))
        }
        let hostKey = "\(scheme)://\(host.lowercased()):\(request.url.port ?? (scheme == "https" ? 443 : 80))"
        if refusedHosts.isOpen(hostKey) { throw TesseraError(.fetching(.connectionRefused(url: address, recently: true))) }
        var target = address
        var hostHeader: String?
        if scheme == "http", let pinned {
            // Fails closed: a URL that cannot be pointed at the checked address is not loaded by name.
            guard var parts = URLComponents(url: request.url, resolvingAgainstBaseURL: false) else {
                throw TesseraError(.fetching(.invalidURL(address)))
            }
            if pinned.contains(":") { parts.percentEncodedHost = "[\(pinned)]" } else { parts.host = pinned }
            guard let pointed = parts.url else { throw TesseraError(.fetching(.invalidURL(address))) }
            hostHeader = request.url.port.map { "\(host):\($0)" } ?? host
            target = pointed.absoluteString
        }
        var http = HTTPClientRequest(url: target)
        http.method = .GET
        if let hostHeader { http.headers.add(name: "Host", value: hostHeader) }
        http.headers.add(name: "User-Agent", value: configuration.userAgent)
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) { http.headers.replaceOrAdd(name: name, value: value) }
        if let etag = request.ifNoneMatch { http.headers.add(name: "If-None-Match", value: etag) }
        if let date = request.ifModifiedSince { http.headers.add(name: "If-Modified-Since", value: date) }
        do {
            let response: HTTPClientResponse
            do {
                response = try await client.execute(http, deadline: .now() + TimeAmount(request.timeout))
            } catch where Self.isConnectFailure(error) {
                refusedHosts.refused(hostKey)
                throw TesseraError(.fetching(.connectionRefused(url: address, recently: false)), underlying: error)
            }
            refusedHosts.answered(hostKey)
            let url = hostHeader == nil ? response.url ?? request.url : request.url
            let code = Int(response.status.code)
            var headers: [String: String] = [:]
            for (name, value) in response.headers {
                let key = name.lowercased()
                headers[key] = headers[key].map { "\($0), \(value)" } ?? value
            }
            if code == 304, request.isConditional { return LoadResponse(url: url, statusCode: 304, headers: headers) }
            if urlCheck != nil, response.history.count > 1 {   // a borrowed client followed a redirect past the check
                throw TesseraError(.fetching(.transport(url: address, message: "the HTTP client followed a redirect that the URL check did not see")))
            }
            if urlCheck != nil, [301, 302, 303, 307, 308].contains(code), let location = headers["location"] {
                throw Redirect(location: location)
            }
            guard (200..<300).contains(code) else {
                throw TesseraError(.fetching(.httpStatus(code: code, url: address)))
            }
            let expected = response.headers.first(name: "content-length").flatMap { Int($0) }
            if let expected, expected > request.maximumBytes {
                throw TesseraError(.fetching(.tooLarge(bytes: expected, limit: request.maximumBytes, url: address)))
            }
            var body = Data()
            body.reserveCapacity(min(expected ?? 0, request.maximumBytes))
            progress(LoadProgress(receivedBytes: 0, expectedBytes: expected))
            for try await chunk in response.body {
                let total = body.count + chunk.readableBytes
                if total > request.maximumBytes {
                    throw TesseraError(.fetching(.tooLarge(bytes: total, limit: request.maximumBytes, url: address)))
                }
                chunk.withUnsafeReadableBytes { body.append(contentsOf: $0) }
                progress(LoadProgress(receivedBytes: body.count, expectedBytes: expected))
            }
            return LoadResponse(url: url, statusCode: code, headers: headers, data: body)
        } catch {
            throw Self.typed(error, address: address)
        }
    }

    /// Whether `error` says that no connection could be established (refused, unreachable, or no answer
    /// within the connect timeout), as opposed to a failure on an established connection.
    static func isConnectFailure(_ error: any Error) -> Bool {
        if error is NIOConnectionError { return true }
        if let io = error as? IOError { return [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH].contains(io.errnoCode) }
        if let client = error as? HTTPClientError { return client == .connectTimeout }
        return false
    }

    /// Maps AsyncHTTPClient's and NIO's errors to ``/TesseraCore/TesseraError``; cancellation stays `CancellationError`.
    static func typed(_ error: any Error, address: String) -> any Error {
        if error is TesseraError || error is CancellationError || error is Redirect { return error }
        if Task.isCancelled { return CancellationError() }
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .getConnectionFromPoolTimeout:
                return TesseraError(.fetching(.timeout(url: address)), underlying: client)
            case .redirectLimitReached, .redirectCycleDetected:
                return TesseraError(.fetching(.redirectLimit(url: address)), underlying: client)
            case .cancelled:
                return CancellationError()
            default:
                break
            }
        }
        return TesseraError(.fetching(.transport(url: address, message: "\(error)")), underlying: error)
    }
}
#endif
