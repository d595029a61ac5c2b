import TesseraImaging
import TesseraTables
import Foundation

/// Identifies one decoded image in a ``MemoryCaching`` cache: a URL and the variant it was decoded to.
///
/// Downloads are shared per URL; decoded images are kept per key, so the same URL requested at two
/// sizes is downloaded once and decoded twice.
public struct ImageKey: Sendable, Hashable, CustomStringConvertible {
    /// The image's URL.
    public var url: URL
    /// The requested size, or `nil` for the full image.
    public var size: PixelSize?
    /// How the image is fitted to ``size`` (meaningless when `size` is `nil`, and then normalised to
    /// ``/TesseraImaging/ContentMode/fit``). The default is ``/TesseraImaging/ContentMode/fill``, as everywhere in Tessera
    /// (``/TesseraImaging/ImageDecoder/thumbnail(_:size:mode:style:)``, ``/TesseraTables/ImageEntity``'s drawing, image tables):
    /// - ``/TesseraImaging/ContentMode/fit``: the largest size inside `size` with the image's aspect ratio, never
    ///   larger than the image itself;
    /// - ``/TesseraImaging/ContentMode/fill``: exactly `size`, centred and cropped;
    /// - ``/TesseraImaging/ContentMode/stretch``: exactly `size`, stretched;
    /// - ``/TesseraImaging/ContentMode/fillDown`` and ``/TesseraImaging/ContentMode/pad``: as
    ///   ``/TesseraImaging/ImageProcessing`` draws them in a box of `size` (a fill that never enlarges; a
    ///   fit padded to `size` with its default background).
    public var mode: ContentMode
    /// The processing the image is drawn with (``/TesseraImaging/ImageDecoder/render(_:processing:limits:)``),
    /// which replaces ``size`` and ``mode`` when set. Keys that differ in any of its fields (gravity, say)
    /// are different images.
    public var processing: ImageProcessing?
    /// The steps run after the decode or ``processing``, in order (``/TesseraImaging/ImageProcessor``); keys that
    /// differ in any identifier are different images.
    public var processors: [ImageProcessor] = []

    /// Creates a key.
    public init(url: URL, size: PixelSize? = nil, mode: ContentMode = .fill) {
        self.url = url
        self.size = size
        self.mode = size == nil ? .fit : mode
    }

    /// A key of the image at `url` drawn with `processing`.
    public init(url: URL, processing: ImageProcessing) {
        self.init(url: url)
        self.processing = processing
    }

    /// `url`, `url@WxH/mode`, or `url#` and the processing's ``/TesseraImaging/ImageProcessing/identity``; then
    /// `|` and the processors' identifiers joined by `|`, when there are any.
    public var description: String {
        let processed = processors.isEmpty ? "" : "|" + ImageProcessor.identity(of: processors)
        if let processing { return "\(url.absoluteString)#\(processing.identity)" + processed }
        guard let size else { return url.absoluteString + processed }
        return "\(url.absoluteString)@\(size)/\(mode.keyText)" + processed
    }
}
