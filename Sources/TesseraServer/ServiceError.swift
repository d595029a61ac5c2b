#if Serving
import Foundation
import Hummingbird
@_spi(Internal) import TesseraImaging
import Tessera

/// A refused or failed request: one ``Code`` (which decides the HTTP status) and a sentence for people.
///
/// This is the only place where an error becomes a status and a body: as Hummingbird's
/// `HTTPResponseError`, a route may simply throw it, and ``ImageRoutes`` answers with ``response``.
/// The body is `{"error":"<code>","message":"…"}` with `Cache-Control: no-store`.
public struct ServiceError: Error, Sendable, CustomStringConvertible, HTTPResponseError {
    /// Every error the service answers with, by its JSON `error` string (docs/SERVING.md lists them).
    public enum Code: String, Sendable, CaseIterable {
        /// No such route, file or directory (404).
        case notFound = "not_found"
        /// `/v1/{preset}/…` names no configured preset (404).
        case unknownPreset = "unknown_preset"
        /// `@{name}` names no configured source, or `src=s3://BUCKET/…` a bucket that is not allowed (404).
        case unknownSource = "unknown_source"
        /// The path is not valid percent-encoding, or names an object key longer than S3 allows (400).
        case badPath = "bad_path"
        /// The path's text is refused: NUL, absolute, backslash, double-encoded, `.`/`..`/empty components (400).
        case pathEscape = "path_escape"
        /// The path's real path (symlinks resolved) lies outside the root (403).
        case pathOutsideRoot = "path_outside_root"
        /// Signed URLs are required and the request has no `s=` (403).
        case missingSignature = "missing_signature"
        /// The `s=` signature is not by any configured key (403).
        case badSignature = "bad_signature"
        /// `fmt` is not `jpeg`, `png`, `webp`, `gif` or `avif` (400).
        case badFormat = "bad_format"
        /// `q` is not 1…100 (400).
        case badQuality = "bad_quality"
        /// `gravity` is not a compass point, `smart` or `fp` (400).
        case badGravity = "bad_gravity"
        /// `fp` is not two fractions `X,Y` (400).
        case badFocalPoint = "bad_fp"
        /// `enlarge` is not 0 or 1 (400).
        case badEnlarge = "bad_enlarge"
        /// `bg` is not `RRGGBB` or `RRGGBBAA` (400).
        case badBackground = "bad_bg"
        /// `dpr` is not 1…4 (400).
        case badDPR = "bad_dpr"
        /// `blur` is not a sigma 0…100 (400).
        case badBlur = "bad_blur"
        /// A query option on a preset route while only presets are served (400).
        case optionNotAllowed = "option_not_allowed"
        /// A query parameter the route does not know (a typo, or an option Tessera does not have): refused
        /// rather than ignored, since ignoring it would answer a silently different image.
        case unknownParameter = "unknown_parameter"
        /// `rotate` is not 0, 90, 180 or 270.
        case badRotate = "bad_rotate"
        /// `flip` is not `h`, `v` or `hv`.
        case badFlip = "bad_flip"
        /// `crop`, `crop_gravity` or `crop_box` is malformed, both crops are given, or the box lies outside the source (400).
        case badCrop = "bad_crop"
        /// `trim` is not a colour distance 0…255 (400).
        case badTrim = "bad_trim"
        /// `padding` is not one to four sides of 0…8192 pixels (400).
        case badPadding = "bad_padding"
        /// `sharpen` is not a sigma 0…10 (400).
        case badSharpen = "bad_sharpen"
        /// `pixelate` is not a block side 1…256 (400).
        case badPixelate = "bad_pixelate"
        /// `grayscale` is not 0 or 1 (400).
        case badGrayscale = "bad_grayscale"
        /// A `watermark…` parameter is malformed or out of range, or names no configured watermark (400).
        case badWatermark = "bad_watermark"
        /// `metadata` is not `strip`, `copyright` or `keep` (400).
        case badMetadata = "bad_metadata"
        /// `animation` is not `all` or `first` (400).
        case badAnimation = "bad_animation"
        /// An option of an imgproxy or thumbor URL that Tessera cannot honour as that service would (400;
        /// the dialect's status): refused rather than answered with a different image.
        case unsupportedOption = "unsupported_option"
        /// An imgproxy URL past its `expires` time (410; imgproxy's 404 under its prefix).
        case expired = "expired"
        /// `filename` keeps no letter or digit once sanitised (400).
        case badFilename = "bad_filename"
        /// `attachment` is not 0 or 1 (400).
        case badAttachment = "bad_attachment"
        /// `w` or `h` is not a whole number from 1 to 8192 (400).
        case badSize = "bad_size"
        /// `w` or `h` is not one of the configured sizes (400).
        case sizeNotAllowed = "size_not_allowed"
        /// `w × h` is more than the output-pixel limit (400).
        case outputTooLarge = "output_too_large"
        /// `mode` is not `fit`, `fill`, `fill-down`, `force`, `pad` or `cover`, or `adaptive` not 0 or 1 (400).
        case badMode = "bad_mode"
        /// `/v1/resize` without `src` (400).
        case missingSource = "missing_src"
        /// `src` is neither a path under the root nor an `http(s)` URL (400).
        case badSource = "bad_src"
        /// A remote `src` while no host is allowed (403).
        case remoteDisabled = "remote_disabled"
        /// A remote host or address the SSRF guard refuses (403).
        case remoteRefused = "remote_refused"
        /// The source has more bytes than the limit (413).
        case sourceTooLarge = "source_too_large"
        /// The source has more pixels than the limit (413).
        case sourceTooManyPixels = "source_too_many_pixels"
        /// The source declares more frames or items than the limit (413).
        case sourceTooManyItems = "source_too_many_items"
        /// The source is not an image that can be decoded (415).
        case undecodableSource = "undecodable_source"
        /// The remote origin answered an error status (502).
        case upstreamStatus = "upstream_status"
        /// A source's store refused the operator's credentials (S3 `AccessDenied`, `SignatureDoesNotMatch`,
        /// `InvalidAccessKeyId`, an expired token): the server's configuration is wrong, not the request (502).
        case sourceDenied = "source_denied"
        /// A named source's object changed between learning its version and reading it, twice in a row (502).
        case sourceChanged = "source_changed"
        /// The remote origin redirected too often (502).
        case upstreamRedirects = "upstream_redirects"
        /// The remote source could not be loaded (502).
        case upstreamFailed = "upstream_failed"
        /// The remote origin did not answer within the download timeout (504).
        case upstreamTimeout = "upstream_timeout"
        /// An admin route without the admin key's `Authorization: Bearer` (401).
        case unauthorized = "unauthorized"
        /// The request took longer than the request timeout (504).
        case timeout = "timeout"
        /// The decode queue is full (503).
        case tooManyDecodes = "too_many_decodes"
        /// Every table entry is in use, or another bounded queue is full (503).
        case busy = "busy"
        /// The request was cancelled, for example because its client went away (503).
        case cancelled = "cancelled"
        /// Anything else (500): a bug or a failing disk, logged as a warning.
        case `internal` = "internal"

