/// How an image is brought to a box of another shape: the one mode type of the library, of
/// ``ImageProcessing`` (``ImageProcessing/Mode`` is this type) and of drawing and decoding to a size.
///
/// The raw values are the texts of `/v1/resize`'s `mode=`, of preset recipes and of
/// ``ImageProcessing/identity``, and never change. Library cache and table keys name the placement with
/// ``keyText`` instead, the texts they had before the two mode types became one, so that tables written
/// then keep their entries.
///
/// When one drawing places an image in a rectangle (``placement(of:in:)``), ``fit`` and ``pad`` place it
/// as ``fit`` does, ``fill`` and ``fillDown`` as ``fill`` does; what ``pad`` and ``fillDown`` add (the
/// background, the smaller box) is ``ImageProcessing``'s geometry.
public enum ContentMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// The largest size with the source's aspect ratio inside the box; nothing is cropped (UIKit's
    /// `scaleAspectFit`).
    case fit
    /// The box exactly (unless ``ImageProcessing/enlarge`` is off and the source is smaller): the source
    /// covers it and the overflow is cropped around the ``ImageProcessing/gravity`` (UIKit's
    /// `scaleAspectFill`; CSS's `object-fit: cover`).
    case fill
    /// Like ``fill``, but never enlarging: when the source is smaller than the box, the box shrinks,
    /// keeping its own aspect ratio, until it fits inside the source (imgproxy's `fill-down`).
    case fillDown = "fill-down"
    /// The box exactly, the whole source stretched to it; the aspect ratio is ignored. Raw value `force`
    /// (imgproxy's name).
    case stretch = "force"
    /// ``fit``, then extended to exactly the box with ``ImageProcessing/background``, the image placed by
    /// the ``ImageProcessing/gravity``.
    case pad
    /// The smallest size with the source's aspect ratio that covers the box; nothing is cropped, so one side
    /// may overflow the box (thumbor's `full-fit-in`).
    case cover

    /// A mode from its raw value or from a name it had before: `aspectFit` and `aspectFill` (the former
    /// ``ContentMode`` cases); `nil` for anything else.
    public init?(name: String) {
        switch name {
        case "aspectFit": self = .fit
        case "aspectFill": self = .fill
        default: self.init(rawValue: name)
        }
    }

    /// Decodes a raw value, or `aspectFit` / `aspectFill` as the former ``ContentMode`` wrote them.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let mode = ContentMode(name: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown mode '\(text)'"))
        }
        self = mode
    }

    /// The placement's text in the library's cache and table keys (`ImageKey`, URL table variants):
    /// `aspectFit`, `aspectFill` and `fill` (stretch) as before the mode types became one, so that keys
    /// written then still match; the raw value for the modes added since.
    public var keyText: String {
        switch self {
        case .fit: "aspectFit"
        case .fill: "aspectFill"
        case .stretch: "fill"
        case .fillDown, .pad, .cover: rawValue
        }
    }

    /// The whole-pixel size `contentSize` is scaled to when placed in `bounds` with this mode
    /// (the placement rounded up): the smallest decoded size that needs no upscaling.
    public func coveringSize(of contentSize: PixelSize, in bounds: PixelSize) -> PixelSize {
        let placed = placement(of: contentSize, in: Rect(size: bounds))
        return PixelSize(width: max(1, Int(placed.width.rounded(.up))), height: max(1, Int(placed.height.rounded(.up))))
    }

    /// The rectangle `content` (of `contentSize`) occupies when placed in `bounds` with this mode, centred.
    /// For ``fill`` and ``fillDown`` it extends beyond `bounds`; draw it clipped.
    public func placement(of contentSize: PixelSize, in bounds: Rect) -> Rect {
        let cw = Double(contentSize.width), ch = Double(contentSize.height)
        guard cw > 0, ch > 0 else { return bounds }
        let sx = bounds.width / cw, sy = bounds.height / ch
        let s: Double
        switch self {
        case .stretch: return bounds
        case .fit, .pad: s = min(sx, sy)
        case .fill, .fillDown, .cover: s = max(sx, sy)
        }
        let w = cw * s, h = ch * s
        return Rect(x: bounds.x + (bounds.width - w) / 2, y: bounds.y + (bounds.height - h) / 2, width: w, height: h)
    }

    /// The former name of ``fit``.
    @available(*, deprecated, renamed: "fit", message: "ContentMode is the one mode type; aspectFit is fit")
    public static var aspectFit: ContentMode { .fit }
    /// The former name of ``fill``.
    @available(*, deprecated, renamed: "fill", message: "ContentMode is the one mode type; aspectFill is fill")
    public static var aspectFill: ContentMode { .fill }
    /// The former name of ``stretch`` in ``ImageProcessing`` (`mode=force` in URLs and recipes stays).
    @available(*, deprecated, renamed: "stretch", message: "ContentMode is the one mode type; force is stretch")
    public static var force: ContentMode { .stretch }
}
