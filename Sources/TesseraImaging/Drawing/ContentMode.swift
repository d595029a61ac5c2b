/// How an image is placed in a rectangle of another shape.
///
/// ``stretch`` places as ``ImageProcessing/Mode/force`` draws and ``aspectFill`` as ``ImageProcessing/Mode/fill``
/// crops; ``aspectFit`` leaves the rest of the rectangle untouched. The raw values are the texts of cache
/// keys and JSON and never change: ``stretch``'s is `fill`, its name before it was named for what it does.
public enum ContentMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Stretch to the rectangle exactly; the aspect ratio may change. Raw value `fill` (its former name).
    case stretch = "fill"
    /// Scale to the largest size that fits inside, centred; the rest of the rectangle is untouched.
    case aspectFit
    /// Scale to the smallest size that covers the rectangle, centred; the overflow is cropped.
    case aspectFill

    /// The whole-pixel size `contentSize` is scaled to when placed in `bounds` with this mode
    /// (the placement rounded up): the smallest decoded size that needs no upscaling.
    public func coveringSize(of contentSize: PixelSize, in bounds: PixelSize) -> PixelSize {
        let placed = placement(of: contentSize, in: Rect(size: bounds))
        return PixelSize(width: max(1, Int(placed.width.rounded(.up))), height: max(1, Int(placed.height.rounded(.up))))
    }

    /// The rectangle `content` (of `contentSize`) occupies when placed in `bounds` with this mode.
    /// For ``aspectFill`` it extends beyond `bounds`; draw it clipped.
    public func placement(of contentSize: PixelSize, in bounds: Rect) -> Rect {
        let cw = Double(contentSize.width), ch = Double(contentSize.height)
        guard cw > 0, ch > 0 else { return bounds }
        switch self {
        case .stretch:
            return bounds
        case .aspectFit, .aspectFill:
            let sx = bounds.width / cw, sy = bounds.height / ch
            let s = self == .aspectFit ? min(sx, sy) : max(sx, sy)
            let w = cw * s, h = ch * s
            return Rect(x: bounds.x + (bounds.width - w) / 2, y: bounds.y + (bounds.height - h) / 2, width: w, height: h)
        }
    }

    /// The former name of ``stretch``, which read as ``ImageProcessing/Mode/fill`` (a crop) but stretches.
    @available(*, deprecated, renamed: "stretch", message: "ContentMode.fill stretches; it is named stretch now")
    public static var fill: ContentMode { .stretch }
}
