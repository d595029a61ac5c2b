#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// The output format (one that ``ImageFileFormat/isEncodable``): explicit (`fmt=`), chosen from `Accept`,
/// or, for the URL dialects that keep it (imgproxy's and thumbor's URLs without a format), the source's.
struct OutputChoice: Sendable {
    private let explicit: ImageFileFormat?
    /// The best format `Accept` names: AVIF, else WebP, else `nil` (JPEG or PNG, or the source's).
    private let accepted: ImageFileFormat?
    /// The source formats an answer that neither `fmt` nor `Accept` decides keeps (JPEG or PNG by
    /// transparency for the others); empty for Tessera's own routes.
    private let keptFormats: Set<ImageFileFormat>
    /// The part of the cache key and ETag that decides the format.
    var key: String {
        explicit.map { "f:\($0.rawValue)" } ?? accepted.map { "a:\($0.rawValue)" }
            ?? (keptFormats.isEmpty ? "a:legacy" : "a:keep-" + keptFormats.map(\.rawValue).sorted().joined(separator: "-"))
    }

    /// The format `fmt` or `Accept` decided; `nil` when the source's transparency or format will.
    var chosenFormat: ImageFileFormat? { explicit ?? accepted }

    /// Whether the answer may animate: `fmt` animates (GIF, WebP) or is not given. Never AVIF, which
    /// Tessera writes still.
    var animates: Bool { explicit?.canAnimate ?? true }

    /// The format of an animated answer from a `source`-format animation: `fmt` when it animates (GIF,
    /// WebP), `nil` (a still) for another `fmt`; without `fmt`, WebP when `Accept` chose AVIF or WebP, else
    /// the source's when it animates and is kept, else GIF. AVIF's choice counts as WebP's because every
    /// browser that takes AVIF takes WebP (Chrome, Firefox, Safari 16 on), and so that the format `Accept`
    /// chose is still the one key of a resolved request (``ResolvedTargets``).
    func animatedFormat(source: ImageFileFormat?) -> ImageFileFormat? {
        if let explicit { return explicit.canAnimate ? explicit : nil }
        if accepted != nil { return .webp }
        if let source, source.canAnimate, keptFormats.contains(source) { return source }
        return .gif
    }

    /// `fmt` (explicit) or, without it, the format `accept` chooses, else the source's when it is one of
    /// `keepsSourceFormats` (each of them one that Tessera writes). `negotiates` false ignores `accept`
    /// (imgproxy's URLs without `--imgproxy-auto-format`).
    init(fmt: String?, accept: String?, negotiates: Bool = true, keepsSourceFormats: Set<ImageFileFormat> = []) throws(ServiceError) {
        keptFormats = keepsSourceFormats
        if let fmt {
            explicit = try Self.format(named: fmt)
            accepted = nil
        } else {
            explicit = nil
            accepted = negotiates ? accept.flatMap(Self.bestAccepted) : nil
        }
    }

    /// The format `fmt` names (any case; `jpg` is JPEG), when Tessera writes it: the query's one parser of formats.
    static func format(named fmt: String) throws(ServiceError) -> ImageFileFormat {
        let name = fmt.lowercased()
        guard let format = name == "jpg" ? .jpeg : ImageFileFormat(rawValue: name), format.isEncodable else {
            throw ServiceError(.format, "fmt is " + ImageService.names(ImageFileFormat.encodable.map(\.rawValue)))
        }
        return format
    }

    /// The format for an image of `pixels` pixels with or without transparent pixels, drawn from a
    /// `source`-format file (`nil`: not known, as for a table hit or a fallback image). When `Accept` chose
    /// AVIF for an opaque image of fewer than `avifMinPixels` pixels, WebP: at that size WebP of the same
    /// visual quality is a few per cent larger than libaom's fastest AVIF and takes half as long to write
    /// (``ServerConfiguration/avifMinPixels``). An image with transparent pixels stays AVIF (WebP keeps its
    /// alpha lossless, several times AVIF's bytes), and `fmt=avif` is always AVIF.
    func format(hasAlpha: Bool, source: ImageFileFormat? = nil, pixels: Int = .max, avifMinPixels: Int = 0) -> ImageFileFormat {
        if let explicit { return explicit }
        if let accepted { return accepted == .avif && !hasAlpha && pixels < avifMinPixels ? .webp : accepted }
        if let source, keptFormats.contains(source) { return source }
        return hasAlpha ? .png : .jpeg
    }

