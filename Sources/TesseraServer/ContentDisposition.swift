#if Serving
import Tessera

/// A request's `filename=NAME` and `attachment=1`: the `Content-Disposition` of its image answers. Not part
/// of the response's cache key (the image is the same whatever it is called): it is added to each answer,
/// a memory hit's included.
struct ContentDisposition: Sendable, Hashable {
    /// The sanitised name, without an extension: `nil` names no file (only `attachment` given).
    let name: String?
    /// `attachment` (save) rather than `inline` (show).
    let attachment: Bool

    /// The longest name kept, in characters.
    static let maximumNameLength = 100

    /// The disposition `query` asks for, or `nil` when it has neither `filename` nor `attachment`.
    /// `filename`'s characters outside `A–Z a–z 0–9 . _ -` become `_` (so no quote, slash or control
    /// character reaches the header), a final extension is dropped (the served format's is added), and
    /// the name is cut to ``maximumNameLength``; one that keeps no letter or digit is `400 bad_filename`.
    /// `attachment` is `0`, `1`, `false` or `true` (`400 bad_attachment`).
    init?(query: [String: String]) throws(ServiceError) {
        guard query["filename"] != nil || query["attachment"] != nil else { return nil }
        var attachment = false
        if let text = query["attachment"] {
            guard let flag = ImageService.flag(text) else { throw ServiceError(.badAttachment, "attachment is 0 or 1") }
            attachment = flag
        }
        try self.init(name: query["filename"], attachment: attachment)
    }

    /// A disposition naming `raw` (sanitised as ``init(query:)`` says; `nil`: no name), `attachment` or inline.
    init(name raw: String?, attachment: Bool) throws(ServiceError) {
        self.attachment = attachment
        guard let raw else {
            name = nil
            return
        }
        var stem = Substring(raw)
        if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = stem[..<dot] }
        let safe = String(stem.unicodeScalars.prefix(Self.maximumNameLength).map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "._-".unicodeScalars.contains(scalar))
                ? Character(scalar) : "_"
        })
        guard safe.unicodeScalars.contains(where: { $0.properties.isAlphabetic || ("0"..."9").contains($0) }) else {
            throw ServiceError(.badFilename, "filename has no letter or digit once sanitised to A–Z, a–z, 0–9, '.', '_', '-'")
        }
        name = safe
    }

    /// The header's value for an answer in `format`: `inline; filename="NAME.EXT"` (`attachment; …`), or
    /// just `attachment` without a name.
    func value(for format: ImageFileFormat?) -> String {
        let kind = attachment ? "attachment" : "inline"
        guard let name else { return kind }
        return "\(kind); filename=\"\(name).\(format?.fileExtension ?? "img")\""
    }
}

extension ImageService.ImageResponse {
    /// This answer with `disposition`'s `Content-Disposition` for its format (none on a `304`, which has
    /// no body to name).
    func disposed(_ disposition: ContentDisposition?) -> Self {
        guard let disposition, status != 304 else { return self }
        var response = self
        response.contentDisposition = disposition.value(for: ImageFileFormat(mediaType: contentType))
        return response
    }
}
#endif
