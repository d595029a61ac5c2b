#if Serving
import Foundation
import NIOCore
@_spi(Internal) import TesseraImaging
import Tessera

/// Where a produce gets its source's bytes: a file is read once a permit of the work limit is held, so
/// requests waiting in its queue hold no file bytes; an object is read before the permit is taken, so
/// that no permit waits on the network.
enum SourceBytes: Sendable {
    /// A file (its real path).
    case file(String)
    /// An object of a store at version `tag`: `known` when the version came with the bytes, else read.
    case object(any ObjectStore, key: String, tag: String, known: Data?)
    /// Bytes already in hand (a remote source's download).
    case loaded(Data)

    /// The bytes that do not come from a file, read now (before a permit is taken); `nil` for a file.
    func fetched() async throws -> Data? {
        switch self {
        case .file: return nil
        case .object(let store, let key, let tag, let known):
            if let known { return known }
            return try await store.bytes(of: key, version: tag)
        case .loaded(let data): return data
        }
    }

    /// The bytes, given what ``fetched()`` returned: a file's are read now (under the permit).
    func contents(fetched: Data?) throws -> Data {
        if let fetched { return fetched }
        guard case .file(let path) = self else { return Data() }
        return try ImageFile.contents(of: path)
    }
}

/// What a produce drew from its source: the pixels, the metadata the processing keeps, and the answer's
/// `X-Tessera-Animation` (`nil` for a still source).
struct Drawing: Sendable {
    var drawn: Drawn
    var metadata: ImageMetadata
    var animation: String?
    /// The source's format, for the answers that keep it (``OutputChoice/format(hasAlpha:source:)``).
    var sourceFormat: ImageFileFormat?
}

/// A still image, or every frame of an animation.
enum Drawn: Sendable {
    case still(Bitmap)
    case animation(Animation)

    /// The still, or the animation's first frame.
    var still: Bitmap {
        switch self {
        case .still(let image): image
        case .animation(let animation): animation.frames[0].image
        }
    }
}

extension ImageService {
    /// The work of one response key (run once per key by the work pool): the pixels from the preset's
    /// table, a decode of the file, or a download and decode; then one encode, kept in the memory cache.
    func produce(_ request: ServeRequest) async throws -> (ResponseCache.Entry, CacheOutcome) {
        switch request.source {
        case .file(let file, _):
            // A job that finished just before this one started has stored its response already.
            if let hit = responses.get(request.key) { return (hit, .memory) }
            let outcome: CacheOutcome
            let entry: ResponseCache.Entry
            if let table = request.preset {
                return try await fromTable(table, source: PresetTable.Source(file), request: request, bytes: .file(file.realPath))
            } else {
                let drawing = try await draw(.file(file.realPath), processing: request.processing, animates: request.output.animates)
                entry = try await encode(drawing, request: request, key: request.key)
                outcome = .produced
            }
            return (entry, outcome)
        case .remote(let url):
            guard let remote else { throw ServiceError(.remoteDisabled, "remote sources are off (no allowed hosts configured)") }
            // Checked here too, so that a refused address is refused before the disk cache is consulted.
            try await remoteGuard.check(url)
            let start = ContinuousClock.now
            let data = try await remote.manager.data(for: url)
            metrics.downloadTime.recordSince(start)
            let digest = ObjectVersion.digest(of: data)
            let key = request.key(withDigest: digest)
            if let hit = responses.get(key) { return (hit, .memory) }
            let drawing = try await draw(.loaded(data), processing: request.processing, animates: request.output.animates)
            return (try await encode(drawing, request: request, key: key), .remote)
        case .object(let store, let key, let version):
            if let hit = responses.get(request.key) { return (hit, .memory) }
            let bytes = SourceBytes.object(store, key: key, tag: version?.tag ?? "", known: version?.data)
            if let table = request.preset, let version {
                return try await fromTable(table, source: PresetTable.Source(identity: Self.namedIdentity(source: store.name, key: key),
                                                                             version: version.tag),
                                           request: request, bytes: bytes)
            }
            let drawing = try await draw(bytes, processing: request.processing, animates: request.output.animates)
            return (try await encode(drawing, request: request, key: request.key), .produced)
        }
    }

