#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

extension ImageService {
    /// The image route a request came through.
    public enum Route: Sendable, Hashable {
        /// `GET /v1/{preset}/{path…}`: `path` is the part after the preset, still percent-encoded.
        case preset(name: String, path: String)
        /// `GET /v1/resize?src=…&w=&h=&mode=`.
        case resize

        /// The label of the route in metrics and logs: the preset's name, or `resize`.
        var label: String {
            switch self {
            case .preset(let name, _): name
            case .resize: "resize"
            }
        }
    }

    /// An image request as the HTTP layer sees it: the route, the query and the two headers that matter.
    public struct RequestInfo: Sendable {
        /// Which route, with its parameters.
        public var route: Route
        /// The request path as sent (percent-encoded), which a signature covers.
        public var path: String
        /// The query parameters, percent-decoded; of a repeated name, the first value.
        public var query: [String: String]
        /// The query as sent, without the `?`, which a signature covers.
        public var rawQuery: String?
        /// The `Accept` header, for the output format negotiation.
        public var accept: String?
        /// The `If-None-Match` header: a matching tag (or `*`) gets `304`.
        public var ifNoneMatch: String?

        /// A request of `route` for `path` with the raw query (parsed into ``query``) and the two headers
        /// that matter.
        public init(route: Route, path: String, rawQuery: String?, accept: String?, ifNoneMatch: String?) {
            self.route = route
            self.path = path
            self.rawQuery = rawQuery
            self.query = Self.parse(rawQuery)
            self.accept = accept
            self.ifNoneMatch = ifNoneMatch
        }

        /// The parameters of a raw query, percent-decoded (`+` is a space); of a repeated name, the first.
        static func parse(_ raw: String?) -> [String: String] {
            var result: [String: String] = [:]
            for pair in (raw ?? "").split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(parts[0])
                let value = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ") : ""
                if result[name] == nil { result[name] = value.removingPercentEncoding ?? "\u{0}" }   // undecodable: refused later
            }
            return result
        }
    }
}

/// A request resolved once: its signature checked, its source found and versioned, its output chosen
/// and its cache key made. Presets, ad-hoc sizes and remote sources differ only in these fields.
struct ServeRequest: Sendable {
    /// Where the pixels come from.
    enum Source: Sendable {
        /// A file under the root, `stat`ed (or trusted from a recent check: ``RootDirectory/File/verified``).
        case file(RootDirectory.File)
        /// An `http(s)` URL whose host the SSRF guard allows; its address is checked when it is fetched.
        case remote(URL)
    }

    /// The route's label (a preset's name or `resize`).
    let label: String
    /// The preset's table, for preset requests.
    let preset: PresetTable?
    let source: Source
    /// What to draw: the preset's recipe, or `/v1/resize`'s options.
    let processing: ImageProcessing
    let output: OutputChoice
    /// `q`, else the preset's quality; `nil`: the output format's default (``ServerConfiguration/quality``).
    let quality: Int?
    let ifNoneMatch: String?
    /// The key of the request's work and, for local sources, of its encoded response (the ETag is its
    /// hash). A remote response's key adds a digest of the downloaded bytes (``key(withDigest:)``).
    let key: String

    /// The local file, when the source is one.
    var file: RootDirectory.File? {
        if case .file(let file) = source { return file }
        return nil
    }

    /// The response key of a remote source whose bytes have `digest`.
    func key(withDigest digest: String) -> String { key + "|" + digest }
}

/// What a request asks for, before its source is looked at: the route's label, the preset's table, the
/// processing, output format and quality. A fallback image is drawn to this shape when the source is
/// missing or cannot be decoded.
struct RequestShape: Sendable {
    let label: String
    let preset: PresetTable?
    /// The preset's recipe, or `/v1/resize`'s options (``ImageService/processing(from:limits:)``).
    let processing: ImageProcessing
    let output: OutputChoice
    let quality: Int?

    /// The part of a response key that the shape decides: the processing's identity, so that two requests
    /// that differ in any option (gravity, say) never share an answer, and the encoding.
    var key: String {
        "\(processing.identity)|\(output.key)|\(quality.map(String.init) ?? "-")"
    }
}

