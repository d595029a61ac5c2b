import Foundation
import Synchronization
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraHTTP

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// A real codec wrapped to count how many times it decodes pixels.
struct CountingDecoder: ImageDecoding {
    let base: any ImageDecoding
    let decodes: Counter
    var format: ImageFileFormat { base.format }
    func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo { try base.probe(data) }
    func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize { base.decodedSize(for: info, atLeast: target) }
    func supportsDirectDecode(to style: PixelStyle) -> Bool { base.supportsDirectDecode(to: style) }
    func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
        decodes.increment()
        return try base.decode(data, info: info, into: target)
    }
}

/// An ImageDecoder whose codecs count their decodes.
func countingDecoder(_ decodes: Counter) -> ImageDecoder {
    ImageDecoder(decoders: ImageDecoder.standardDecoders(limits: .default).map { CountingDecoder(base: $0, decodes: decodes) })
}

/// A test entity: a user with an avatar URL.
struct User: ImageEntity {
    let entityID: UUID
    let sourceImageID: UUID
    let url: URL
    init(_ name: String, url: URL) {
        entityID = UUID(hashing: "user:" + name)
        sourceImageID = UUID(hashing: url.absoluteString)
        self.url = url
    }
    func sourceImageURL(for format: ImageFormat) -> URL? { url }
}

/// Fetches source images over HTTP with the project's AsyncHTTPClient loader, counting fetches and
/// cancels. The load task is cancelled by `ImageCache` when the last requester goes; the loader
/// cancels the HTTP request with it.
struct HTTPSourceProvider: SourceImageProviding {
    let fetches = Counter()
    let cancels = Counter()
    var processFamilies = true

    func sourceImage(at url: URL, for entity: any ImageEntity, format: ImageFormat) async throws -> SourceImage {
        fetches.increment()
        let response = try await HTTPDataLoader.shared.load(LoadRequest(url: url), progress: { _ in })
        return .encoded(response.data)
    }

    func cancelSourceImage(at url: URL) { cancels.increment() }

    func shouldProcessAllFormats(inFamily family: String, for entity: any ImageEntity) -> Bool { processFamilies }
}

/// A solid-colour PNG of `size`.
func solidPNG(_ color: Color, size: PixelSize = PixelSize(width: 120, height: 90)) throws -> [UInt8] {
    try PNGEncoder().encode(try Bitmap.drawing(size: size) { $0.fill(with: color) })
}

/// A fresh temporary directory.
func temporaryDirectory(_ label: String = "tessera") throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
