extension ImageDecoder {
    /// JPEG, PNG, WebP and GIF decoders sharing `limits`.
    public static func standardDecoders(limits: DecodingLimits) -> [any ImageDecoding] {
        [JPEGDecoder(limits: limits), PNGDecoder(limits: limits), WebPDecoder(limits: limits), GIFDecoder(limits: limits)]
    }
}
