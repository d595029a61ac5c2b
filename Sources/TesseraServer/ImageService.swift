#if Serving
import Crypto
import Foundation
import Logging
import Metrics
import NIOCore
@_spi(Internal) import TesseraImaging
import Tessera
import TesseraHTTP

/// The image service behind `tessera serve`, independent of HTTP plumbing: presets on image tables, ad-hoc
/// resizes, remote sources, format negotiation, limits and the encoded-response cache. `TesseraRouter`
/// puts it behind Hummingbird routes; docs/SERVING.md describes the behaviour.
public final class ImageService: Sendable {
    /// What the service was made with.
    public let configuration: ServerConfiguration
    let root: RootDirectory
    let cache: ImageCache
    let presets: [String: (preset: ServerConfiguration.Preset, format: ImageFormat)]
    let responses: ResponseCache
    let decodeSlots: DecodeSlots
    let decoder: ImageDecoder
    let produced = ResultCoalescer<ResponseCache.Entry>()
    let remoteGuard: RemoteSourceGuard
    let remote: (manager: ImageManager, loader: HTTPDataLoader)?
    let signer: URLSigner?
    let metrics: ServiceMetrics
    /// The `Cache-Control` of every image response, `public, max-age=N` (made once).
    private let cacheControl: String
    /// Output sizes of `fit` presets by source image id (the slot holds the image at its top-left corner).
    private let fittedSizes = LockedValue([UUID: PixelSize]())
    private let counters = LockedValue(ServiceStatistics())

    /// Opens (or creates) one image table per preset and, when remote hosts are allowed, an `ImageManager`
    /// whose loader checks every URL with the SSRF guard.
    /// - Parameters:
    ///   - configuration: the root, presets, limits and the rest; checked first (`validate()`).
    ///   - metricsFactory: where metrics go (the server passes its Prometheus factory); `nil`: the
    ///     global `MetricsSystem` factory. The library's own metrics (image tables, remote fetching:
    ///     docs/OBSERVABILITY.md) go there too.
    ///   - logger: receives the library's events (table repairs, downloads, evictions…); silent by default.
    public init(configuration: ServerConfiguration, metricsFactory: (any MetricsFactory)? = nil,
                logger: Logger = Observability.silentLogger) throws {
        try configuration.validate()
        self.configuration = configuration
        cacheControl = "public, max-age=\(configuration.maxAgeSeconds)"
        root = try RootDirectory(configuration.root, recheckSeconds: configuration.sourceCheckIntervalSeconds)
        let tables = URL(fileURLWithPath: configuration.tablesDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("tessera-serve-tables").path)
        try FileManager.default.createDirectory(at: tables, withIntermediateDirectories: true)
        if (tables.standardizedFileURL.path + "/").hasPrefix(root.realPath + "/") {
            throw ServerConfigurationError("the tables directory must not be inside --root (it would be served)")
        }
        let limits = configuration.limits
        decoder = ImageDecoder(limits: DecodingLimits(maximumPixelCount: limits.maximumSourcePixels,
                                                      maximumInputBytes: limits.maximumSourceBytes))
        let metrics = ServiceMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        self.metrics = metrics
        decodeSlots = DecodeSlots(limit: limits.maximumConcurrentDecodes, queueLimit: limits.maximumQueuedDecodes) { running, waiting in
            metrics.decodesRunning.set(running)
            metrics.decodesWaiting.set(waiting)
        }
        var presets: [String: (ServerConfiguration.Preset, ImageFormat)] = [:]
        for preset in configuration.presets {
            let format = ImageFormat(name: "serve-\(preset.name)-\(preset.width)x\(preset.height)-\(preset.mode.rawValue)",
                                     family: "serve-\(preset.name)", style: .bgra32,
                                     size: PixelSize(width: preset.width, height: preset.height),
                                     maximumCount: configuration.tableCapacity)
            presets[preset.name] = (preset, format)
        }
        self.presets = presets
        let provider = PresetSourceProvider(decoder: decoder, slots: decodeSlots, metrics: metrics,
                                            sizes: presets.values.map(\.1.size), counters: counters,
                                            maximumBytes: limits.maximumSourceBytes)
        let observability = Observability(logger: logger, metricsFactory: metricsFactory)
        cache = try ImageCache(formats: presets.values.map(\.1), directory: tables, provider: provider, decoder: decoder,
                               configuration: ImageCache.Configuration(observability: observability))
        responses = ResponseCache(capacityBytes: configuration.responseCacheBytes)
        remoteGuard = RemoteSourceGuard(allowedHosts: configuration.remote.allowedHosts,
                                        allowedRanges: configuration.remote.allowedAddressRanges.compactMap(AddressRange.init))
        if remoteGuard.isEnabled {
            let check = remoteGuard
            let loader = HTTPDataLoader(configuration: HTTPDataLoader.Configuration(refusedHostCooldown: .zero),
                                        urlCheck: { url in try await check.checkedAddress(url) })
            let disk = URL(fileURLWithPath: configuration.remote.diskCacheDirectory ?? tables.appendingPathComponent("remote").path)
            let settings = ImageManager.Configuration(disk: DiskCache.Configuration(directory: disk),
                                                      requestTimeout: .seconds(limits.requestTimeoutSeconds),
                                                      maximumResponseBytes: limits.maximumSourceBytes,
                                                      observability: observability)
            remote = (try ImageManager(configuration: settings, loader: loader, decoder: decoder), loader)
        } else {
            remote = nil
        }
        signer = configuration.signingKeys.isEmpty ? nil : URLSigner(keys: configuration.signingKeys)
    }

