#if Serving
import Foundation
import Hummingbird
import Logging
@_spi(Internal) import TesseraImaging

/// The gallery (docs/SERVING.md, "Gallery"): `GET /gallery[?dir=SUB]` is one HTML page with its script
/// inline (``GalleryPage``), which asks `GET /gallery/list?dir=SUB` for the images under the root and the
/// presets to show them in, then loads thumbnails from `/v1/{preset}/{path}`. With
/// ``ServerConfiguration/Gallery/reportFile`` set, `POST /gallery/report` stores the page's test-mode
/// measurements.
///
/// ```swift
/// GalleryRoutes(service: service).add(to: router)
/// ```
public struct GalleryRoutes: Sendable {
    /// The service whose root the gallery lists and whose presets its thumbnails come from.
    public let service: ImageService
    /// Receives one line per listing and per report written (or not).
    public let logger: Logger
    /// Listings walk the file system on a queue of their own, one at a time, off Swift's cooperative
    /// threads; at most ``maximumWaitingListings`` wait, later ones get `503 busy`.
    private let listings: ListingQueue

    /// Listings that may wait for the one running.
    public static let maximumWaitingListings = 8
    /// Largest report body `POST /gallery/report` takes.
    public static let maximumReportBytes = 1 << 20

    /// Routes for `service`'s root and presets, logging to `logger`.
    public init(service: ImageService, logger: Logger = Logger(label: "tessera.serve")) {
        self.service = service
        self.logger = logger
        listings = ListingQueue()
    }

    /// Adds the routes to `router`, unless the gallery is off or URLs must be signed.
    public func add<Context: RequestContext>(to router: Router<Context>) {
        let settings = service.configuration.gallery
        guard settings.enabled, service.configuration.signingKeys.isEmpty else { return }
        router.get("/gallery") { request, _ -> Response in
            let query = ImageService.RequestInfo.parse(request.uri.query)
            do throws(ServiceError) {
                // A bad link answers 4xx here rather than with a page whose listing fails.
                _ = try GalleryPresets(service: service, query: query)
                let directory = query["dir"] ?? ""
                if !directory.isEmpty { _ = try service.root.resolve(directory) }
            } catch {
                return error.response
            }
            return Response(status: .ok, headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-cache",
                // Everything the page uses comes from this server; blobs are the thumbnails' object URLs.
                .contentSecurityPolicy: "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' blob:",
            ], body: ResponseBody(byteBuffer: ByteBuffer(string: GalleryPage.html)))
        }
        router.get("/gallery/list") { request, _ -> Response in
            let query = ImageService.RequestInfo.parse(request.uri.query)
            let start = ContinuousClock.now
            let body: [UInt8]
            do {
                let presets = try GalleryPresets(service: service, query: query)
                let directory = query["dir"] ?? ""
                let root = service.root
                let listing = try await listings.run { () throws(ServiceError) -> GalleryListing in
                    try GalleryListing.make(root: root, directory: directory, maximumImages: settings.maximumImages)
                }
                body = try GalleryListResponse(listing: listing, presets: presets, maximumImages: settings.maximumImages).json()
                logger.info("gallery list", metadata: [
                    "dir": "\(directory)", "images": "\(listing.images.count)", "truncated": "\(listing.truncated)",
                    "latency_ms": "\(String(format: "%.2f", (ContinuousClock.now - start).timeInterval * 1000))",
                ])
            } catch let error as ServiceError {
                return error.response
            } catch {
                return ServiceError(500, "internal", "the listing could not be encoded").response
            }
            return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-cache"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
        if let file = settings.reportFile {
            router.post("/gallery/report") { request, _ -> Response in
                let buffer: ByteBuffer
                do {
                    buffer = try await request.body.collect(upTo: Self.maximumReportBytes)
                } catch {
                    return ServiceError(413, "report_too_large", "a report is at most \(Self.maximumReportBytes) bytes").response
                }
                let data = Data(buffer.readableBytesView)
                guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
                    return ServiceError(400, "bad_report", "a report is a JSON object").response
                }
                do {
                    try data.write(to: URL(fileURLWithPath: file), options: .atomic)
                } catch {
                    logger.error("gallery report not written", metadata: ["file": "\(file)", "error": "\(error)"])
                    return ServiceError(500, "report_not_written", "the report could not be written").response
                }
                logger.info("gallery report written", metadata: ["file": "\(file)", "bytes": "\(data.count)"])
                return Response(status: .noContent)
            }
        }
    }
}