        /// The HTTP status this code answers with.
        public var status: HTTPResponse.Status {
            switch self {
            case .notFound, .unknownPreset, .unknownSource: .notFound
            case .badPath, .pathEscape, .badFormat, .badQuality, .optionNotAllowed, .unknownParameter, .badRotate, .badFlip,
                 .badCrop, .badTrim, .badPadding, .badSharpen, .badPixelate, .badGrayscale, .badMetadata, .badAnimation, .badFilename, .badAttachment, .badWatermark, .badGravity, .badFocalPoint, .badEnlarge,
                 .badBackground, .badDPR, .badBlur, .badSize, .sizeNotAllowed, .outputTooLarge, .badMode,
                 .missingSource, .badSource, .unsupportedOption: .badRequest
            case .expired: .gone
            case .unauthorized: .unauthorized
            case .pathOutsideRoot, .missingSignature, .badSignature, .remoteDisabled, .remoteRefused: .forbidden
            case .sourceTooLarge, .sourceTooManyPixels, .sourceTooManyItems: .contentTooLarge
            case .undecodableSource: .unsupportedMediaType
            case .upstreamStatus, .upstreamRedirects, .upstreamFailed, .sourceDenied, .sourceChanged: .badGateway
            case .upstreamTimeout, .timeout: .gatewayTimeout
            case .tooManyDecodes, .busy, .cancelled: .serviceUnavailable
            case .internal: .internalServerError
            }
        }
    }

