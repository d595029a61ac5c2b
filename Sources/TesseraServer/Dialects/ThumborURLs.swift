#if Serving
import Crypto
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// thumbor's URLs, read into Tessera's terms (``ImageAsk``) with thumbor 7's grammar and geometry:
///
/// ```
/// PREFIX/{hmac|unsafe}/[trim[:top-left][:TOLERANCE]/][AxB:CxD/][fit-in/|full-fit-in/|adaptive-fit-in/|adaptive-full-fit-in/]
///        [-][W]x[-][H]/[left|center|right/][top|middle|bottom/][smart/][filters:NAME(ARGS):…/]IMAGE
/// ```
///
/// - **Signature**: URL-safe base64, with padding, of HMAC-SHA1 under `--thumbor-key` over the rest of the
///   path as sent (percent-encoded, without the `/` after the signature), as libthumbor makes it.
///   `unsafe/` is accepted only without a key or with `--thumbor-allow-unsafe`.
/// - **Geometry**, as thumbor's: without `fit-in` the image is cropped to fill `W`×`H` and scaled up or
///   down to it (``ContentMode/fill`` with enlarge); `fit-in` fits inside without enlarging (unless
///   `upscale()`), `full-fit-in` covers the box (``ContentMode/cover``), `adaptive-` turns the box to the
///   source's orientation (``ImageProcessing/adaptive``); a `0` or missing side keeps the aspect ratio;
///   `-W`/`-H` mirror; the alignments and `smart` choose the crop; `AxB:CxD` cuts a box of the source first.
/// - **Filters**: quality, format, fill, blur, focal, no_upscale, upscale, stretch, strip_icc, strip_exif,
///   grayscale, rotate, round_corner, sharpen and watermark (a configured watermark by name). thumbor's other filters are
///   `unsupported_option`, and an unknown name `unknown_parameter`: refused, where thumbor ignores them.
/// - **The image** is a path under `--root` (percent-decoded once, as thumbor's file loader reads it), or an
///   `http(s)` URL where remote sources are allowed.
struct ThumborURLs: Sendable {
    /// `--thumbor-key`, when set.
    private let key: SymmetricKey?
    /// Whether `unsafe/` URLs are accepted.
    private let allowsUnsafe: Bool

    /// The parser of `configuration`'s thumbor settings.
    init(_ configuration: ServerConfiguration) {
        key = configuration.thumbor.key.map { SymmetricKey(data: Data($0.utf8)) }
        allowsUnsafe = configuration.thumbor.key == nil || configuration.thumbor.allowUnsafe
    }

