/// A step run on a decoded image after its ``ImageProcessing`` (size, crop, blur): rounded corners, a
/// circle, or your own closure. Requests carry a list of them; they run in order, once per distinct
/// request, off the caller's thread, and their ``identifier``s are part of every cache key, so two requests
/// that differ only in a processor never share pixels.
///
/// Two processors are equal when their identifiers are, so a custom processor's identifier must change
/// whenever what it draws does (put its parameters in it: `"sepia(0.8)"`).
///
/// ```swift
/// let avatar = try ImageProcessor.circle(border: .init(width: 2, color: .white)).process(photo)
/// let card = try ImageProcessor.roundedCorners(radius: 12).process(photo)
/// // Your own step: its identifier names everything that shapes its output.
/// let framed = ImageProcessor(identifier: "app.frame(4,black)") { image in
///     try Bitmap.drawing(size: image.layout.size) { context in
///         context.fill(with: .black)
///         try context.draw(image, in: Rect(x: 4, y: 4, width: Double(image.width - 8), height: Double(image.height - 8)))
///     }
/// }
/// let shown = try ImageProcessor.apply([framed, .roundedCorners(radius: 8)], to: photo)
/// ```
public struct ImageProcessor: Sendable, Hashable, CustomStringConvertible {
    /// What stands for this processor in cache keys: equal identifiers promise equal output.
    public let identifier: String
    private let body: @Sendable (Bitmap) throws -> Bitmap

    /// A processor running `body`, known as `identifier` in cache keys. An error `body` throws becomes a
    /// ``/TesseraCore/TesseraError`` with reason ``/TesseraCore/TesseraError/Reason/drawing(message:)`` naming the identifier, the
    /// original kept as its `underlying` error.
    public init(identifier: String, _ body: @escaping @Sendable (Bitmap) throws -> Bitmap) {
        self.identifier = identifier
        self.body = body
    }

    /// Runs the processor on `image`. The result keeps the input's ``Bitmap/integrity`` (the more severe of
    /// the two, when the processor sets one): a circle cut from a truncated decode is still partial, and a
    /// cache that refuses partial images refuses it too.
    public func process(_ image: Bitmap) throws(TesseraError) -> Bitmap {
        do {
            var result = try body(image)
            result.integrity = result.integrity.combined(with: image.integrity)
            return result
        } catch {
            throw TesseraError.wrapping(error) { TesseraError(.drawing(message: "processor \(identifier) failed"), underlying: $0) }
        }
    }

    /// Runs `processors` on `image` in order.
    public static func apply(_ processors: [ImageProcessor], to image: Bitmap) throws(TesseraError) -> Bitmap {
        var image = image
        for processor in processors { image = try processor.process(image) }
        return image
    }

    /// The identifiers of `processors` in order, joined by `|`: the part of a cache key that stands for them
    /// (empty for none).
    public static func identity(of processors: [ImageProcessor]) -> String {
        processors.map(\.identifier).joined(separator: "|")
    }

    /// ``identifier``.
    public var description: String { identifier }

    /// Processors are equal when their identifiers are.
    public static func == (lhs: ImageProcessor, rhs: ImageProcessor) -> Bool { lhs.identifier == rhs.identifier }

    /// Hashes the identifier.
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}

extension ImageProcessor {
    /// A line drawn inside the edge of a shape: `width` pixels of `color`.
    public struct Border: Sendable, Hashable {
        /// The line's width in pixels of the output (clamped to half the shorter side).
        public var width: Double
        /// The line's colour.
        public var color: Color

        /// A border of `width` pixels in `color`.
        public init(width: Double, color: Color) {
            self.width = width
            self.color = color
        }

        /// `width:red,green,blue,alpha`, each in its shortest round-trip text.
        var identity: String {
            ([width, color.red, color.green, color.blue, color.alpha].map(ImageProcessing.canonical)).joined(separator: ",")
        }
    }

    /// The image with its corners rounded to `radius` pixels (clamped to half the shorter side) and,
    /// optionally, a border along the rounded edge; outside the corners is transparent (the output is
    /// ``PixelStyle/bgra32``, the size of the input). Anti-aliased by cairo.
    public static func roundedCorners(radius: Double, border: Border? = nil) -> ImageProcessor {
        let radius = max(0, radius)
        let id = "tessera.roundedCorners(\(ImageProcessing.canonical(radius)),\(border?.identity ?? "-"))"
        return ImageProcessor(identifier: id) { image in
            // Inside a border the corners' radius shrinks by the border's width, so the line keeps its width
            // around them.
            try masked(image, size: image.layout.size, source: nil, border: border) { context, rect, inset in
                context.clip(toRoundedRect: rect, radius: max(0, radius - inset))
            }
        }
    }

    /// The largest centred square of the image, masked to a circle and, optionally, with a border along its
    /// edge; outside the circle is transparent (the output is ``PixelStyle/bgra32``, side × side where side
    /// is the input's shorter side).
    public static func circle(border: Border? = nil) -> ImageProcessor {
        ImageProcessor(identifier: "tessera.circle(\(border?.identity ?? "-"))") { image in
            let side = min(image.width, image.height)
            // The centred square: (w − side) / 2 columns off the left, (h − side) / 2 rows off the top.
            let source = Rect(x: Double((image.width - side) / 2), y: Double((image.height - side) / 2),
                              width: Double(side), height: Double(side))
            return try masked(image, size: PixelSize(width: side, height: side), source: source, border: border) { context, rect, _ in
                context.clip(toEllipseIn: rect)
            }
        }
    }

    /// Draws `image` (or its `source` part) into a transparent `size` bitmap, inside the shape `clip` makes
    /// of a rectangle inset by a number of pixels. With a border, the whole shape (inset 0) is filled with the
    /// border's colour first and the image drawn inside the shape inset by the border's width.
    private static func masked(_ image: Bitmap, size: PixelSize, source: Rect?, border: Border?,
                               _ clip: (DrawingContext, Rect, Double) -> Void) throws -> Bitmap {
        let full = Rect(x: 0, y: 0, width: Double(size.width), height: Double(size.height))
        let inset = min(max(0, border?.width ?? 0), full.width / 2, full.height / 2)
        let inner = Rect(x: inset, y: inset, width: full.width - 2 * inset, height: full.height - 2 * inset)
        return try Bitmap.drawing(size: size, style: .bgra32) { context in
            if let border, inset > 0 {
                context.withSavedState {
                    clip(context, full, 0)
                    context.fill(with: border.color)
                }
            }
            clip(context, inner, inset)
            // The image is drawn over the whole output (the clip keeps the shape), so the inset only moves
            // the edge of the mask, never the picture.
            if let source {
                try context.draw(image, from: source, in: full)
            } else {
                try context.draw(image, in: full, mode: .stretch)
            }
        }
    }
}