    /// What the service did so far (also exported as metrics).
    public var statistics: ServiceStatistics { counters.withLock { $0 } }

    /// Writes the tables' dirty pages to disk and closes the remote loader: call once no request runs.
    public func shutdown() async {
        for (_, entry) in presets { try? cache.table(for: entry.format)?.flush(synchronously: true) }
        try? await remote?.loader.shutdown()
    }

    // MARK: Requests

    /// An encoded image, or a `304` for a matching `If-None-Match`.
    public struct ImageResponse: Sendable {
        /// 200 or 304.
        public var status: Int
        /// Empty for 304.
        public var body: [UInt8] {
            get { Array(bodyBuffer.readableBytesView) }
            set { bodyBuffer = ByteBuffer(bytes: newValue) }
        }
        /// The body as held by the response cache: written to a socket without a copy.
        var bodyBuffer: ByteBuffer
        /// The `Content-Type` (`image/jpeg`, `image/png`, `image/webp`).
        public var contentType: String
        /// The strong `ETag`, quoted: 128 bits of SHA-256 of the response's cache key, in hex.
        public var etag: String
        /// The `Cache-Control` value (`public, max-age=N`).
        public var cacheControl: String
        /// `memory`, `table`, `miss`, `not-modified` or `remote` (the log line's and `X-Tessera-Cache`'s value).
        public var outcome: String
    }

    /// What a request asks besides the image: the raw query, `Accept` and `If-None-Match`.
    public struct RequestInfo: Sendable {
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

        /// A request for `path` with the raw query (parsed into ``query``) and the two headers that matter.
        public init(path: String, rawQuery: String?, accept: String?, ifNoneMatch: String?) {
            self.path = path
            self.rawQuery = rawQuery
            self.query = Self.parse(rawQuery)
            self.accept = accept
            self.ifNoneMatch = ifNoneMatch
        }

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

    /// `GET /v1/{preset}/{path…}`: `rawPath` is the part after the preset, still percent-encoded.
    public func presetImage(preset name: String, rawPath: String, request: RequestInfo) async throws(ServiceError) -> ImageResponse {
        let (resolved, cached) = try cachedPresetImage(preset: name, rawPath: rawPath, request: request)
        if let cached { return cached }
        return try await producePresetImage(resolved)
    }