    /// The answer of a preset request from `table`: the slot of `source` when the table holds it, else a
    /// fill from `bytes`; then one encode. A table holds pixels only: a recipe that keeps metadata reads
    /// the source's again for it, first (once per response, which the memory cache then keeps). A table
    /// holds still sources only (``fill(_:with:bytes:)``): on a miss, when the answer may animate, an
    /// animated source is drawn here, every frame, and never stored.
    private func fromTable(_ table: PresetTable, source: PresetTable.Source, request: ServeRequest,
                           bytes: SourceBytes) async throws -> (ResponseCache.Entry, CacheOutcome) {
        if let hit = table.image(of: source) {
            counters.withLock { $0.tableHits += 1 }
            metrics.tableHits.increment()
            let metadata = try await kept(request.processing.metadata, of: bytes)
            return (try await encode(hit, integrity: hit.integrity, request: request, key: request.key, metadata: metadata), .table)
        }
        counters.withLock { $0.tableMisses += 1 }
        metrics.tableMisses.increment()
        let filled = try await fill(table, with: source, bytes: bytes).value
        // A still source's fill is stored; an animated one's first frame is not, and an answer that may
        // animate draws every frame instead (so a still source is never probed for frames).
        if case .unstored = filled, request.processing.frames == .all, request.output.animates, try await frameCount(of: bytes) > 1 {
            let drawing = try await draw(bytes, processing: request.processing, animates: true)
            return (try await encode(drawing, request: request, key: request.key), .produced)
        }
        let metadata = try await kept(request.processing.metadata, of: bytes)
        switch filled {
        case .slot(let image):
            return (try await encode(image, integrity: image.integrity, request: request, key: request.key, metadata: metadata), .produced)
        case .unstored(let image):
            return (try await encode(image, integrity: image.integrity, request: request, key: request.key, metadata: metadata), .produced)
        }
    }

    /// The number of frames of the image in `bytes` (the GIF decoder counts up to its limit + 1), read under a
    /// permit of the work limit.
    private func frameCount(of bytes: SourceBytes) async throws -> Int {
        let fetched = try await bytes.fetched()
        return try await work.run { [self] in try decoder.probe(try bytes.contents(fetched: fetched)).frameCount }
    }

    /// What `policy` keeps of the metadata of `bytes`, read under a permit of the work limit; nothing read for ``ImageProcessing/Metadata/strip``.
    private func kept(_ policy: ImageProcessing.Metadata, of bytes: SourceBytes) async throws -> ImageMetadata {
        guard policy != .strip else { return ImageMetadata() }
        let fetched = try await bytes.fetched()
        return try await work.run { ImageMetadata(reading: try bytes.contents(fetched: fetched), keeping: policy) }
    }

    /// Fills `table`'s slot for `source`: once per preset and source version, whatever the output format.
    /// A fill whose waiters all left still stores what it drew. The first frame of an animated source is
    /// drawn but not stored, so that a table hit is always a still source's whole answer.
    func fill(_ table: PresetTable, with source: PresetTable.Source,
                      bytes: SourceBytes) async throws -> WorkPool<PresetTable.Filled>.Outcome {
        let key = "\(table.preset.name)|\(source.identity)|\(source.version)"
        return try await fills.value(for: key, deadline: nil) { [self] in
            if let hit = table.image(of: source) { return .slot(hit) }   // filled just before this job started
            let drawing = try await draw(bytes, processing: table.pixels, animates: false)
            guard drawing.animation == nil else { return .unstored(drawing.drawn.still) }
            return try table.store(drawing.drawn.still, of: source)
        }
    }

    /// `bytes` drawn by `processing` under a permit of the work limit (see ``SourceBytes`` for when they are
    /// read): every frame of an animated source when `animates` (``draw(_:processing:animates:)``), with what
    /// ``ImageProcessing/metadata`` keeps of their metadata (nothing read for `strip`).
    func draw(_ bytes: SourceBytes, processing: ImageProcessing, animates: Bool) async throws -> Drawing {
        let fetched = try await bytes.fetched()
        return try await work.run { [self] in
            let data = try bytes.contents(fetched: fetched)
            let metadata = ImageMetadata(reading: data, keeping: processing.metadata)
            let (drawn, animation, format) = try draw(data, processing: processing, animates: animates)
            return Drawing(drawn: drawn, metadata: metadata, animation: animation, sourceFormat: format)
        }
    }

