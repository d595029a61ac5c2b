@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

// MARK: Stale while revalidate
//
// A stale disk copy may be answered at once when the origin allowed it (`Cache-Control:
// stale-while-revalidate=N`, RFC 5861 §3, for N seconds past its freshness) or the request asks for it
// (``ImageRequest/CachePolicy/staleWhileRevalidate``). The copy is then revalidated in the background by
// a job of its own (``StaleUse/revalidating``): a conditional request with the stored validators; a
// `304` (or the same bytes again) refreshes the disk copy's freshness and delivers nothing; a new image
// replaces the bytes on disk and the variant in the memory cache, and an ``ImageTask`` reports it as
// ``ImageTask/Event/refreshed(_:)``. A failed revalidation changes nothing.
//
// Within `stale-if-error=N` (RFC 5861 §4) a stale copy is the answer when the download or revalidation
// fails at the origin (no connection, a timeout, a 5xx): no error is thrown.

extension ImageManager {
    /// A request's answer, and what to revalidate when it is a stale copy answered at once.
    struct Answer: Sendable {
        var response: ImageResponse
        var revalidation: Revalidation? = nil
    }

    /// The background revalidation of a stale answer: the request, the URL to load, and the variant
    /// (its data job revalidates: ``StaleUse/revalidating``).
    struct Revalidation: Sendable {
        let request: ImageRequest
        let url: URL
        let key: ImageJobKey

        init(request: ImageRequest, url: URL, key: ImageJobKey) {
            self.request = request
            self.url = url
            var key = key
            key.data.stale = .revalidating
            self.key = key
        }
    }

    /// Revalidates the bytes of a stale answer through the lanes at `caller`'s level. Returns the new
    /// image, decoded at the request's variant and put in the memory cache (the data job stored the bytes
    /// on disk), when the origin sent other bytes; `nil` when they are unchanged (`304`, or the same
    /// bytes) or the revalidation failed (logged).
    func revalidate(_ revalidation: Revalidation, caller: CallerPriority) async -> ImageResponse? {
        let key = revalidation.key
        do {
            let fetched = try await jobs.data(for: key.data, source: revalidation.url, caller: caller,
                                              headers: revalidation.request.headers, progress: nil)
            guard fetched.cacheType == .network else { return nil }
            let decoded = try await pipeline.image(from: fetched, for: key)
            if key.writesMemory, let bitmap = decoded.bitmap { memoryCache?.insert(bitmap, for: key.image) }
            return decoded.response(to: revalidation.request)
        } catch {
            pipeline.logger.info("background revalidation failed; the stale copy stays", metadata: [
                "url": "\(revalidation.url.absoluteString)", "error": "\(error)",
            ])
            return nil
        }
    }

    /// Revalidates the disk copy of `url` in the background after ``dataResponse(for:priority:progress:)``
    /// answered it stale: the data job stores what the origin says (a `304`'s freshness, or new bytes);
    /// a failure is logged and changes nothing.
    func revalidateData(of url: URL, caller: CallerPriority) async {
        do {
            _ = try await jobs.data(for: DataKey(url: url, stale: .revalidating), source: url, caller: caller, progress: nil)
        } catch {
            pipeline.logger.info("background revalidation failed; the stale copy stays", metadata: [
                "url": "\(url.absoluteString)", "error": "\(error)",
            ])
        }
    }
}