    /// thumbor's URL grammar (`libthumbor.url.Url.regex`), matched against the path as sent.
    /// `nonisolated(unsafe)`: `Regex` is not `Sendable`, but this one is never mutated after it is made, and
    /// matching reads it only (each match keeps its own state).
    nonisolated(unsafe) private static let grammar = try! Regex(
        #"^(?:(?:(?<unsafe>unsafe)|(?<hash>.+?))/)?(?:(?<debug>debug)/)?(?:(?<meta>meta)/)?"#
        + #"(?:(?<trim>trim(?::(?:top-left|bottom-right))?(?::\d+)?)/)?"#
        + #"(?:(?<cropLeft>\d+)x(?<cropTop>\d+):(?<cropRight>\d+)x(?<cropBottom>\d+)/)?"#
        + #"(?:(?<adaptive>adaptive-)?(?<full>full-)?(?<fitIn>fit-in)/)?"#
        + #"(?:(?<hflip>-)?(?<width>(?:\d+|orig))?x(?<vflip>-)?(?<height>(?:\d+|orig))?/)?"#
        + #"(?:(?<halign>left|right|center)/)?(?:(?<valign>top|bottom|middle)/)?(?:(?<smart>smart)/)?"#
        + #"(?:filters:(?<filters>.+?\))/)?(?<image>.+)$"#)

    /// The ask of `path` (the part after the prefix, as sent).
    func ask(path: String, accept: String?) throws(ServiceError) -> ImageAsk {
        guard let match = (try? Self.grammar.wholeMatch(in: path)) ?? nil else { throw ServiceError(.badPath, "not a thumbor URL") }
        func group(_ name: String) throws(ServiceError) -> String? {
            guard let raw = match.output[name]?.substring else { return nil }
            guard let decoded = String(raw).removingPercentEncoding else { throw ServiceError(.badPath, "the URL is not valid percent-encoding") }
            return decoded
        }
        // The signature: over the path after "{hash}/", as sent.
        if match.output["unsafe"]?.substring != nil {
            guard allowsUnsafe else { throw ServiceError(.missingSignature, "unsafe/ URLs are not allowed (a thumbor key is set)") }
        } else if let hash = try group("hash") {
            guard let key else { throw ServiceError(.badSignature, "signed thumbor URLs need --thumbor-key") }
            let signed = path.dropFirst(match.output["hash"]!.substring!.count + 1)
            let mac = Data(HMAC<Insecure.SHA1>.authenticationCode(for: Data(signed.utf8), using: key)).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            guard URLDialect.signatureMatches(Array(hash.utf8), Array(mac.utf8)) else {
                throw ServiceError(.badSignature, "the thumbor signature does not match")
            }
        } else {
            throw ServiceError(.missingSignature, "a thumbor URL starts with its signature or unsafe/")
        }
        guard try group("debug") == nil, try group("meta") == nil else { throw Self.unsupported("debug/ and meta/") }

        var processing = ImageProcessing(mode: .fill, enlarge: true)
        processing.metadata = .strip
        if let trim = try group("trim") {
            let parts = trim.split(separator: ":")
            if parts.count > 1, parts[1] == "bottom-right" { throw Self.unsupported("trim:bottom-right") }
            if parts.count == 2, parts[1] != "top-left" { throw Self.unsupported("trim:TOLERANCE without a position (thumbor reads it as bottom-right)") }
            processing.trim = parts.count == 3 ? Int(parts[2]).map { min($0, 255) } : 0
        }
        if let left = try group("cropLeft").flatMap(Int.init), let top = try group("cropTop").flatMap(Int.init),
           let right = try group("cropRight").flatMap(Int.init), let bottom = try group("cropBottom").flatMap(Int.init),
           left < right, top < bottom {   // thumbor ignores an empty box
            processing.cropBox = ImageProcessing.CropBox(left: left, top: top, right: right, bottom: bottom)
        }
        let fitIn = try group("fitIn") != nil, full = try group("full") != nil
        if fitIn {
            processing.mode = full ? .cover : .fit
            processing.enlarge = full
            processing.adaptive = try group("adaptive") != nil
        }
        let width = try group("width"), height = try group("height")
        switch (width, height) {
        case ("orig", "orig"), ("orig", nil), (nil, "orig"), ("orig", "0"), ("0", "orig"): break   // the source's size
        case ("orig", _), (_, "orig"): throw Self.unsupported("orig beside a size (the source's side with a cropped other)")
        default:
            let w = try width.map { (text) throws(ServiceError) in try Self.side(text) } ?? 0
            let h = try height.map { (text) throws(ServiceError) in try Self.side(text) } ?? 0
            processing.width = w == 0 ? nil : w
            processing.height = h == 0 ? nil : h
        }
        let hflip = try group("hflip") != nil, vflip = try group("vflip") != nil
        let halign = try group("halign") ?? "center", valign = try group("valign") ?? "middle"
        processing.gravity = Self.gravity(halign: halign, valign: valign)
        if try group("smart") != nil { processing.gravity = .smart }

        var filters = ThumborFilters()
        if let text = try group("filters") { try filters.apply(text) }
        var rotation = 0
        try filters.settle(into: &processing, fitIn: fitIn && !full, rotation: &rotation)
        // thumbor mirrors (negative sizes), then turns (counter-clockwise); Tessera turns (clockwise), then
        // mirrors, so a quarter turn exchanges the two mirrors.
        processing.rotation = ImageProcessing.Rotation(rawValue: (360 - rotation) % 360) ?? .none
        let quarter = rotation == 90 || rotation == 270
        let (h, v) = quarter ? (vflip, hflip) : (hflip, vflip)
        processing.flip = h ? (v ? .both : .horizontal) : (v ? .vertical : nil)

        guard var image = try group("image"), !image.isEmpty else { throw ServiceError(.missingSource, "the thumbor URL names no image") }
        let lowered = image.lowercased()
        if !lowered.hasPrefix("http://"), !lowered.hasPrefix("https://") {
            image = String(image.drop { $0 == "/" })
            guard !image.isEmpty else { throw ServiceError(.missingSource, "the thumbor URL names no image") }
        }
        let output = try OutputChoice(fmt: filters.format?.rawValue, accept: accept, negotiates: false,
                                      keepsSourceFormats: [.jpeg, .png, .gif, .webp, .avif])
        return ImageAsk(source: image, processing: processing, output: output, quality: filters.quality, disposition: nil)
    }

    /// A side of the URL's size: a whole number (its sign is the mirror flag, read apart).
    private static func side(_ text: String) throws(ServiceError) -> Int {
        guard let value = Int(text) else { throw ServiceError(.badSize, "a thumbor size is a whole number or orig") }
        return value
    }

    /// The gravity of thumbor's alignments: the compass point of `halign` × `valign`.
    static func gravity(halign: String, valign: String) -> ImageProcessing.Gravity {
        switch (halign, valign) {
        case ("left", "top"): .northWest
        case ("left", "bottom"): .southWest
        case ("left", _): .west
        case ("right", "top"): .northEast
        case ("right", "bottom"): .southEast
        case ("right", _): .east
        case (_, "top"): .north
        case (_, "bottom"): .south
        default: .center
        }
    }

    static func unsupported(_ what: String) -> ServiceError {
        ServiceError(.unsupportedOption, "thumbor's \(what) is not supported: Tessera would answer a different image")
    }
}
#endif