    /// A preset request checked and resolved to its file and response cache key.
    struct PresetRequest: Sendable {
        let name: String
        let preset: ServerConfiguration.Preset
        let format: ImageFormat
        let file: RootDirectory.File
        let output: OutputChoice
        let quality: Int
        let key: String
    }

    /// The part of a preset request that needs no waiting: signature, preset, path checks and `stat` (or a
    /// check younger than `sourceCheckIntervalSeconds`), the cache key; then the answer when it is a `304`
    /// or an encoded-response memory hit (`nil` otherwise, with a file checked by this request).
    /// A hit's `If-None-Match` is compared with the entry's stored ETag, so a hit computes no hash.
    func cachedPresetImage(preset name: String, rawPath: String,
                           request: RequestInfo) throws(ServiceError) -> (PresetRequest, ImageResponse?) {
        try verifySignature(request)
        guard let (preset, format) = presets[name] else { throw ServiceError(404, "unknown_preset", "no preset named '\(name)'") }
        let relative = try RootDirectory.decode(rawPath)
        let output = try OutputChoice(fmt: request.query["fmt"], accept: request.accept)
        let quality = try Self.quality(request.query["q"], default: configuration.defaultQuality)
        func resolve(_ file: RootDirectory.File) throws(ServiceError) -> PresetRequest {
            guard file.size <= configuration.limits.maximumSourceBytes else {
                throw ServiceError(413, "source_too_large", "the source has \(file.size) bytes, more than the limit of \(configuration.limits.maximumSourceBytes)")
            }
            let key = "p|\(name)|\(file.relativePath)|\(file.version)|\(output.key)|\(quality)"
            return PresetRequest(name: name, preset: preset, format: format, file: file, output: output, quality: quality, key: key)
        }
        func fromMemory(_ resolved: PresetRequest) -> ImageResponse? {
            responses.get(resolved.key).map { hit in
                Self.matches(request.ifNoneMatch, hit.etag) ? notModified(hit.etag) : ok(hit, outcome: "memory", preset: name)
            }
        }
        var resolved = try resolve(try root.file(relative, trustingRecentCheck: true))
        if let answer = fromMemory(resolved) { return (resolved, answer) }
        if !resolved.file.verified {   // the source will be read, or an ETag computed from its version: check it now
            resolved = try resolve(try root.file(relative))
            if let answer = fromMemory(resolved) { return (resolved, answer) }
        }
        let key = resolved.key
        if request.ifNoneMatch != nil {
            let etag = Self.etag(key)
            if Self.matches(request.ifNoneMatch, etag) { return (resolved, notModified(etag)) }
        }
        return (resolved, nil)
    }

    /// The rest of a preset request that missed the memory cache: coalesced per key, a table hit or a
    /// decode into the table, then one encode stored in the memory cache.
    func producePresetImage(_ request: PresetRequest) async throws(ServiceError) -> ImageResponse {
        let key = request.key, preset = request.preset, format = request.format
        let etag = Self.etag(key)
        let entity = FileEntity(file: request.file, preset: preset, fittedSizes: fittedSizes)
        let outcome = LockedValue("table")
        do {
            let entry = try await produced.value(for: key) { [self] in
                // A job that finished just before this one started has stored its response already.
                if let hit = responses.get(key) { return hit }
                let image: TableImage
                if let hit = cache.cachedImage(for: entity, format: format) {
                    image = hit
                    counters.withLock { $0.tableHits += 1 }
                    metrics.tableHits.increment()
                } else {
                    outcome.withLock { $0 = "miss" }
                    counters.withLock { $0.tableMisses += 1 }
                    metrics.tableMisses.increment()
                    image = try await cache.image(for: entity, format: format)
                }
                let visible = try self.visiblePart(of: image, entity: entity, preset: preset)
                let entry = try await self.encode(visible, output: request.output, quality: request.quality, etag: etag)
                storeResponse(entry, for: key)   // before the waiters resume, so that a later request hits it
                return entry
            }
            return ok(entry, outcome: outcome.withLock { $0 }, preset: request.name)
        } catch {
            throw ServiceError.from(error)
        }
    }

