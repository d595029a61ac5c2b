#if Serving
import Foundation
import NIOCore
@_spi(Internal) import TesseraImaging
import Tessera

extension ImageService {
    /// Whether `error` means that the source is missing (`404 not_found`, a remote origin's error status)
    /// or cannot be decoded (`415 undecodable_source`): the errors a fallback image answers.
    static func fallbackApplies(to error: ServiceError) -> Bool {
        switch error.code {
        case .notFound, .undecodableSource, .upstreamStatus: true
        default: false
        }
    }

    /// The fallback image drawn to the request's shape (its preset's recipe or its options; its format and
    /// quality), encoded once per shape and kept in the response cache like any answer, with the fallback's
    /// status, `X-Tessera-Fallback: 1` and its `Cache-Control`. A request whose shape is itself wrong
    /// (a bad size, an unknown preset) still gets that error, and so does any failure of the fallback.
    func fallbackResponse(to info: RequestInfo, after error: ServiceError) async throws(ServiceError) -> ImageResponse {
        guard let fallback, let setting = configuration.fallback else { throw error }
        let shape = try shape(info)
        let key = "f|" + shape.key
        let deadline = requestDeadline()
        let entry: ResponseCache.Entry
        var outcome = CacheOutcome.memory
        if let hit = responses.get(key) {
            entry = hit
        } else {
            do {
                let done = try await jobs.value(for: key, deadline: deadline) { [self] in
                    if let hit = responses.get(key) { return (hit, CacheOutcome.memory) }
                    let image = try await draw(.loaded(fallback.data), processing: shape.processing, animates: false).drawn.still
                    return (try await encode(image, integrity: image.integrity, output: shape.output, quality: shape.quality,
                                             background: shape.processing.background, key: key),
                            CacheOutcome.produced)
                }
                entry = done.value.0
                outcome = done.joined ? .coalesced : done.value.1
            } catch {
                throw ServiceError.from(error)
            }
        }
        metrics.bytesServed.increment(by: Int64(entry.body.readableBytes))
        metrics.outcome(outcome)
        return ImageResponse(status: setting.status, bodyBuffer: entry.body, contentType: entry.contentType, etag: entry.etag,
                             cacheControl: fallback.cacheControl, outcome: outcome, isFallback: true)
    }
}
#endif
