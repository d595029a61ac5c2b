#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// The one way the service turns source bytes into pixels, for presets (into a table slot) and ad-hoc
/// sizes (into a bitmap) alike: decoded upright and downscaled once, straight to the output size.
enum Renderer {
    /// The output size of a `source`-sized image in `box`: the box for `fill` (covered, then cropped), the
    /// largest size with the source's aspect ratio inside the box for `fit` (at least 1×1).
    /// A 4000×3000 photo in a 300×300 box: `fit` gives 300×225 (scale min(300/4000, 300/3000) = 0.075).
    static func outputSize(of source: PixelSize, box: PixelSize, mode: ServerConfiguration.Mode) -> PixelSize {
        guard mode == .fit else { return box }
        let scale = min(Double(box.width) / Double(source.width), Double(box.height) / Double(source.height))
        return PixelSize(width: min(box.width, max(1, Int((Double(source.width) * scale).rounded()))),
                         height: min(box.height, max(1, Int((Double(source.height) * scale).rounded()))))
    }

    /// Decodes `data` to exactly `target`'s size, covering it and cropping the excess (the aspect ratio of
    /// a `fit` size is the source's, so nothing is cropped beyond rounding). Returns how complete the decode was.
    @discardableResult
    static func render(_ data: Data, into target: MutableBitmapView, decoder: ImageDecoder) throws -> DecodeIntegrity {
        target.prepareForDrawing()
        // An untyped closure: a `throws(TesseraError)` one here crashes the 6.3 compiler (docs/COMPILER-BUGS.md).
        return try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws -> DecodeIntegrity in
            try decoder.decode(bytes: bytes, into: target, mode: .aspectFill)
        }
    }

    /// `data` decoded into a new bitmap of its output size in `box`.
    static func render(_ data: Data, info: ImageInfo, box: PixelSize, mode: ServerConfiguration.Mode,
                       decoder: ImageDecoder) throws -> Bitmap {
        let size = outputSize(of: info.displaySize, box: box, mode: mode)
        var integrity = DecodeIntegrity.intact
        var bitmap = try Bitmap(width: size.width, height: size.height, style: .bgra32) { view in
            integrity = try render(data, into: view, decoder: decoder)
        }
        bitmap.integrity = integrity
        return bitmap
    }
}
#endif
