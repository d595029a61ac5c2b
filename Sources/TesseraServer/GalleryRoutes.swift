#if Serving
import Foundation
import Hummingbird
import Logging
@_spi(Internal) import TesseraImaging

/// The gallery (docs/SERVING.md, "Gallery"): `GET /gallery[?dir=SUB]` is one HTML page with its script
/// inline (`GalleryPage`, the resource `gallery.html`), which asks `GET /gallery/list?dir=SUB` for the
/// images under the root, their ThumbHashes and the presets to show them in, paints each cell's hash at
/// once, then loads thumbnails from `/v1/{preset}/{path}`.
///
/// An application extends the gallery with an ``Addition``: a script the page runs after its own, which
/// drives the page through `window.tesseraGallery`, and routes of its own beside `/gallery` (the browser
/// test mode of `tessera serve --gallery-report FILE` is one, in the tools package).
///
/// ```swift
/// GalleryRoutes(service: service).add(to: router)
/// ```
public struct GalleryRoutes: Sendable {
    /// The service whose root the gallery lists and whose presets its thumbnails come from.
    public let service: ImageService
    /// Receives one line per listing.
    public let logger: Logger
    /// What the application adds to the page and the routes.
    public let addition: Addition
    /// The page, with the addition's script, encoded once.
    private let page: ByteBuffer
    /// Listings walk the file system on a queue of their own, one at a time, off Swift's cooperative
    /// threads; at most ``maximumWaitingListings`` wait, later ones get `503 busy`.
    private let listings: ListingQueue
    /// The listed images' ThumbHashes in the low-resolution preset.
    private let placeholders = GalleryPlaceholders()

    /// Listings that may wait for the one running.
    public static let maximumWaitingListings = 8

    /// Routes for `service`'s root and presets, logging to `logger`, with `addition`'s script and routes.
    /// The addition's script must not contain `</script` (a precondition).
    public init(service: ImageService, logger: Logger = Logger(label: "tessera.serve"), addition: Addition = Addition()) {
        self.service = service
        self.logger = logger
        self.addition = addition
        page = ByteBuffer(string: GalleryPage.html(adding: addition.script))
        listings = ListingQueue()
    }

    /// Adds the routes to `router` (the addition's too), unless the gallery is off or URLs must be signed.
    public func add<Context: RequestContext>(to router: Router<Context>) {
        add(to: router, prefix: "")
    }

    /// Adds the routes to `router` under `prefix` (``ImageRoutes/add(to:prefix:)``, which the thumbnails
    /// come from, with the same prefix): `/images/gallery`, `/images/gallery/list` and the addition's routes
    /// under `/images`. The page finds the prefix in its own address (`window.tesseraGallery.base`).
    public func add<Context: RequestContext>(to router: Router<Context>, prefix: String) {
        let settings = service.configuration.gallery
        guard settings.enabled, service.configuration.signingKeys.isEmpty else { return }
        let mount = ImageRoutes.mountPath(prefix)
        router.get(RouterPath(mount + "/gallery")) { request, _ -> Response in
            let query = ImageService.RequestInfo.parse(request.uri.query)
            // A bad link answers 4xx here (a thrown ServiceError) rather than with a page whose listing fails.
            _ = try GalleryPresets(service: service, query: query)
            let directory = query["dir"] ?? ""
            if !directory.isEmpty { _ = try service.root.resolve(directory) }
            return Response(status: .ok, headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-cache",
                // Everything the page uses comes from this server; blobs are the thumbnails' object URLs.
                .contentSecurityPolicy: "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' blob:",
            ], body: ResponseBody(byteBuffer: page))
        }
        router.get(RouterPath(mount + "/gallery/list")) { request, _ -> Response in
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
                let hashes = await placeholders.hashes(of: listing.images, preset: (presets.lowres ?? presets.full).name, service: service)
                body = try GalleryListResponse(listing: listing, presets: presets, maximumImages: settings.maximumImages,
                                               thumbHashes: hashes.map { $0?.base64 }).json()
                logger.info("gallery list", metadata: [
                    "dir": "\(directory)", "images": "\(listing.images.count)", "truncated": "\(listing.truncated)",
                    "thumbhashes": "\(hashes.count { $0 != nil })",
                    "latency_ms": "\(String(format: "%.2f", (ContinuousClock.now - start).timeInterval * 1000))",
                ])
            } catch let error as ServiceError {
                throw error
            } catch {
                throw ServiceError(.internal, "the listing could not be encoded")
            }
            return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-cache"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
        for route in addition.routes {
            let handler = route.handler
            router.on(RouterPath(mount + route.path), method: route.method) { request, _ in try await handler(request) }
        }
    }
}