    /// Whether `Accept` lists `type` (`image/avif` or `image/webp`) explicitly with a non-zero quality.
    static func accepts(_ type: ImageFileFormat, in accept: String?) -> Bool {
        guard let accept else { return false }
        let verdicts = verdicts(of: accept)
        return (type == .avif ? verdicts.avif : type == .webp ? verdicts.webp : nil) == true
    }

    /// AVIF when `Accept` lists `image/avif` with q > 0, else WebP when it lists `image/webp` with q > 0.
    static func bestAccepted(_ accept: String) -> ImageFileFormat? {
        let verdicts = verdicts(of: accept)
        return verdicts.avif == true ? .avif : verdicts.webp == true ? .webp : nil
    }

    /// What the first range naming `image/avif`, and the first naming `image/webp`, say (`nil`: not
    /// named): their q is above 0, or absent. One pass over the header's bytes, case-insensitive, no
    /// allocation (every request reads it, memory hits included): `image/*` and `*/*` name neither.
    static func verdicts(of accept: String) -> (avif: Bool?, webp: Bool?) {
        var header = accept
        return header.withUTF8 { bytes -> (avif: Bool?, webp: Bool?) in
            var avif: Bool?, webp: Bool?
            var start = 0
            while start <= bytes.count, avif == nil || webp == nil {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
                let range = UnsafeBufferPointer(rebasing: bytes[start..<end])
                if let (type, q) = Self.mediaRange(range) {
                    if type == .avif, avif == nil { avif = q }
                    if type == .webp, webp == nil { webp = q }
                }
                start = end + 1
            }
            return (avif, webp)
        }
    }

    /// The format a media range (`image/webp;q=0.8`) names, if AVIF or WebP, with whether its q is above 0.
    private static func mediaRange(_ range: UnsafeBufferPointer<UInt8>) -> (ImageFileFormat, Bool)? {
        var end = 0
        while end < range.count, range[end] != UInt8(ascii: ";") { end += 1 }
        let type = trimmed(range[0..<end])
        let format: ImageFileFormat
        if equalsIgnoringCase(type, "image/avif") { format = .avif } else if equalsIgnoringCase(type, "image/webp") { format = .webp } else { return nil }
        var start = end + 1
        while start < range.count {   // the parameters, `;`-separated: the first `q=` decides
            end = start
            while end < range.count, range[end] != UInt8(ascii: ";") { end += 1 }
            let text = trimmed(range[start..<end])
            if text.count >= 2, text[text.startIndex] | 0x20 == UInt8(ascii: "q"), text[text.startIndex + 1] == UInt8(ascii: "=") {
                let value = Double(String(decoding: text.dropFirst(2), as: UTF8.self)) ?? 1
                return (format, value > 0)
            }
            start = end + 1
        }
        return (format, true)
    }

    private static func trimmed(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Slice<UnsafeBufferPointer<UInt8>> {
        var lower = bytes.startIndex, upper = bytes.endIndex
        while lower < upper, bytes[lower] == UInt8(ascii: " ") || bytes[lower] == UInt8(ascii: "\t") { lower += 1 }
        while upper > lower, bytes[upper - 1] == UInt8(ascii: " ") || bytes[upper - 1] == UInt8(ascii: "\t") { upper -= 1 }
        return bytes[lower..<upper]
    }

    /// Whether `bytes` spell `lowercase` (ASCII letters compared without case).
    private static func equalsIgnoringCase(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        for (byte, want) in zip(bytes, expected) {
            let folded = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            if folded != want { return false }
        }
        return true
    }
}
#endif
