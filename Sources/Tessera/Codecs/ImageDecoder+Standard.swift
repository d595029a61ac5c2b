extension ImageDecoder {
    /// JPEG, PNG, WebP and GIF decoders sharing `limits`.
    public static func standardDecoders(limits: DecodingLimits) -> [any ImageDecoding] {
        []
    }
}
