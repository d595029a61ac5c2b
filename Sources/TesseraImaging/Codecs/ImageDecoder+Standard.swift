extension ImageDecoder {
    /// JPEG, PNG, WebP, GIF, HEIC and AVIF decoders sharing `limits` (one ``HEIFDecoder`` per HEIF format).
    public static func standardDecoders(limits: DecodingLimits) -> [any ImageDecoding] {
        [JPEGDecoder(limits: limits), PNGDecoder(limits: limits), WebPDecoder(limits: limits), GIFDecoder(limits: limits),
         HEIFDecoder(format: .heic, limits: limits), HEIFDecoder(format: .avif, limits: limits)]
    }
}