extension GalleryRoutes {
    /// What an application adds to the gallery: a script the page runs after its own, and routes beside
    /// the gallery's. Both exist only while the gallery does (on, and URLs not signed).
    ///
    /// The script reads and drives the page through `window.tesseraGallery`, which the page's script
    /// documents at its top (`gallery.html`): a `ready` promise, the scroller, the layout, `scrolled()` and
    /// `settled()` promises, the cells on screen, the measurements, and a note in the bar on top. The
    /// page's Content-Security-Policy allows inline scripts and requests to this server only.
    public struct Addition: Sendable {
        /// JavaScript appended to the page in a `<script>` element of its own, after the page's script.
        /// It must not contain `</script`.
        public var script: String?
        /// Routes added next to the gallery's, for example one the script sends its results to.
        public var routes: [Route]

        /// An addition of `script` and `routes`; by default nothing.
        public init(script: String? = nil, routes: [Route] = []) {
            self.script = script
            self.routes = routes
        }
    }

    /// A route of an ``Addition``: a method and path, and the handler that answers it. The handler may
    /// throw an `HTTPResponseError` (Hummingbird's `HTTPError`, ``ServiceError``, one of its own), which
    /// answers with that error's response; any other error answers 500.
    public struct Route: Sendable {
        /// The method the route answers, `POST` for example.
        public var method: HTTPRequest.Method
        /// The path, as Hummingbird's router reads it (`/gallery/report`), under the prefix the gallery is
        /// mounted at (``GalleryRoutes/add(to:prefix:)``).
        public var path: String
        /// Answers a request.
        public var handler: @Sendable (Request) async throws -> Response

        /// A route answering `method` on `path` with `handler`.
        public init(_ method: HTTPRequest.Method, _ path: String, handler: @escaping @Sendable (Request) async throws -> Response) {
            self.method = method
            self.path = path
            self.handler = handler
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
                throw ServiceError(.unknownPreset, "no preset named '\(name)'")
            }
            return preset
        }
        func choice(_ preset: ServerConfiguration.Preset) -> Choice {
            let box = PresetTable.slotSize(of: preset.processing)
            return Choice(name: preset.name, width: box.width, height: box.height)
        }
        let fullPreset: ServerConfiguration.Preset
        if let name = query["preset"], !name.isEmpty {
            fullPreset = try named(name)
        } else if let thumb = configured.first(where: { $0.name == "thumb" }) {
            fullPreset = thumb
        } else if let first = configured.first {
            fullPreset = first
        } else {
            throw ServiceError(.unknownPreset, "no presets are configured")
        }
        full = choice(fullPreset)
        let area = { (preset: ServerConfiguration.Preset) in PresetTable.slotSize(of: preset.processing).pixelCount }
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
    /// Each image's ThumbHash in the low-resolution preset (base64), or `null` (``GalleryPlaceholders``).
    var thumbHashes: [String?]

    init(listing: GalleryListing, presets: GalleryPresets, maximumImages: Int, thumbHashes: [String?]) {
        directory = listing.directory
        preset = presets.full
        lowres = presets.lowres
        images = listing.images
        truncated = listing.truncated
        self.maximumImages = maximumImages
        self.thumbHashes = thumbHashes
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
        guard accepted else { throw ServiceError(.busy, "too many gallery listings are running; try again") }
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

#endif
