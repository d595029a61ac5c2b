/// Limits checked **before** any pixel memory is allocated, so that hostile input (decompression
/// bombs, huge files) fails fast with a typed error.
public struct DecodingLimits: Sendable, Hashable {
    /// Largest width × height accepted. Default 64 megapixels (a 64 MP BGRA image is 256 MiB).
    public var maximumPixelCount: Int
    /// Largest encoded input accepted, in bytes. Default 128 MiB.
    public var maximumInputBytes: Int
    /// Most frames an animation may have. Default 1,000.
    public var maximumFrameCount: Int
    /// Largest canvas width × height × frame count an animation may decode to. Default 128 megapixels
    /// (512 MiB of BGRA frames: 500 frames of a 512×512 canvas, or 15 of a 3000×3000 one).
    public var maximumAnimationPixelCount: Int
    /// Most items a HEIF container (HEIC, AVIF) may declare in its `iinf` box: images, grid tiles,
    /// thumbnails, metadata. Default 1,024: a phone's 48 MP photo has about 60 (an 8×6 grid of
    /// 512×512 tiles, a thumbnail, Exif), and 1,024 tiles of 256×256 already make 67 megapixels,
    /// more than ``maximumPixelCount``. Checked before libheif decodes a tile.
    public var maximumItemCount: Int
    /// What to do with damaged or truncated data; ``DecodingPolicy/lenient`` by default, as browsers are.
    public var policy: DecodingPolicy
    /// The smallest fraction of an image's rows that a truncated file must deliver to be decoded under
    /// ``DecodingPolicy/lenient``. Default 0.1: a 3000-row photo needs 300 rows; below that the decode
    /// fails with ``/TesseraCore/DecodingFailure/truncated(_:)`` under either policy, since a picture that is mostly
    /// filler is not worth showing or caching.
    public var minimumDecodedFraction: Double

    /// Creates limits.
    public init(maximumPixelCount: Int = 64_000_000, maximumInputBytes: Int = 128 << 20,
                maximumFrameCount: Int = 1_000, maximumAnimationPixelCount: Int = 128_000_000,
                maximumItemCount: Int = 1_024, policy: DecodingPolicy = .lenient, minimumDecodedFraction: Double = 0.1) {
        self.policy = policy
        self.minimumDecodedFraction = minimumDecodedFraction
        self.maximumItemCount = maximumItemCount
        self.maximumPixelCount = maximumPixelCount
        self.maximumInputBytes = maximumInputBytes
        self.maximumFrameCount = maximumFrameCount
        self.maximumAnimationPixelCount = maximumAnimationPixelCount
    }

    /// The defaults: 64 megapixels, 128 MiB, 1,000 frames, 128 megapixels over all frames, 1,024 HEIF items,
    /// lenient decoding of at least 10 % of the rows.
    public static let `default` = DecodingLimits()

    /// The defaults with ``DecodingPolicy/strict``.
    public static let strict = DecodingLimits(policy: .strict)

    /// The integrity of a decode whose data ended after `decodedRows` of `rows` rows (stored orientation)
    /// had arrived: ``DecodeIntegrity/truncated`` under ``DecodingPolicy/lenient`` when at least
    /// ``minimumDecodedFraction`` of the rows arrived. Throws ``/TesseraCore/DecodingFailure/truncated(_:)`` otherwise.
    /// A 1000-row image at the default 0.1 needs 100 rows: 99 throws, 100 decodes.
    public func acceptTruncation(decodedRows: Int, of rows: Int, format: ImageFileFormat) throws(TesseraError) -> DecodeIntegrity {
        guard policy == .lenient, rows > 0, decodedRows > 0,
              Double(decodedRows) >= (minimumDecodedFraction * Double(rows)).rounded(.up) else {
            throw TesseraError(.decoding(.truncated(format)))
        }
        return .truncated
    }

    /// The integrity of a decode during which the codec recovered from damage and reported `message`:
    /// ``DecodeIntegrity/damaged`` under ``DecodingPolicy/lenient``; throws ``/TesseraCore/DecodingFailure/codec(_:message:)``
    /// under ``DecodingPolicy/strict``.
    public func acceptDamage(_ message: String, format: ImageFileFormat) throws(TesseraError) -> DecodeIntegrity {
        guard policy == .lenient else { throw TesseraError(.decoding(.codec(format, message: message))) }
        return .damaged
    }

    /// Throws unless `bytes` is acceptable input size.
    public func checkInput(byteCount: Int) throws(TesseraError) {
        if byteCount == 0 { throw TesseraError(.decoding(.empty)) }
        if byteCount > maximumInputBytes {
            throw TesseraError(.decoding(.inputTooLarge(bytes: byteCount, limit: maximumInputBytes)))
        }
    }

    /// Throws unless the declared dimensions are positive and within ``maximumPixelCount``.
    public func checkDimensions(width: Int, height: Int) throws(TesseraError) {
        guard width > 0, height > 0 else { throw TesseraError(.decoding(.invalidDimensions(width: width, height: height))) }
        let (count, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || count > maximumPixelCount {
            throw TesseraError(.decoding(.tooManyPixels(width: width, height: height, limit: maximumPixelCount)))
        }
    }

    /// Throws unless a HEIF container's `count` items are within ``maximumItemCount``.
    public func checkItems(count: Int) throws(TesseraError) {
        if count > maximumItemCount { throw TesseraError(.decoding(.tooManyItems(count: count, limit: maximumItemCount))) }
    }

    /// Throws unless an animation of `frames` frames of `width` × `height` fits ``maximumFrameCount``
    /// and ``maximumAnimationPixelCount``. Decoders call it before allocating each frame.
    public func checkAnimation(frames: Int, width: Int, height: Int) throws(TesseraError) {
        if frames > maximumFrameCount { throw TesseraError(.decoding(.tooManyFrames(limit: maximumFrameCount))) }
        let (perFrame, o1) = width.multipliedReportingOverflow(by: height)
        let (total, o2) = perFrame.multipliedReportingOverflow(by: frames)
        if o1 || o2 || total > maximumAnimationPixelCount {
            throw TesseraError(.decoding(.animationTooLarge(frames: frames, width: width, height: height,
                                                            limit: maximumAnimationPixelCount)))
        }
    }
}
