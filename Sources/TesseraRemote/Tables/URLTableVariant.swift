import TesseraImaging
import TesseraTables
import Foundation

/// The image table a URL request's variant is stored in, when the variant has one fixed output size: its
/// size and the text that names its style (``URLTables``).
///
/// A variant qualifies when every answer to it has the same size, because a table slot has one:
/// - ``ImageKey/size`` with ``/TesseraImaging/ContentMode/fill`` or ``/TesseraImaging/ContentMode/stretch``
///   (``/TesseraImaging/ContentMode/fit`` follows the source's aspect ratio);
/// - ``ImageKey/processing`` with both a width and a height and a mode that gives that box:
///   ``/TesseraImaging/ContentMode/fill``, ``/TesseraImaging/ContentMode/fillDown``,
///   ``/TesseraImaging/ContentMode/stretch`` or ``/TesseraImaging/ContentMode/pad``. Without
///   ``/TesseraImaging/ImageProcessing/enlarge``, fill, fill-down and force give less than the box for a source
///   smaller than it: such an answer does not fit the slot and is not stored.
///
/// ``ImageKey/processors`` are part of the style; an answer they bring to another size is not stored either.
struct URLTableVariant: Sendable, Hashable {
    /// The size of every entry.
    var size: PixelSize
    /// The style without the image's identity: the size and mode, or the processing's identity without its
    /// output format and quality (the manager hands out pixels, never encoded files), then the processors'.
    var style: String

    /// The variant of `key`, or `nil` when its output size is not fixed.
    init?(_ key: ImageKey) {
        if var processing = key.processing {
            guard let largest = processing.maximumOutputSize, processing.mode != .fit else { return nil }
            processing.format = nil
            processing.quality = nil
            size = largest
            style = "processing:" + processing.identity
        } else {
            guard let size = key.size, key.mode != .fit else { return nil }
            self.size = size
            style = "size:\(size)/\(key.mode.keyText)"
        }
        if !key.processors.isEmpty { style += "|" + ImageProcessor.identity(of: key.processors) }
    }

    /// The table's format: named `url-` and 32 hex digits of the SHA-256 of the style and the pixel style, so
    /// the same variant finds the same file in every process.
    func format(style pixelStyle: PixelStyle, maximumCount: Int) -> ImageFormat {
        let name = "url-" + SHA256.hex(style + "|" + pixelStyle.rawValue).prefix(32)
        return ImageFormat(name: name, family: "urls", style: pixelStyle, size: size, maximumCount: maximumCount)
    }
}