    /// `GET /v1/resize?src=…&w=&h=&mode=&fmt=&q=`.
    public func resizedImage(request: RequestInfo) async throws(ServiceError) -> ImageResponse {
        try verifySignature(request)
        guard let src = request.query["src"], !src.isEmpty else { throw ServiceError(400, "missing_src", "src is required") }
        let width = try dimension(request.query["w"], name: "w", allowed: configuration.limits.allowedWidths)
        let height = try dimension(request.query["h"], name: "h", allowed: configuration.limits.allowedHeights)
        guard width * height <= configuration.limits.maximumOutputPixels else {
            throw ServiceError(400, "output_too_large", "\(width)x\(height) is more than \(configuration.limits.maximumOutputPixels) output pixels")
        }
        guard let mode = ServerConfiguration.Mode(rawValue: request.query["mode"] ?? "fit") else {
            throw ServiceError(400, "bad_mode", "mode is fill or fit")
        }
        let output = try OutputChoice(fmt: request.query["fmt"], accept: request.accept)
        let quality = try Self.quality(request.query["q"], default: configuration.defaultQuality)
        let box = PixelSize(width: width, height: height)
        let lowered = src.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            return try await remoteImage(src, box: box, mode: mode, output: output, quality: quality, request: request)
        }
        if lowered.contains("://") { throw ServiceError(400, "bad_src", "src is a path under the root or an http(s) URL") }
        let file = try root.file(src)
        guard file.size <= configuration.limits.maximumSourceBytes else {
            throw ServiceError(413, "source_too_large", "the source has \(file.size) bytes, more than the limit of \(configuration.limits.maximumSourceBytes)")
        }
        let key = "r|\(file.relativePath)|\(file.version)|\(width)x\(height)|\(mode.rawValue)|\(output.key)|\(quality)"
        let etag = Self.etag(key)
        if Self.matches(request.ifNoneMatch, etag) { return notModified(etag) }
        if let hit = responses.get(key) { return ok(hit, outcome: "memory", preset: "resize") }
        do {
            let entry = try await produced.value(for: key) { [self] in
                if let hit = responses.get(key) { return hit }
                let path = file.realPath
                let image = try await self.decodeResized({ try Data(contentsOf: URL(fileURLWithPath: path)) }, box: box, mode: mode)
                let entry = try await self.encode(image, output: output, quality: quality, etag: etag)
                storeResponse(entry, for: key)
                return entry
            }
            return ok(entry, outcome: "miss", preset: "resize")
        } catch {
            throw ServiceError.from(error)
        }
    }

    /// A remote `src`: the bytes through `ImageManager` (coalesced per URL, disk cache, HTTP freshness),
    /// every URL and redirect checked by the SSRF guard.
    private func remoteImage(_ src: String, box: PixelSize, mode: ServerConfiguration.Mode, output: OutputChoice, quality: Int,
                             request: RequestInfo) async throws(ServiceError) -> ImageResponse {
        guard let remote else { throw ServiceError(403, "remote_disabled", "remote sources are off (no allowed hosts configured)") }
        guard let url = URL(string: src), let host = url.host, !host.isEmpty else { throw ServiceError(400, "bad_src", "src is not a valid URL") }
        guard remoteGuard.allows(host: host) else { throw ServiceError(403, "remote_refused", "host '\(host)' is not allowed") }
        do {
            // Checked here too so that a refused address is refused before the disk cache is consulted.
            try await remoteGuard.check(url)
            let start = ContinuousClock.now
            let data = try await remote.manager.data(for: url)
            metrics.downloadTime.recordSince(start)
            let digest = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
            let key = "u|\(src)|\(digest)|\(box.width)x\(box.height)|\(mode.rawValue)|\(output.key)|\(quality)"
            let etag = Self.etag(key)
            if Self.matches(request.ifNoneMatch, etag) { return notModified(etag) }
            if let hit = responses.get(key) { return ok(hit, outcome: "memory", preset: "resize") }
            let entry = try await produced.value(for: key) { [self] in
                if let hit = responses.get(key) { return hit }
                let image = try await self.decodeResized({ data }, box: box, mode: mode)
                let entry = try await self.encode(image, output: output, quality: quality, etag: etag)
                storeResponse(entry, for: key)
                return entry
            }
            return ok(entry, outcome: "remote", preset: "resize")
        } catch {
            throw ServiceError.from(error)
        }
    }