extension ImageService {
    /// The shape of `info` (its signature checked): a preset's, or the size, mode and options of
    /// `/v1/resize`. With ``ServerConfiguration/onlyPresets`` a resize is `404` and a preset takes no
    /// query option but a signature's `s`.
    func shape(_ info: RequestInfo) throws(ServiceError) -> RequestShape {
        if let signer { try signer.verify(path: info.path, rawQuery: info.rawQuery) }
        let limits = configuration.limits
        switch info.route {
        case .preset(let name, _):
            guard let table = presets[name] else { throw ServiceError(.unknownPreset, "no preset named '\(name)'") }
            if configuration.onlyPresets, let option = info.query.keys.sorted().first(where: { $0 != "s" }) {
                throw ServiceError(.optionNotAllowed, "query options are off (presets only): '\(option)'")
            }
            let recipe = table.preset.processing
            return RequestShape(label: name, preset: table, processing: recipe,
                                output: try OutputChoice(fmt: info.query["fmt"] ?? recipe.format?.rawValue, accept: info.accept),
                                quality: try Self.quality(info.query["q"]) ?? recipe.quality)
        case .resize:
            guard !configuration.onlyPresets else { throw ServiceError(.notFound, "no such route (presets only)") }
            guard info.query["src"].map({ !$0.isEmpty }) == true else { throw ServiceError(.missingSource, "src is required") }
            let processing = try Self.processing(from: info.query, limits: limits)
            return RequestShape(label: "resize", preset: nil, processing: processing,
                                output: try OutputChoice(fmt: info.query["fmt"], accept: info.accept),
                                quality: try Self.quality(info.query["q"]))
        }
    }

    /// Resolves `info` (see ``ServeRequest``). With `trustingRecentCheck`, a file's check younger than
    /// `sourceCheckIntervalSeconds` is reused (for answers from memory only).
    func resolve(_ info: RequestInfo, trustingRecentCheck: Bool) throws(ServiceError) -> ServeRequest {
        let shape = try shape(info)
        let limits = configuration.limits
        func checked(_ file: RootDirectory.File) throws(ServiceError) -> RootDirectory.File {
            guard file.size <= limits.maximumSourceBytes else {
                throw ServiceError(.sourceTooLarge, "the source has \(file.size) bytes, more than the limit of \(limits.maximumSourceBytes)")
            }
            return file
        }
        func request(_ source: ServeRequest.Source, key: String) -> ServeRequest {
            ServeRequest(label: shape.label, preset: shape.preset, source: source, processing: shape.processing, output: shape.output, quality: shape.quality, ifNoneMatch: info.ifNoneMatch, key: key)
        }
        switch info.route {
        case .preset(let name, let rawPath):
            let file = try checked(try root.file(try RootDirectory.decode(rawPath), trustingRecentCheck: trustingRecentCheck))
            return request(.file(file), key: "p|\(name)|\(file.relativePath)|\(file.version)|\(shape.key)")
        case .resize:
            guard let src = info.query["src"], !src.isEmpty else { throw ServiceError(.missingSource, "src is required") }
            let lowered = src.lowercased()
            if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
                guard remote != nil else { throw ServiceError(.remoteDisabled, "remote sources are off (no allowed hosts configured)") }
                guard let url = URL(string: src), let host = url.host, !host.isEmpty else { throw ServiceError(.badSource, "src is not a valid URL") }
                guard remoteGuard.allows(host: host) else { throw ServiceError(.remoteRefused, "host '\(host)' is not allowed") }
                return request(.remote(url), key: "u|\(src)|\(shape.key)")
            }
            if lowered.contains("://") { throw ServiceError(.badSource, "src is a path under the root or an http(s) URL") }
            let file = try checked(try root.file(src, trustingRecentCheck: trustingRecentCheck))
            return request(.file(file), key: "r|\(file.relativePath)|\(file.version)|\(shape.key)")
        }
    }

    /// `w` or `h`: 1…8192, one of the allowed sizes when there are any.
    static func dimension(_ text: String?, name: String, allowed: [Int]) throws(ServiceError) -> Int {
        guard let text, let value = Int(text), value > 0, value <= 8192 else {
            throw ServiceError(.badSize, "\(name) must be a whole number from 1 to 8192")
        }
        guard allowed.isEmpty || allowed.contains(value) else {
            throw ServiceError(.sizeNotAllowed, "\(name)=\(value) is not one of the allowed sizes")
        }
        return value
    }

    /// `q`, 1…100; `nil` when absent.
    static func quality(_ text: String?) throws(ServiceError) -> Int? {
        guard let text else { return nil }
        guard let q = Int(text), (1...100).contains(q) else { throw ServiceError(.badQuality, "q must be 1…100") }
        return q
    }
}
#endif
