import Foundation
import Hummingbird
import Logging
import TesseraServer

/// The gallery's browser test mode, which `tessera serve --gallery-report FILE` (`TESSERA_GALLERY_REPORT`)
/// adds to the library's gallery as a ``GalleryRoutes/Addition`` (docs/SERVING.md, "Gallery"):
/// - the script `Resources/gallery-test-mode.js` (embedded in the binary), which on
///   `/gallery?autoscroll=1` scrolls through every image by itself through the page's
///   `window.tesseraGallery`, and with `&report=1` then POSTs its measurements;
/// - `POST /gallery/report`, which writes a JSON object of at most ``maximumReportBytes`` atomically to
///   FILE and answers `204`: `413 report_too_large`, `400 bad_report`, `500 report_not_written` otherwise.
///
/// The serve command and the in-process tests wire it the same way, with
/// ``TesseraServer/ImageServer/addGalleryTestMode(reportFile:)``.
enum GalleryTestMode {
    /// Largest report body `POST /gallery/report` takes.
    static let maximumReportBytes = 1 << 20

    /// The test-mode script the page runs after its own.
    static let script = String(decoding: PackageResources.gallery_test_mode_js, as: UTF8.self)

    /// The script and the report route writing to `reportFile`, logging to `logger`.
    static func addition(reportFile: String, logger: Logger) -> GalleryRoutes.Addition {
        GalleryRoutes.Addition(script: script, routes: [
            GalleryRoutes.Route(.post, "/gallery/report") { request in try await store(request, in: reportFile, logger: logger) },
        ])
    }

    /// Writes the report `request` carries to `file`; logs "gallery report written" (the end-to-end test waits for it).
    static func store(_ request: Request, in file: String, logger: Logger) async throws(ReportError) -> Response {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maximumReportBytes)
        } catch {
            throw ReportError(.contentTooLarge, "report_too_large", "a report is at most \(maximumReportBytes) bytes")
        }
        let data = Data(buffer.readableBytesView)
        guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
            throw ReportError(.badRequest, "bad_report", "a report is a JSON object")
        }
        do {
            try data.write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            logger.error("gallery report not written", metadata: ["file": "\(file)", "error": "\(error)"])
            throw ReportError(.internalServerError, "report_not_written", "the report could not be written")
        }
        logger.info("gallery report written", metadata: ["file": "\(file)", "bytes": "\(data.count)"])
        return Response(status: .noContent)
    }

    /// A refused or failed report, answered as the image service answers its errors: the status,
    /// `{"error":"code","message":"…"}`, `Cache-Control: no-store`.
    struct ReportError: HTTPResponseError {
        /// The HTTP status.
        let status: HTTPResponse.Status
        /// The JSON `error` string.
        let code: String
        /// A sentence for people.
        let message: String

        init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
            self.status = status
            self.code = code
            self.message = message
        }

        func response(from request: Request, context: some RequestContext) throws -> Response {
            let body = try JSONSerialization.data(withJSONObject: ["error": code, "message": message], options: [.sortedKeys])
            return Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
    }
}

extension ImageServer {
    /// Adds the gallery's browser test mode (``GalleryTestMode``), its reports written to `reportFile`
    /// and logged to the server's logger, as `tessera serve --gallery-report FILE` does.
    mutating func addGalleryTestMode(reportFile: String) {
        galleryAddition = GalleryTestMode.addition(reportFile: reportFile, logger: logger)
    }
}
