#if Serving
import Crypto
import Foundation
import NIOCore
@_spi(Internal) import TesseraImaging
import Tessera

extension ImageService {
    /// The work of one response key (run once per key by the work pool): the pixels from the preset's
    /// table, a decode of the file, or a download and decode; then one encode, kept in the memory cache.
    func produce(_ request: ServeRequest) async throws -> (ResponseCache.Entry, CacheOutcome) {
        switch request.source {
        case .file(let file):
            // A job that finished just before this one started has stored its response already.
            if let hit = responses.get(request.key) { return (hit, .memory) }
            let outcome: CacheOutcome
            let entry: ResponseCache.Entry
            if let table = request.preset {
                let image: SlotView
                if let hit = table.image(of: file) {
                    counters.withLock { $0.tableHits += 1 }
                    metrics.tableHits.increment()
                    image = hit
                    outcome = .table
                } else {
                    counters.withLock { $0.tableMisses += 1 }
                    metrics.tableMisses.increment()
                    image = try await fill(table, with: file).value
                    outcome = .produced
                }
                entry = try await encode(image, integrity: image.integrity, output: request.output, quality: request.quality,
                                           background: request.processing?.background ?? .white, key: request.key)
            } else {
                let path = file.realPath
                let image = try await work.run { [self] in
                    try decode(try Data(contentsOf: URL(fileURLWithPath: path)), request: request)
                }
                entry = try await encode(image, integrity: image.integrity, output: request.output, quality: request.quality,
                                           background: request.processing?.background ?? .white, key: request.key)
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
            let digest = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
            let key = request.key(withDigest: digest)
            if let hit = responses.get(key) { return (hit, .memory) }
            let image = try await work.run { [self] in try decode(data, request: request) }
            return (try await encode(image, integrity: image.integrity, output: request.output, quality: request.quality,
                                      background: request.processing?.background ?? .white, key: key), .remote)
        }
    }

    /// Fills `table`'s slot for `file`: once per preset and source version, whatever the output format.
    /// The file is read only once a permit of the work limit is held, so requests waiting in its queue
    /// hold no source bytes. A fill whose waiters all left still stores what it decoded.
    private func fill(_ table: PresetTable, with file: RootDirectory.File) async throws -> WorkPool<SlotView>.Outcome {
        let key = "\(table.preset.name)|\(file.relativePath)|\(file.version)"
        return try await fills.value(for: key, deadline: nil) { [self] in
            if let hit = table.image(of: file) { return hit }   // filled just before this job started
            return try await work.run { [self] in
                let data = try Data(contentsOf: URL(fileURLWithPath: file.realPath))
                try decoder.limits.checkInput(byteCount: data.count)
                let info = try decoder.probe(data)   // the pixel limit, before any pixel is allocated
                let start = ContinuousClock.now
                defer { metrics.decodeTime.recordSince(start) }
                counters.withLock { $0.decodes += 1 }
                return try table.store(data, of: file, info: info, decoder: decoder)
            }
        }
    }

    /// `data` drawn for `request` (the caller holds a permit of the work limit): by its processing
    /// (`/v1/resize`), or to its output size in its box.
    private func decode(_ data: Data, request: ServeRequest) throws -> Bitmap {
        if let processing = request.processing { return try render(data, processing: processing) }
        return try decode(data, box: request.box, mode: request.mode)
    }

    /// `data` decoded to its output size in `box` (the caller holds a permit of the work limit).
    private func decode(_ data: Data, box: PixelSize, mode: ServerConfiguration.Mode) throws -> Bitmap {
        try decoder.limits.checkInput(byteCount: data.count)
        let info = try decoder.probe(data)
        let start = ContinuousClock.now
        defer { metrics.decodeTime.recordSince(start) }
        counters.withLock { $0.decodes += 1 }
        return try Renderer.render(data, info: info, box: box, mode: mode, decoder: decoder)
    }

    /// Encodes in the negotiated format (PNG instead of JPEG for an image with transparent pixels) under
    /// the work limit (encodes, AVIF's above all, are CPU work like decodes), and keeps the response in
    /// the memory cache before any waiter resumes, so that a later request hits it. `integrity` is the
    /// source decode's, kept with the response (its headers, and the ETag of a truncated source).
    /// `quality` is `q`, or `nil` for the format's default (``ServerConfiguration/quality``).
    /// A transparent image encoded as JPEG is flattened onto `background` (white by default).
    func encode(_ image: some BitmapImage, integrity: DecodeIntegrity, output: OutputChoice, quality: Int?,
                background: ImageProcessing.Background = .white, key: String) async throws -> ResponseCache.Entry {
        let etag = Self.etag(key, integrity: integrity)
        let entry = try await work.run { [self] in
            let hasAlpha = Self.hasTransparency(image)
            let format = output.format(hasAlpha: hasAlpha)
            let quality = quality ?? configuration.quality.value(for: format)
            let start = ContinuousClock.now
            defer { metrics.encodeTime.recordSince(start) }
            counters.withLock { $0.encodes += 1 }
            let bytes: [UInt8]
            switch format {
            case .jpeg where hasAlpha:   // `fmt=jpeg` of a transparent image: flattened onto the background
                guard let bitmap = image as? Bitmap else { fallthrough }
                bytes = try JPEGEncoder(quality: quality).encode(bitmap.flattened(onto: background))
            case .jpeg: bytes = try JPEGEncoder(quality: quality).encode(image)
            case .png: bytes = try PNGEncoder().encode(image)
            case .webp: bytes = try WebPEncoder(quality: quality).encode(image)
            case .avif: bytes = try AVIFEncoder(quality: quality, speed: configuration.avifSpeed).encode(image)
            }
            return ResponseCache.Entry(body: ByteBuffer(bytes: bytes), contentType: format.contentType, etag: etag, integrity: integrity)
        }
        responses.set(key, entry)
        metrics.responseCacheBytes.set(responses.byteCount)
        return entry
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
#endif