    // MARK: Pieces

    /// Decodes the source into `box` (fill: exactly the box, cropped; fit: inside the box, aspect kept) in a
    /// decode slot. A local source is read only once the slot is taken, so requests waiting for a slot
    /// hold no source bytes: the decode queue's memory stays a few bytes per request.
    private func decodeResized(_ source: @escaping @Sendable () throws -> Data, box: PixelSize,
                               mode: ServerConfiguration.Mode) async throws -> Bitmap {
        try await decodeSlots.run { [self] in
            let data = try source()
            let info = try decoder.probe(data)
            let size = mode == .fill ? box : Self.fittedSize(of: info.displaySize, in: box)
            let start = ContinuousClock.now
            defer { metrics.decodeTime.recordSince(start) }
            counters.withLock { $0.decodes += 1 }
            return try decoder.thumbnail(data, size: size, mode: .aspectFill)
        }
    }

    /// The part of a preset's slot that is the image: all of it for `fill`, the top-left fitted size for `fit`.
    private func visiblePart(of image: TableImage, entity: FileEntity, preset: ServerConfiguration.Preset) throws -> any BitmapImage {
        guard preset.mode == .fit else { return image }
        let size: PixelSize
        if let known = fittedSizes.withLock({ $0[entity.sourceImageID] }) {
            size = known
        } else {
            // A table hit from an earlier process: read the header again for the source's size.
            let data = try Data(contentsOf: URL(fileURLWithPath: entity.file.realPath))
            size = Self.fittedSize(of: try decoder.probe(data).displaySize, in: PixelSize(width: preset.width, height: preset.height))
            fittedSizes.withLock { $0[entity.sourceImageID] = size }
        }
        if size == image.layout.size { return image }
        return Bitmap(width: size.width, height: size.height, style: image.style) { view in
            image.withUnsafeBytes { source in
                let rowBytes = size.width * image.style.bytesPerPixel
                for y in 0..<size.height {
                    view.row(y).copyMemory(from: source.baseAddress! + y * image.bytesPerRow, byteCount: rowBytes)
                }
            }
        }
    }

    /// Encodes in the negotiated format (PNG instead of JPEG for an image with transparent pixels),
    /// in a decode slot: encodes (AVIF's above all) are CPU work under the same bound as decodes.
    private func encode(_ image: some BitmapImage, output: OutputChoice, quality: Int, etag: String) async throws -> ResponseCache.Entry {
        try await decodeSlots.run { [self] in try encodeNow(image, output: output, quality: quality, etag: etag) }
    }

    private func encodeNow(_ image: some BitmapImage, output: OutputChoice, quality: Int, etag: String) throws -> ResponseCache.Entry {
        let format = output.format(hasAlpha: Self.hasTransparency(image))
        let start = ContinuousClock.now
        defer { metrics.encodeTime.recordSince(start) }
        counters.withLock { $0.encodes += 1 }
        let bytes: [UInt8]
        switch format {
        case .jpeg: bytes = try JPEGEncoder(quality: quality).encode(image)
        case .png: bytes = try PNGEncoder().encode(image)
        case .webp: bytes = try WebPEncoder(quality: quality).encode(image)
        case .avif: bytes = try AVIFEncoder(quality: quality).encode(image)
        }
        return ResponseCache.Entry(body: ByteBuffer(bytes: bytes), contentType: format.contentType, etag: etag)
    }