    /// `drawing` encoded for `request`: a still by ``encode(_:integrity:output:quality:background:metadata:animation:key:lastModified:)``,
    /// an animation in the request's animated format (``OutputChoice/animatedFormat(source:)``).
    func encode(_ drawing: Drawing, request: ServeRequest, key: String) async throws -> ResponseCache.Entry {
        switch drawing.drawn {
        case .still(let image):
            return try await encode(image, integrity: image.integrity, request: request, key: key, metadata: drawing.metadata,
                                    animation: drawing.animation, sourceFormat: drawing.sourceFormat)
        case .animation(let animation):
            let format = request.output.animatedFormat(source: drawing.sourceFormat) ?? .gif
            return try await cached(key: key, source: request.sourceIdentity, integrity: .intact, lastModified: request.lastModified,
                                    animation: drawing.animation) {
                (format, try ImageEncoder(format: format, quality: request.quality ?? configuration.quality.value(for: format)).encode(animation))
            }
        }
    }

    /// ``encode(_:integrity:output:quality:background:metadata:animation:key:lastModified:)`` with `request`'s output, quality and background.
    func encode(_ image: some BitmapImage, integrity: DecodeIntegrity, request: ServeRequest, key: String,
                metadata: ImageMetadata, animation: String? = nil, sourceFormat: ImageFileFormat? = nil) async throws -> ResponseCache.Entry {
        try await encode(image, integrity: integrity, output: request.output, quality: request.quality,
                         background: request.processing.background, metadata: metadata, animation: animation, key: key,
                         lastModified: request.lastModified, sourceFormat: sourceFormat, source: request.sourceIdentity)
    }

    /// Encodes in the negotiated format (PNG instead of JPEG for an image with transparent pixels), with the
    /// imaging layer's ``ImageEncoder``, under
    /// the work limit (encodes, AVIF's above all, are CPU work like decodes), and keeps the response in
    /// the memory cache before any waiter resumes, so that a later request hits it. `integrity` is the
    /// source decode's, kept with the response (its headers, and the ETag of a truncated source).
    /// `quality` is `q`, or `nil` for the format's default (``ServerConfiguration/quality``).
    /// A transparent image encoded as JPEG is flattened onto `background` (white by default); `metadata` is
    /// written into the file (``ImageMetadata``).
    func encode(_ image: some BitmapImage, integrity: DecodeIntegrity, output: OutputChoice, quality: Int?,
                background: ImageProcessing.Background = .white, metadata: ImageMetadata = ImageMetadata(),
                animation: String? = nil, key: String, lastModified: Int? = nil,
                sourceFormat: ImageFileFormat? = nil, source: String = "") async throws -> ResponseCache.Entry {
        try await cached(key: key, source: source, integrity: integrity, lastModified: lastModified, animation: animation) { [self] in
            let hasAlpha = image.hasTransparentPixels
            let format = output.format(hasAlpha: hasAlpha, source: sourceFormat, pixels: image.width &* image.height,
                                       avifMinPixels: configuration.avifMinPixels)
            // WebP in AVIF's place (a small image `Accept` chose AVIF for) is written to look like the AVIF would.
            let inPlaceOfAVIF = format == .webp && output.chosenFormat == .avif
            let defaultQuality = inPlaceOfAVIF ? configuration.quality.webpInPlaceOfAVIF : configuration.quality.value(for: format)
            let webpEffort = inPlaceOfAVIF ? ServerConfiguration.Quality.webpEffortInPlaceOfAVIF : .standard
            let encoder = ImageEncoder(format: format, quality: quality ?? defaultQuality, speed: configuration.avifSpeed,
                                       webpEffort: webpEffort, background: background, metadata: metadata)
            return (format, try encoder.encode(image, transparent: hasAlpha))
        }
    }

    /// The response `encode` makes (the format and the file's bytes), made under the work limit, counted and
    /// timed, kept in the memory cache under `key` before any waiter resumes, so that a later request hits it.
    private func cached(key: String, source: String, integrity: DecodeIntegrity, lastModified: Int?, animation: String?,
                        _ encode: () throws -> (ImageFileFormat, [UInt8])) async throws -> ResponseCache.Entry {
        let etag = Self.etag(key, integrity: integrity)
        let entry = try await work.run { [self] in
            let start = ContinuousClock.now
            defer { metrics.encodeTime.recordSince(start) }
            counters.withLock { $0.encodes += 1 }
            let (format, bytes) = try encode()
            var entry = ResponseCache.Entry(body: ByteBuffer(bytes: bytes), contentType: format.mediaType, etag: etag, integrity: integrity,
                                            cacheControl: cacheControl(for: integrity), lastModified: lastModified, animation: animation)
            entry.source = source
            return entry
        }
        responses.set(key, entry)
        metrics.responseCacheBytes.set(responses.byteCount)
        return entry
    }
}
#endif
