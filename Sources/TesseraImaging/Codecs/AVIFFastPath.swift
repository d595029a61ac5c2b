import CAVIF

/// AVIF's primary image through libavif (dav1d and its own YUV→RGB conversion), which decodes
/// about 4× faster than libheif 1.15 on this machine (`scripts/bench-avif-decoders`, medians of 11
/// interleaved runs on a loaded 2-core machine: a 2560×1600 photo 94–98 ms against 353–380 ms; an
/// 800×500 one 6.4–26 ms against 35–37 ms).
///
/// libavif leaves `irot`, `imir` and `clap` to its caller, so an image carrying any of them, or
/// one libavif rejects (its parser is stricter), or whose size differs from the one libheif
/// declared and the limits checked, is declined (`false`) and libheif decodes it instead, with
/// its own errors. Pixels are converted straight into the target as premultiplied BGRA.
enum AVIFFastPath {
    /// Decodes the primary image of `data` into `target` (bgra32 or bgr32 of the image's size),
    /// on the calling thread; `false` when declined (nothing useful was written).
    static func decode(_ data: UnsafeRawBufferPointer, into target: MutableBitmapView, limits: DecodingLimits) -> Bool {
        guard let base = data.baseAddress, let decoder = avifDecoderCreate() else { return false }
        defer { avifDecoderDestroy(decoder) }
        decoder.pointee.maxThreads = 1
        decoder.pointee.ignoreExif = AVIF_TRUE
        decoder.pointee.ignoreXMP = AVIF_TRUE
        decoder.pointee.imageSizeLimit = UInt32(clamping: limits.maximumPixelCount)
        decoder.pointee.imageCountLimit = 1
        let layout = target.layout
        guard avifDecoderSetIOMemory(decoder, base.assumingMemoryBound(to: UInt8.self), data.count) == AVIF_RESULT_OK,
              avifDecoderParse(decoder) == AVIF_RESULT_OK, let image = decoder.pointee.image,
              image.pointee.transformFlags == 0,
              Int(image.pointee.width) == layout.width, Int(image.pointee.height) == layout.height,
              layout.bytesPerRow <= Int(UInt32.max),
              avifDecoderNextImage(decoder) == AVIF_RESULT_OK,
              Int(image.pointee.width) == layout.width, Int(image.pointee.height) == layout.height
        else { return false }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_BGRA
        rgb.depth = 8
        rgb.alphaPremultiplied = AVIF_TRUE
        rgb.pixels = target.baseAddress.assumingMemoryBound(to: UInt8.self)
        rgb.rowBytes = UInt32(layout.bytesPerRow)
        guard avifImageYUVToRGB(image, &rgb) == AVIF_RESULT_OK else { return false }
        target.setOpaqueAfterPremultipliedDecode()
        return true
    }
}