    /// Keeps an encoded response in the memory cache and exports the cache's size.
    private func storeResponse(_ entry: ResponseCache.Entry, for key: String) {
        responses.set(key, entry)
        metrics.responseCacheBytes.set(responses.byteCount)
    }

    private func ok(_ entry: ResponseCache.Entry, outcome: String, preset: String) -> ImageResponse {
        if outcome == "memory" { counters.withLock { $0.memoryHits += 1 } }
        metrics.bytesServed.increment(by: Int64(entry.body.readableBytes))
        return ImageResponse(status: 200, bodyBuffer: entry.body, contentType: entry.contentType, etag: entry.etag,
                             cacheControl: cacheControl, outcome: outcome)
    }

    private func notModified(_ etag: String) -> ImageResponse {
        ImageResponse(status: 304, bodyBuffer: ByteBuffer(), contentType: "", etag: etag, cacheControl: cacheControl, outcome: "not-modified")
    }

    private func verifySignature(_ request: RequestInfo) throws(ServiceError) {
        guard let signer else { return }
        try signer.verify(path: request.path, rawQuery: request.rawQuery)
    }

    private func dimension(_ text: String?, name: String, allowed: [Int]) throws(ServiceError) -> Int {
        guard let text, let value = Int(text), value > 0, value <= 8192 else {
            throw ServiceError(400, "bad_size", "\(name) must be a whole number from 1 to 8192")
        }
        guard allowed.isEmpty || allowed.contains(value) else {
            throw ServiceError(400, "size_not_allowed", "\(name)=\(value) is not one of the allowed sizes")
        }
        return value
    }

    static func quality(_ text: String?, default value: Int) throws(ServiceError) -> Int {
        guard let text else { return value }
        guard let q = Int(text), (1...100).contains(q) else { throw ServiceError(400, "bad_quality", "q must be 1…100") }
        return q
    }

    /// A strong ETag: 128 bits of SHA-256 of the response's cache key, as 32 hex digits in quotes.
    static func etag(_ key: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [0x22]
        text.reserveCapacity(34)
        for byte in SHA256.hash(data: Data(key.utf8)).prefix(16) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        text.append(0x22)
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `If-None-Match` (a list, or `*`) names `etag` (weak comparison, as RFC 9110 asks for it).
    static func matches(_ header: String?, _ etag: String) -> Bool {
        guard let header else { return false }
        if header.trimmingCharacters(in: .whitespaces) == "*" { return true }
        return header.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }

    /// The largest size with `source`'s aspect ratio inside `box` (at least 1×1).
    static func fittedSize(of source: PixelSize, in box: PixelSize) -> PixelSize {
        let scale = min(Double(box.width) / Double(source.width), Double(box.height) / Double(source.height))
        return PixelSize(width: min(box.width, max(1, Int((Double(source.width) * scale).rounded()))),
                         height: min(box.height, max(1, Int((Double(source.height) * scale).rounded()))))
    }

    /// Whether any pixel is not fully opaque (only `bgra32` can say so).
    static func hasTransparency(_ image: some BitmapImage) -> Bool {
        guard image.style == .bgra32 else { return false }
        return image.withUnsafeBytes { bytes in
            for y in 0..<image.height {
                let row = y * image.bytesPerRow
                var x = 3
                while x < image.width * 4 {
                    if bytes[row + x] != 255 { return true }
                    x += 4
                }
            }
            return false
        }
    }
}

/// Counts of what the service did (also in `/metrics`).
public struct ServiceStatistics: Sendable, Hashable {
    /// Source images decoded (preset misses and ad-hoc resizes).
    public var decodes = 0
    /// Responses encoded.
    public var encodes = 0
    /// Responses served from the encoded-response memory cache.
    public var memoryHits = 0
    /// Preset requests answered from an image table.
    public var tableHits = 0
    /// Preset requests that had to fill the table.
    public var tableMisses = 0
}
#endif
