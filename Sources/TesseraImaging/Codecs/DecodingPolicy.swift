/// How a decoder treats input that is damaged or ends early.
///
/// Browsers draw what they can: a JPEG with a few stray bytes before a marker, a photo whose last
/// 40 % never arrived, a GIF without a colour table. ``lenient`` (the default) does the same, so a
/// photo every browser shows does not "fail to decode" here. ``strict`` refuses all of it, for
/// pipelines that would rather reject a file than keep a partial one.
///
/// Neither policy changes a limit of ``DecodingLimits``: sizes, pixel counts, frame counts and scan
/// counts are checked the same way before any pixel memory is allocated.
public enum DecodingPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Decode what the data holds:
    /// - damage the codec recovers from (libjpeg's warnings: extraneous bytes before a marker, a
    ///   corrupt entropy segment that a restart marker ends, an APPn segment libjpeg warns about, such as a
    ///   JFIF APP0 of an unknown version) decodes to the pixels the codec produces, reported as
    ///   ``DecodeIntegrity/damaged``; APPn segments libjpeg skips without a warning (junk, a cut JFIF
    ///   APP0) decode intact;
    /// - a JPEG, PNG or WebP that ends early decodes the rows that arrived; the rest is filled with
    ///   ``DecodeIntegrity/fillGray`` (opaque formats) or transparent pixels (formats with alpha), and
    ///   the result is ``DecodeIntegrity/truncated``. Fewer rows than
    ///   ``DecodingLimits/minimumDecodedFraction`` of the image are refused as ``/TesseraCore/DecodingFailure/truncated(_:)``.
    case lenient
    /// Refuse damage: every libjpeg warning except "extraneous bytes before marker" fails as
    /// ``/TesseraCore/DecodingFailure/codec(_:message:)``, and data that ends early fails as ``/TesseraCore/DecodingFailure/truncated(_:)``.
    case strict
}

/// What a decode could make of its data. Ordered by severity: `intact < damaged < truncated`.
///
/// Decoders return it (``ImageDecoding/decode(_:info:into:)``), ``Bitmap/integrity`` keeps it with the
/// pixels, and a probe reports ``truncated`` when the header already shows that the data ends early
/// (``ImageInfo/integrity``).
public enum DecodeIntegrity: String, Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// Every byte the image needs was there and the codec reported nothing.
    case intact
    /// Every row was decoded, but the codec recovered from damage on the way (for JPEG, a libjpeg
    /// warning); the pixels are the codec's.
    case damaged
    /// The data ends before the image does: the rows that arrived are decoded, the rest is filled.
    /// For a progressive JPEG or an interlaced PNG every row may be present at a lower quality.
    case truncated

    /// The grey that fills the rows a truncated opaque image never received: 128 in every channel.
    public static let fillGray: UInt8 = 0x80

    /// Whether the pixels are less than the file meant (``damaged`` or ``truncated``).
    public var isPartial: Bool { self != .intact }

    /// The more severe of the two.
    public func combined(with other: DecodeIntegrity) -> DecodeIntegrity { max(self, other) }

    private var rank: Int {
        switch self {
        case .intact: 0
        case .damaged: 1
        case .truncated: 2
        }
    }

    /// Severity order.
    public static func < (lhs: DecodeIntegrity, rhs: DecodeIntegrity) -> Bool { lhs.rank < rhs.rank }

    /// `"intact"`, `"damaged"` or `"truncated"`.
    public var description: String { rawValue }
}