    /// What went wrong, which decides the status.
    public let code: Code
    /// A sentence for people.
    public let message: String

    /// An error with `code` and a `message` for people.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The HTTP status (``Code/status``).
    public var status: HTTPResponse.Status { code.status }

    /// `Content-Type: application/json` and `Cache-Control: no-store`; a `401` also says how to authenticate
    /// (`WWW-Authenticate: Bearer`).
    public var headers: HTTPFields {
        var fields: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        if code == .unauthorized { fields[.wwwAuthenticate] = "Bearer realm=\"tessera\"" }
        return fields
    }

    /// `STATUS CODE: MESSAGE`, as logged.
    public var description: String { "\(status.code) \(code.rawValue): \(message)" }

    /// `{"error":"code","message":"…"}`.
    public var jsonBody: [UInt8] {
        let object = ["error": code.rawValue, "message": message]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { Array($0) } ?? Array("{}".utf8)
    }

    /// The error as the service answers it: the status, the JSON body, `no-store`.
    public var response: Response { Response(answer(in: .tessera), head: false) }

    /// `HTTPResponseError`: the same response, whatever the request.
    public func response(from request: Request, context: some RequestContext) throws -> Response { response }

    /// Maps an error from the library (possibly wrapped) to the service's error.
    static func from(_ error: any Error) -> ServiceError {
        var current: (any Error)? = error
        while let error = current {
            if let service = error as? ServiceError { return service }
            if let refusal = error as? RemoteRefusal { return ServiceError(.remoteRefused, refusal.message) }
            if let failure = error as? S3Error { return ServiceError(failure) }
            if error is ParallelismLimit.QueueFull { return ServiceError(.tooManyDecodes, "too many images are being decoded; try again") }
            if error is CancellationError { return ServiceError(.cancelled, "the request was cancelled") }
            guard let tessera = error as? TesseraError else { break }
            switch tessera.reason {
            case .decoding(.inputTooLarge(let bytes, let limit)):
                return ServiceError(.sourceTooLarge, "the source has \(bytes) bytes, more than the limit of \(limit)")
            case .decoding(.tooManyPixels(let w, let h, let limit)):
                return ServiceError(.sourceTooManyPixels, "the source is \(w)x\(h), more than \(limit) pixels")
            case .decoding(.tooManyItems(let count, let limit)):
                return ServiceError(.sourceTooManyItems, "the source declares \(count) items, more than \(limit)")
            case .decoding(.truncated):
                return ServiceError(.undecodableSource, "the source ends before its image does")
            case .decoding(.unsupportedFormat), .decoding(.empty), .decoding(.invalidDimensions), .decoding(.codec):
                return ServiceError(.undecodableSource, "the source is not an image that can be decoded")
            case .fetching(.tooLarge(let bytes, let limit, _)):
                return ServiceError(.sourceTooLarge, "the source has \(bytes) bytes, more than the limit of \(limit)")
            case .fetching(.timeout):
                return ServiceError(.upstreamTimeout, "the remote source did not answer in time")
            case .fetching(.httpStatus(let code, _)):
                return ServiceError(.upstreamStatus, "the remote source answered \(code)")
            case .fetching(.redirectLimit):
                return ServiceError(.upstreamRedirects, "the remote source redirected too often")
            case .fetching:
                if let underlying = tessera.underlying { current = underlying; continue }
                return ServiceError(.upstreamFailed, "the remote source could not be loaded")
            case .storage(.allEntriesInUse):
                return ServiceError(.busy, "every table entry is in use; try again")
            case .cancelled:
                return ServiceError(.cancelled, "the request was cancelled")
            default:
                if let underlying = tessera.underlying { current = underlying; continue }
                return ServiceError(.internal, "the image could not be produced")
            }
        }
        return ServiceError(.internal, "the image could not be produced")
    }
}
#endif
