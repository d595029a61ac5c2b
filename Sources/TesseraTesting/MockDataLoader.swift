import Foundation
@_spi(Internal) import TesseraImaging
import TesseraRemote

/// A ``/TesseraRemote/DataLoading`` that answers from scripted responses, with no socket: the way to test
/// code built on `ImageManager` (caching, coalescing, cancellation, priorities) quickly and
/// deterministically. Each URL has a ``Response`` (an unscripted URL answers `404`); every load is
/// recorded (``requests``, ``count(for:)``), may wait behind a ``LoadGate``, and follows the loader
/// contract: `304` to a matching `If-None-Match`, `FetchFailure.tooLarge` beyond the request's limit,
/// `FetchFailure.httpStatus` for a status outside 2xx, progress as the body "arrives".
///
/// ```swift
/// let loader = MockDataLoader()
/// loader.set(.image(pngBytes, cacheControl: "max-age=60"), for: url)
/// let manager = try ImageManager(configuration: .init(disk: nil), loader: loader)
/// _ = try await manager.image(for: url)
/// #expect(loader.count(for: url) == 1)
/// ```
public final class MockDataLoader: DataLoading {
    /// What one URL answers.
    public struct Response: Sendable {
        /// The HTTP status (200 by default).
        public var status: Int
        /// Response headers (`Cache-Control`, `ETag`, …).
        public var headers: [String: String]
        /// The body.
        public var body: Data
        /// When set, each load waits until it is open.
        public var gate: LoadGate?
        /// When set, each load throws it (after the gate) instead of answering.
        public var failure: TesseraError?
        /// How many progress reports the body arrives in (at least 1).
        public var chunks: Int

        /// A response; every parameter has the default of a plain `200` with an empty body.
        public init(status: Int = 200, headers: [String: String] = [:], body: Data = Data(), gate: LoadGate? = nil,
                    failure: TesseraError? = nil, chunks: Int = 1) {
            self.status = status
            self.headers = headers
            self.body = body
            self.gate = gate
            self.failure = failure
            self.chunks = chunks
        }

        /// A `200` with `body`, and `Cache-Control` and `ETag` when given.
        public static func image(_ body: some DataProtocol, cacheControl: String? = nil, etag: String? = nil,
                                 gate: LoadGate? = nil) -> Response {
            var headers: [String: String] = [:]
            if let cacheControl { headers["Cache-Control"] = cacheControl }
            if let etag { headers["ETag"] = etag }
            return Response(headers: headers, body: Data(body), gate: gate)
        }
    }

    private struct State {
        var responses: [URL: Response] = [:]
        var requests: [LoadRequest] = []
        var arrivals: [(url: URL, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = LockedValue(State())

    /// A loader with nothing scripted.
    public init() {}

    /// Scripts `response` for `url` (replacing the previous one).
    public func set(_ response: Response, for url: URL) {
        state.withLock { $0.responses[url] = response }
    }

    /// Every load so far, in arrival order.
    public var requests: [LoadRequest] { state.withLock { $0.requests } }

    /// How many loads of `url` arrived.
    public func count(for url: URL) -> Int { state.withLock { $0.requests.count { $0.url == url } } }

    /// Returns once `count` loads of `url` have arrived (at once when they have).
    public func waitForLoads(of url: URL, count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let arrived = state.withLock { state -> Bool in
                if state.requests.count(where: { $0.url == url }) >= count { return true }
                state.arrivals.append((url, count, continuation))
                return false
            }
            if arrived { continuation.resume() }
        }
    }

    /// Answers `request` from its script (see the type).
    public func load(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
        let (response, ready) = state.withLock { state -> (Response?, [CheckedContinuation<Void, Never>]) in
            state.requests.append(request)
            var ready: [CheckedContinuation<Void, Never>] = []
            let requests = state.requests
            state.arrivals.removeAll { arrival in
                guard requests.count(where: { $0.url == arrival.url }) >= arrival.count else { return false }
                ready.append(arrival.continuation)
                return true
            }
            return (state.responses[request.url], ready)
        }
        for continuation in ready { continuation.resume() }
        guard let response else {
            throw TesseraError(.fetching(.httpStatus(code: 404, url: request.url.absoluteString)))
        }
        if let gate = response.gate { try await gate.wait() }
        try Task.checkCancellation()
        if let failure = response.failure { throw failure }
        if let etag = response.headers.first(where: { $0.key.lowercased() == "etag" })?.value, request.ifNoneMatch == etag {
            return LoadResponse(url: request.url, statusCode: 304, headers: response.headers)
        }
        guard (200..<300).contains(response.status) else {
            throw TesseraError(.fetching(.httpStatus(code: response.status, url: request.url.absoluteString)))
        }
        guard response.body.count <= request.maximumBytes else {
            throw TesseraError(.fetching(.tooLarge(bytes: response.body.count, limit: request.maximumBytes, url: request.url.absoluteString)))
        }
        let chunks = max(1, response.chunks)
        for chunk in 1...chunks {
            try Task.checkCancellation()
            progress(LoadProgress(receivedBytes: response.body.count * chunk / chunks, expectedBytes: response.body.count))
        }
        return LoadResponse(url: request.url, statusCode: response.status, headers: response.headers, data: response.body)
    }
}
