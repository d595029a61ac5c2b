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
        /// An imgproxy URL under `--imgproxy-prefix`: `path` is the part after the prefix, as sent.
        case imgproxy(path: String)
        /// A thumbor URL under `--thumbor-prefix`: `path` is the part after the prefix, as sent.
        case thumbor(path: String)

        /// The label of the route in metrics and logs: the preset's name, `resize`, `imgproxy` or `thumbor`.
        var label: String {
            switch self {
            case .preset(let name, _): name
            case .resize: "resize"
            case .imgproxy: "imgproxy"
            case .thumbor: "thumbor"
            }
        }

        /// The URL dialect whose statuses the route's errors answer with.
        var dialect: URLDialect {
            switch self {
            case .preset, .resize: .tessera
            case .imgproxy: .imgproxy
            case .thumbor: .thumbor
            }
        }

        /// The `route` label of the request's duration metric.
        var metricsRoute: ServiceMetrics.Route {
            switch self {
            case .preset: .preset
            case .resize: .resize
            case .imgproxy: .imgproxy
            case .thumbor: .thumbor
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
        /// The `If-Modified-Since` header: without `If-None-Match`, a source not modified after it gets `304`.
        public var ifModifiedSince: String?

        /// A request of `route` for `path` with the raw query (parsed into ``query``) and the two headers
        /// that matter.
        public init(route: Route, path: String, rawQuery: String?, accept: String?, ifNoneMatch: String?,
                    ifModifiedSince: String? = nil) {
            self.route = route
            self.path = path
            self.rawQuery = rawQuery
            self.query = Self.parse(rawQuery)
            self.accept = accept
            self.ifNoneMatch = ifNoneMatch
            self.ifModifiedSince = ifModifiedSince
        }

        /// The request target as sent: the path and, when there is one, `?` and the raw query.
        var target: String { rawQuery.map { path + "?" + $0 } ?? path }

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

/// A resolved request: its signature checked, its source found and versioned, its output chosen and its
/// cache key made. Presets, ad-hoc sizes and remote sources differ only in these fields.
/// ``ImageService/respond(to:)`` resolves a request once; when that trusted a recent check of a file that
/// is about to be read, only the file is checked again (`rechecked(_:)`).
struct ServeRequest: Sendable {
    /// Where the pixels come from.
    enum Source: Sendable {
        /// A file under the root or in a named directory source (`in`: the directory it was found through),
        /// `stat`ed (or trusted from a recent check: ``RootDirectory/File/verified``).
        case file(RootDirectory.File, in: RootDirectory)
        /// An `http(s)` URL whose host the SSRF guard allows; its address is checked when it is fetched.
        case remote(URL)
        /// An object of a named source (an S3 bucket, a private HTTP origin) by its key, with its version
        /// once ``ImageService/respond(to:)`` has asked the store (``versioned(_:)``).
        case object(any ObjectStore, key: String, version: ObjectVersion?)
    }

    /// The route's label (a preset's name or `resize`).
    let label: String
    /// The preset's table, for preset requests.
    let preset: PresetTable?
    private(set) var source: Source
    /// What to draw: the preset's recipe, or `/v1/resize`'s options.
    let processing: ImageProcessing
    let output: OutputChoice
    /// `q`, else the preset's quality; `nil`: the output format's default (``ServerConfiguration/quality``).
    let quality: Int?
    /// `filename` and `attachment`: the answers' `Content-Disposition`, not part of ``key``.
    let disposition: ContentDisposition?
    /// Until when the URL stands (``RequestShape/expires``).
    let expires: Int?
    var ifNoneMatch: String?
    /// `If-Modified-Since` in seconds since 1970 (`nil` when absent or not an HTTP date).
    var ifModifiedSince: Int?
    /// The key of the request's work and, for local sources, of its encoded response (the ETag is its
    /// hash). A remote response's key adds a digest of the downloaded bytes (``key(withDigest:)``), an
    /// object's its version (``versioned(_:)``).
    private(set) var key: String
    /// The parts of ``key`` that a file's fresh check keeps (`rechecked(_:)`): the route's prefix and the
    /// shape's key (``RequestShape/key``).
    let keyPrefix: String, shapeKey: String

    /// When the source was last modified, in whole seconds since 1970 (an HTTP date's precision): a
    /// file's modification time, an object's `Last-Modified` when its version came with its bytes; `nil`
    /// otherwise (a remote URL; an object whose version a recent check confirmed: its cached answer keeps it).
    var lastModified: Int? {
        switch source {
        case .file(let file, _): Int(file.modified / 1_000_000_000)
        case .object(_, _, let version): version?.lastModified
        case .remote: nil
        }
    }

    /// What names the source whatever its version, as a purge names it (``ImageService/purge(source:)``):
    /// a file's ``RootDirectory/File/identity`` (its path under the root, `@NAME/PATH` in a directory
    /// source), an object's `@STORE/KEY` (a bucket named in `src=s3://` is the store `s3:BUCKET`), a
    /// remote URL as given.
    var sourceIdentity: String {
        switch source {
        case .file(let file, _): file.identity
        case .object(let store, let key, _): ImageService.namedIdentity(source: store.name, key: key)
        case .remote(let url): url.absoluteString
        }
    }

    /// The local file, when the source is one.
    var file: RootDirectory.File? {
        if case .file(let file, _) = source { return file }
        return nil
    }

    /// This request with its file checked again (`file`: ``RootDirectory/File/rechecked(in:)``), its key
    /// naming the version found now. The signature, shape and path are not looked at again.
    func rechecked(_ file: RootDirectory.File) -> ServeRequest {
        guard case .file(_, let directory) = source else { return self }
        var request = self
        request.source = .file(file, in: directory)
        request.key = Self.fileKey(prefix: keyPrefix, file: file, shape: shapeKey)
        return request
    }

    /// The key of a file request: the route's prefix, the file's identity and version, the shape's key.
    static func fileKey(prefix: String, file: RootDirectory.File, shape: String) -> String {
        "\(prefix)|\(file.identity)|\(file.version)|\(shape)"
    }

    /// The response key of a remote source whose bytes have `digest`.
    func key(withDigest digest: String) -> String { key + "|" + digest }

    /// Whether the request's source is known well enough for its key to name one response: a file, or
    /// an object whose version is known.
    var isVersioned: Bool {
        switch source {
        case .file: true
        case .remote: false
        case .object(_, _, let version): version != nil
        }
    }

    /// This request of an object at `version`: its key ends with the version's tag.
    func versioned(_ version: ObjectVersion) -> ServeRequest {
        guard case .object(let store, let objectKey, nil) = source else { return self }
        var request = self
        request.source = .object(store, key: objectKey, version: version)
        request.key = key + "|" + version.tag
        return request
    }
}

/// What a request asks for, before its source is looked at: the route's label, the preset's table, the
/// processing, output format and quality. A fallback image is drawn to this shape when the source is
/// missing or cannot be decoded.
struct RequestShape: Sendable {
    let label: String
    let preset: PresetTable?
    /// Where the pixels come from, as `/v1/resize`'s `src` says it (``ImageAsk/source``); `nil` for a
    /// preset route, whose path is the source.
    let source: String?
    /// Until when the URL stands, in seconds since 1970 (imgproxy's `expires`): its answers are not kept as
    /// memory hits by target, which would outlive it.
    let expires: Int?
    /// The preset's recipe, or `/v1/resize`'s options (``ImageService/processing(from:limits:)``).
    let processing: ImageProcessing
    let output: OutputChoice
    let quality: Int?
    /// `filename` and `attachment` (``ContentDisposition``); not part of ``key``.
    let disposition: ContentDisposition?
    /// The part of a response key that the shape decides: the processing's identity (worked out once per
    /// preset), so that two requests that differ in any option (gravity, say) never share an answer, and
    /// the encoding.
    let key: String

    init(label: String, preset: PresetTable?, source: String? = nil, processing: ImageProcessing, output: OutputChoice, quality: Int?,
         disposition: ContentDisposition? = nil, expires: Int? = nil) {
        self.source = source
        self.expires = expires
        self.disposition = disposition
        self.label = label
        self.preset = preset
        self.processing = processing
        self.output = output
        self.quality = quality
        key = "\(preset?.identity ?? processing.identity)|\(output.key)|\(quality.map(String.init) ?? "-")"
    }

    /// The shape of `ask`, labelled `label`.
    init(label: String, _ ask: ImageAsk) {
        self.init(label: label, preset: nil, source: ask.source, processing: ask.processing, output: ask.output,
                  quality: ask.quality, disposition: ask.disposition, expires: ask.expires)
    }
}

/// What an image URL asks for in Tessera's terms, whichever dialect it was written in (`/v1/resize`'s
/// query, an imgproxy or a thumbor URL): each dialect is a parser to this value, and nothing after the
/// parser knows which one asked. So the same image asked for in two dialects has one cache key and ETag
/// (made from ``processing``, ``output`` and ``quality``), and is made once.
struct ImageAsk: Sendable {
    /// Where the pixels come from, as `/v1/resize`'s `src`: a path under the root, `@SOURCE/KEY`,
    /// `s3://BUCKET/KEY` or an `http(s)` URL.
    var source: String
    var processing: ImageProcessing
    var output: OutputChoice
    /// `nil`: the output format's default (``ServerConfiguration/quality``).
    var quality: Int?
    var disposition: ContentDisposition?
    /// Until when the URL stands, in seconds since 1970 (``RequestShape/expires``).
    var expires: Int?
}

extension ImageService {
    /// The shape of `info` (its signature checked): a preset's, or the size, mode and options of
    /// `/v1/resize`; a summary request (`?info`) has none. With ``ServerConfiguration/onlyPresets`` a resize is `404` and a preset takes no
    /// query option but a signature's `s`.
    func shape(_ info: RequestInfo) throws(ServiceError) -> RequestShape {
        if info.route.dialect == .tessera, let signer { try signer.verify(path: info.path, rawQuery: info.rawQuery) }
        // `?info` asks for ``summary(of:)``, never for the image: no image answer (a memory hit included) is
        // given to it.
        guard !Self.wantsSummary(info) else { throw ServiceError(.optionNotAllowed, "?info is answered by the summary route") }
        let limits = configuration.limits
        switch info.route {
        case .preset(let name, _):
            guard let table = presets[name] else { throw ServiceError(.unknownPreset, "no preset named '\(name)'") }
            if configuration.onlyPresets, let option = info.query.keys.sorted().first(where: { $0 != "s" }) {
                throw ServiceError(.optionNotAllowed, "query options are off (presets only): '\(option)'")
            }
            try Self.refuseUnknownParameters(info, known: Self.presetParameters)
            let recipe = table.preset.processing
            return RequestShape(label: name, preset: table, processing: recipe,
                                output: try OutputChoice(fmt: info.query["fmt"] ?? recipe.format?.rawValue, accept: info.accept),
                                quality: try Self.quality(info.query["q"]) ?? recipe.quality,
                                disposition: try ContentDisposition(query: info.query))
        case .resize:
            guard !configuration.onlyPresets else { throw ServiceError(.notFound, "no such route (presets only)") }
            guard info.query["src"].map({ !$0.isEmpty }) == true else { throw ServiceError(.missingSource, "src is required") }
            try Self.refuseUnknownParameters(info, known: Self.resizeParameters)
            let processing = try Self.processing(from: info.query, limits: limits)
            return RequestShape(label: "resize", try checked(ImageAsk(
                source: info.query["src"] ?? "", processing: processing,
                output: try OutputChoice(fmt: info.query["fmt"], accept: info.accept), quality: try Self.quality(info.query["q"]),
                disposition: try ContentDisposition(query: info.query))))
        case .imgproxy where configuration.onlyPresets, .thumbor where configuration.onlyPresets:
            throw ServiceError(.notFound, "no such route (presets only)")
        case .imgproxy(let path):
            guard let imgproxy else { throw ServiceError(.notFound, "no such route (imgproxy URLs are off)") }
            return RequestShape(label: "imgproxy", try checked(try imgproxy.ask(path: path, accept: info.accept)))
        case .thumbor(let path):
            guard let thumbor else { throw ServiceError(.notFound, "no such route (thumbor URLs are off)") }
            return RequestShape(label: "thumbor", try checked(try thumbor.ask(path: path, accept: info.accept)))
        }
    }

    /// `ask`, whichever dialect made it, with its processing's ranges checked (``ImageProcessing/validate(_:)``
    /// under the output-pixel limit) and its watermark's version (`400 bad_watermark` when it names no
    /// configured watermark), so that a changed watermark file makes new keys.
    private func checked(_ ask: ImageAsk) throws(ServiceError) -> ImageAsk {
        let ranges = ImageProcessing.Limits(maximumOutputPixels: configuration.limits.maximumOutputPixels)
        do throws(ImageProcessing.Invalid) { try ask.processing.validate(ranges) } catch { throw ServiceError(error) }
        guard let name = ask.processing.watermark?.name else { return ask }
        guard let loaded = watermarks[name] else { throw ServiceError(.watermark, "no watermark named '\(name)'") }
        var ask = ask
        ask.processing.watermark?.version = loaded.version
        return ask
    }

    /// The query parameters a preset request takes: `fmt`, `q`, the signature's `s`, `info` (the summary
    /// route's), `cb`, a cache-buster that changes nothing but the URL, and `filename` and `attachment`
    /// (``ContentDisposition``).
    static let presetParameters: Set<String> = ["fmt", "q", "s", "info", "cb", "filename", "attachment"]
    /// The query parameters of `/v1/resize`: the preset's, `src` and the processing's (``processing(from:limits:)``).
    static let resizeParameters = presetParameters.union(["src", "w", "h", "mode", "adaptive", "gravity", "fp", "enlarge", "bg", "dpr", "blur", "rotate", "flip",
                                                                 "crop", "crop_gravity", "crop_box", "trim", "padding", "sharpen", "pixelate", "grayscale",
                                                                 "watermark", "watermark_position", "watermark_opacity", "watermark_scale", "watermark_offset", "metadata", "animation"])

    /// `400 unknown_parameter` for the first parameter of `info` (by name) that is not `known`: an option
    /// Tessera does not have, or a typo, is refused rather than ignored (it would be a silently different image).
    static func refuseUnknownParameters(_ info: RequestInfo, known: Set<String>) throws(ServiceError) {
        guard let unknown = info.query.keys.sorted().first(where: { !known.contains($0) }) else { return }
        throw ServiceError(.unknownParameter, "unknown parameter '\(unknown)' (this route takes \(names(known.sorted())))")
    }

    /// Resolves `info` (see `ServeRequest`). With `trustingRecentCheck`, a file's check younger than
    /// `sourceCheckIntervalSeconds` is reused (`verified` false); whoever reads the source then checks the
    /// file again (`rechecked(_:)`).
    func resolve(_ info: RequestInfo, trustingRecentCheck: Bool) throws(ServiceError) -> ServeRequest {
        let shape = try shape(info)
        func request(_ source: ServeRequest.Source, prefix: String, key: String) -> ServeRequest {
            ServeRequest(label: shape.label, preset: shape.preset, source: source, processing: shape.processing, output: shape.output,
                         quality: shape.quality, disposition: shape.disposition, expires: shape.expires, ifNoneMatch: info.ifNoneMatch,
                         ifModifiedSince: info.ifModifiedSince.flatMap(ImageService.httpSeconds), key: key, keyPrefix: prefix, shapeKey: shape.key)
        }
        /// A file of a directory source (`name`) or under the root (`nil`), checked, and its request.
        func fileRequest(_ file: RootDirectory.File, in directory: RootDirectory, source name: String?,
                         prefix: String) throws(ServiceError) -> ServeRequest {
            let file = try withinSizeLimit(name.map { file.named($0) } ?? file)
            return request(.file(file, in: directory), prefix: prefix, key: ServeRequest.fileKey(prefix: prefix, file: file, shape: shape.key))
        }
        /// `path` (decoded) in the root or, after `@NAME/`, in a named source.
        func pathRequest(_ path: String, prefix: String) throws(ServiceError) -> ServeRequest {
            guard path.hasPrefix("@") else {
                return try fileRequest(try root.file(path, trustingRecentCheck: trustingRecentCheck), in: root, source: nil, prefix: prefix)
            }
            let (name, key) = try Self.split(path)
            switch sources[name] {
            case .directory(let directory):
                return try fileRequest(try directory.file(key, trustingRecentCheck: trustingRecentCheck), in: directory,
                                       source: name, prefix: prefix)
            case .objects(let store):
                try RootDirectory.checkSyntax(key)
                return request(.object(store, key: key, version: nil), prefix: prefix, key: "\(prefix)|@\(name)/\(key)|\(shape.key)")
            case nil:
                throw ServiceError(.unknownSource, "no source named '\(name)'")
            }
        }
        switch info.route {
        case .preset(let name, let rawPath):
            return try pathRequest(try RootDirectory.decode(rawPath), prefix: "p|\(name)")
        case .resize, .imgproxy, .thumbor:
            guard let src = shape.source, !src.isEmpty else { throw ServiceError(.missingSource, "src is required") }
            switch try SourceName(src) {
            case .url(let text):
                guard remote != nil else { throw ServiceError(.remoteDisabled, "remote sources are off (no allowed hosts configured)") }
                guard let url = URL(string: text), let host = url.host, !host.isEmpty else { throw ServiceError(.badSource, "src is not a valid URL") }
                guard remoteGuard.allows(host: host) else { throw ServiceError(.remoteRefused, "host '\(host)' is not allowed") }
                return request(.remote(url), prefix: "u", key: "u|\(text)|\(shape.key)")
            case .bucketObject(let bucket, let key):
                guard let store = buckets[bucket] else { throw ServiceError(.unknownSource, "bucket '\(bucket)' is not allowed") }
                try RootDirectory.checkSyntax(key)
                return request(.object(store, key: key, version: nil), prefix: "r", key: "r|s3://\(bucket)/\(key)|\(shape.key)")
            case .path(let path):
                return try pathRequest(path, prefix: "r")
            }
        }
    }

    /// `request` with its file checked now, when ``resolve(_:trustingRecentCheck:)`` trusted a recent
    /// check and the source is about to be read: a `stat` of the same path through the directory it was
    /// found in, the size limit, and the key made with the version found. Any other request as it is.
    func rechecked(_ request: ServeRequest) throws(ServiceError) -> ServeRequest {
        guard let file = request.file, !file.verified else { return request }
        return try checkedAgain(request)
    }

    /// `request`, a file's, with its file checked now (a `stat`, whatever the last check was) and its key
    /// naming the version found. Any other request as it is.
    func checkedAgain(_ request: ServeRequest) throws(ServiceError) -> ServeRequest {
        guard case .file(let file, let directory) = request.source else { return request }
        return request.rechecked(try withinSizeLimit(try file.rechecked(in: directory)))
    }

    /// `file`, when it is not larger than ``ServerConfiguration/Limits/maximumSourceBytes``.
    private func withinSizeLimit(_ file: RootDirectory.File) throws(ServiceError) -> RootDirectory.File {
        let limit = configuration.limits.maximumSourceBytes
        guard file.size <= limit else {
            throw ServiceError(.sourceTooLarge, "the source has \(file.size) bytes, more than the limit of \(limit)")
        }
        return file
    }

    /// `@NAME/KEY` split into the name and the key (both non-empty).
    static func split(_ path: String) throws(ServiceError) -> (name: String, key: String) {
        let parts = path.dropFirst().split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw ServiceError(.badPath, "a named source's path is @NAME/KEY")
        }
        return (String(parts[0]), String(parts[1]))
    }

    /// `w` or `h` (`parameter`): in ``ImageProcessing/Limits/dimensionRange`` (1…8192), one of the allowed
    /// sizes when there are any.
    static func dimension(_ text: String?, name: String, parameter: ImageProcessing.Parameter,
                          allowed: [Int]) throws(ServiceError) -> Int {
        let range = ImageProcessing.Limits().dimensionRange
        guard let text, let value = Int(text), range.contains(value) else {
            throw ServiceError(parameter, "\(name) must be a whole number from \(range)")
        }
        guard allowed.isEmpty || allowed.contains(value) else {
            throw ServiceError(.sizeNotAllowed, "\(name)=\(value) is not one of the allowed sizes")
        }
        return value
    }

    /// `q`, in ``ImageProcessing/Limits/qualityRange`` (1…100); `nil` when absent.
    static func quality(_ text: String?) throws(ServiceError) -> Int? {
        guard let text else { return nil }
        let range = ImageProcessing.Limits().qualityRange
        guard let q = Int(text), range.contains(q) else {
            throw ServiceError(.quality, "q must be \(range.lower)…\(range.upper)")
        }
        return q
    }
}
#endif
