/// Limits checked **before** any pixel memory is allocated, so that hostile input (decompression
/// bombs, huge files) fails fast with a typed error.
public struct DecodingLimits: Sendable, Hashable {
    /// Largest width × height accepted. Default 64 megapixels (a 64 MP BGRA image is 256 MiB).
    public var maximumPixelCount: Int
    /// Largest encoded input accepted, in bytes. Default 128 MiB.
    public var maximumInputBytes: Int

    /// Creates limits.
    public init(maximumPixelCount: Int = 64_000_000, maximumInputBytes: Int = 128 << 20) {
        self.maximumPixelCount = maximumPixelCount
        self.maximumInputBytes = maximumInputBytes
    }

    /// The defaults: 64 megapixels, 128 MiB.
    public static let `default` = DecodingLimits()

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
}