/// The presets the gallery shows: `preset` at rest and `lowres` (or none) while scrolling fast.
///
/// `?preset=NAME` picks the full one, else `thumb` when configured, else the first configured preset.
/// `?lowres=NAME` picks the low-resolution one (`none`: no low-resolution phase), else `lowres` when
/// configured (and not the full one), else the configured preset with the fewest pixels that has fewer
/// than the full one, else none. Unknown names are `404 unknown_preset`.
struct GalleryPresets: Sendable {
    struct Choice: Sendable, Encodable {
        var name: String
        var width: Int
        var height: Int
    }

    var full: Choice
    var lowres: Choice?

    init(service: ImageService, query: [String: String]) throws(ServiceError) {
        let configured = service.configuration.presets
        func named(_ name: String) throws(ServiceError) -> ServerConfiguration.Preset {
            guard let preset = configured.first(where: { $0.name == name }) else {
                throw ServiceError(404, "unknown_preset", "no preset named '\(name)'")
            }
            return preset
        }
        func choice(_ preset: ServerConfiguration.Preset) -> Choice { Choice(name: preset.name, width: preset.width, height: preset.height) }
        let fullPreset: ServerConfiguration.Preset
        if let name = query["preset"], !name.isEmpty {
            fullPreset = try named(name)
        } else if let thumb = configured.first(where: { $0.name == "thumb" }) {
            fullPreset = thumb
        } else if let first = configured.first {
            fullPreset = first
        } else {
            throw ServiceError(404, "unknown_preset", "no presets are configured")
        }
        full = choice(fullPreset)
        let area = { (preset: ServerConfiguration.Preset) in preset.width * preset.height }
        switch query["lowres"] {
        case "none":
            lowres = nil
        case let name? where !name.isEmpty:
            lowres = choice(try named(name))
        default:
            if let preset = configured.first(where: { $0.name == "lowres" && $0.name != fullPreset.name }) {
                lowres = choice(preset)
            } else {
                lowres = configured.filter { area($0) < area(fullPreset) }.min { area($0) < area($1) }.map(choice)
            }
        }
    }
}

/// The body of `GET /gallery/list`.
private struct GalleryListResponse: Encodable {
    var directory: String
    var preset: GalleryPresets.Choice
    var lowres: GalleryPresets.Choice?
    var images: [String]
    var truncated: Bool
    var maximumImages: Int

    init(listing: GalleryListing, presets: GalleryPresets, maximumImages: Int) {
        directory = listing.directory
        preset = presets.full
        lowres = presets.lowres
        images = listing.images
        truncated = listing.truncated
        self.maximumImages = maximumImages
    }

    func json() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }
}

/// Runs listings one at a time on a Dispatch queue of their own, with a bounded number waiting.
private final class ListingQueue: Sendable {
    private let queue = DispatchQueue(label: "tessera.gallery.listing")
    /// Listings accepted and not finished (the running one included).
    private let pending = LockedValue(0)

    func run<T: Sendable>(_ work: @escaping @Sendable () throws(ServiceError) -> T) async throws(ServiceError) -> T {
        let accepted = pending.withLock { count -> Bool in
            guard count <= GalleryRoutes.maximumWaitingListings else { return false }
            count += 1
            return true
        }
        guard accepted else { throw ServiceError(503, "busy", "too many gallery listings are running; try again") }
        let result: Result<T, ServiceError> = await withCheckedContinuation { continuation in
            queue.async {
                let result: Result<T, ServiceError>
                do throws(ServiceError) { result = .success(try work()) } catch { result = .failure(error) }
                self.pending.withLock { $0 -= 1 }
                continuation.resume(returning: result)
            }
        }
        return try result.get()
    }
}

extension ServiceError {
    /// The error as the service answers it: the status, `{"error":"code","message":"…"}`, `no-store`.
    var response: Response {
        Response(status: HTTPResponse.Status(code: status),
                 headers: [.contentType: "application/json", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: jsonBody)))
    }
}
#endif
