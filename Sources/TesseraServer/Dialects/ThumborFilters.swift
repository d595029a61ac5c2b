#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// thumbor's `filters:NAME(ARGS):NAME(ARGS)…`, read in order and then settled into an ``ImageProcessing``
/// (``settle(into:fitIn:rotation:)``) once the URL's geometry is known.
struct ThumborFilters {
    var quality: Int?
    var format: ImageFileFormat?
    /// `fill`'s colour.
    var fill: ImageProcessing.Background?
    var blur: Double?
    /// `no_upscale()` (false) or `upscale()` (true).
    var upscale: Bool?
    var stretch = false
    var grayscale = false
    /// `rotate`'s counter-clockwise degrees (0, 90, 180, 270).
    var rotation = 0
    var sharpen: Double?
    var watermark: ImageProcessing.Watermark?
    /// `focal()`'s rectangles: each one's centre and its area (its weight).
    var focals: [(x: Int, y: Int, weight: Int)] = []
    var roundCorners: ImageProcessing.RoundCorners?

    /// thumbor's other filters: known, but not in Tessera's vocabulary.
    static let unsupported: Set<String> = [
        "max_bytes", "extract_focal", "background_color", "proportion", "brightness", "contrast",
        "rgb", "noise", "equalize", "saturation", "convolution", "curve", "colorize", "max_age", "frame", "cover", "autojpg", "redeye",
    ]

    /// Reads `text` (the filters after `filters:`, percent-decoded): thumbor splits it at `):`.
    mutating func apply(_ text: String) throws(ServiceError) {
        for piece in text.components(separatedBy: "):") {
            let call = piece.hasSuffix(")") ? piece : piece + ")"
            guard let open = call.firstIndex(of: "(") else { throw ServiceError(.unknownParameter, "a thumbor filter is NAME(ARGS)") }
            let name = String(call[..<open])
            let inner = call[call.index(after: open)..<call.index(before: call.endIndex)]
            let args = inner.isEmpty ? [] : inner.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            try apply(name, args)
        }
    }

    private mutating func apply(_ name: String, _ args: [String]) throws(ServiceError) {
        func count(_ range: ClosedRange<Int>) throws(ServiceError) {
            guard range.contains(args.count) else { throw ServiceError(.unknownParameter, "thumbor's \(name)() takes \(range.lowerBound)…\(range.upperBound) arguments") }
        }
        switch name {
        case "quality":
            try count(1...1)
            guard let q = Int(args[0]), (1...100).contains(q) else { throw ServiceError(.quality, "quality() is 1…100") }
            quality = q
        case "format":
            try count(1...1)
            switch args[0].lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "'")) {
            case "jpeg", "jpg": format = .jpeg
            case "png": format = .png
            case "webp": format = .webp
            case "gif": format = .gif
            case "avif": format = .avif
            case "heif", "heic": throw ThumborURLs.unsupported("format(heif)")
            case let other: throw ServiceError(.format, "format() is jpeg, png, webp, gif or avif, not '\(other)'")
            }
        case "fill":
            try count(1...2)
            if args.count == 2, try Self.flag(args[1], name) { throw ThumborURLs.unsupported("fill()'s fill_transparent") }
            fill = try Self.colour(args[0])
        case "blur":
            try count(1...2)
            guard let radius = Int(args[0]), radius > 0 else { throw ServiceError(.blur, "blur()'s radius is a whole number above 0") }
            let sigma = args.count > 1 ? Double(args[1]) : 0
            guard let sigma, sigma >= 0 else { throw ServiceError(.blur, "blur()'s sigma is a number") }
            blur = sigma > 0 ? sigma : Double(min(radius, 150))
        case "no_upscale": try count(0...0); upscale = false
        case "upscale": try count(0...0); upscale = true
        case "stretch": try count(0...0); stretch = true
        case "strip_icc", "strip_exif": try count(0...0)   // Tessera writes sRGB without a profile, and no EXIF unless asked
        case "grayscale": try count(0...0); grayscale = true
        case "rotate":
            try count(1...1)
            guard let degrees = Int(args[0]), degrees % 90 == 0 else { throw ServiceError(.rotation, "rotate() is a multiple of 90") }
            rotation = ((degrees % 360) + 360) % 360
        case "sharpen":
            try count(3...3)
            guard let amount = Double(args[0]), let radius = Double(args[1]), amount >= 0, radius >= 0 else {
                throw ServiceError(.sharpen, "sharpen() is AMOUNT,RADIUS,LUMINANCE_ONLY")
            }
            _ = try Self.flag(args[2], name)
            sharpen = amount == 0 || radius == 0 ? nil : radius
        case "watermark":
            try count(4...6)
            watermark = try Self.watermark(args)
        case "focal":
            try count(1...1)
            let numbers = args[0].split(whereSeparator: { $0 == "x" || $0 == ":" }).compactMap { Int($0) }
            guard numbers.count == 4, numbers.allSatisfy({ $0 >= 0 }) else { throw ServiceError(.focalPoint, "focal() is LEFTxTOP:RIGHTxBOTTOM in source pixels") }
            let (width, height) = (numbers[2] - numbers[0], numbers[3] - numbers[1])
            if width > 0, height > 0 {   // thumbor ignores an empty rectangle
                focals.append((numbers[0] + width / 2, numbers[1] + height / 2, width * height))
            }
        case "round_corner":
            try count(4...5)
            let radii = args[0].split(separator: "|", omittingEmptySubsequences: false).map { Int($0) }
            guard (1...2).contains(radii.count), let a = radii[0], a >= 0, let b = radii.last!, b >= 0,
                  let red = UInt8(args[1]), let green = UInt8(args[2]), let blue = UInt8(args[3]) else {
                throw ServiceError(.unsupportedOption, "round_corner() is A[|B],R,G,B[,TRANSPARENT]")
            }
            let transparent = args.count > 4 ? try Self.flag(args[4], name) : false
            roundCorners = ImageProcessing.RoundCorners(horizontal: a, vertical: b,
                                                        colour: transparent ? ImageProcessing.Background(red: 0, green: 0, blue: 0, alpha: 0)
                                                                            : ImageProcessing.Background(red: red, green: green, blue: blue))
        default:
            if Self.unsupported.contains(name) { throw ThumborURLs.unsupported("\(name)() filter") }
            throw ServiceError(.unknownParameter, "unknown thumbor filter '\(name)'")
        }
    }

    /// Settles the filters into `processing`, whose geometry the URL gave (`fitIn`: `fit-in`, not full),
    /// and returns `rotate`'s counter-clockwise degrees in `rotation`.
    func settle(into processing: inout ImageProcessing, fitIn: Bool, rotation: inout Int) throws(ServiceError) {
        if stretch, processing.mode == .fill { processing.mode = .stretch }
        if let upscale {
            // no_upscale keeps every mode within the source; upscale lets fit-in grow to the box.
            if !upscale { processing.enlarge = false } else if fitIn { processing.enlarge = true }
        }
        if let fill {
            processing.background = fill
            if fitIn {   // the fitted image centred on a canvas of the box
                guard processing.width != nil, processing.height != nil else { throw ThumborURLs.unsupported("fill() with fit-in and one side") }
                processing.mode = .pad
                if case .smart = processing.gravity {} else { processing.gravity = .center }
            }
        }
        processing.blur = blur
        processing.grayscale = grayscale
        processing.sharpen = sharpen
        processing.watermark = watermark
        processing.roundCorners = roundCorners
        if !focals.isEmpty {   // their centre of mass, weighted by area, in source pixels (thumbor's)
            let total = focals.reduce(0) { $0 + $1.weight }
            processing.gravity = .focalPixel(x: focals.reduce(0) { $0 + $1.x * $1.weight } / total,
                                             y: focals.reduce(0) { $0 + $1.y * $1.weight } / total)
        }
        rotation = self.rotation
    }

    /// A thumbor boolean (`true`, `True`, `1`; `false`, `False`, `0`).
    static func flag(_ text: String, _ name: String) throws(ServiceError) -> Bool {
        switch text {
        case "true", "True", "1": return true
        case "false", "False", "0": return false
        default: throw ServiceError(.unknownParameter, "\(name)() takes true or false, not '\(text)'")
        }
    }

    /// A colour of `fill()`: `transparent`, hex `RRGGBB`/`RGB` (with or without `#`), or one of the common
    /// colour names.
    static func colour(_ text: String) throws(ServiceError) -> ImageProcessing.Background {
        let names: [String: String] = [
            "white": "ffffff", "black": "000000", "red": "ff0000", "green": "008000", "lime": "00ff00", "blue": "0000ff",
            "yellow": "ffff00", "gray": "808080", "grey": "808080", "silver": "c0c0c0", "maroon": "800000", "purple": "800080",
            "fuchsia": "ff00ff", "magenta": "ff00ff", "olive": "808000", "navy": "000080", "teal": "008080", "aqua": "00ffff",
            "cyan": "00ffff", "orange": "ffa500",
        ]
        let lowered = text.lowercased()
        if lowered == "transparent" { return ImageProcessing.Background(red: 0, green: 0, blue: 0, alpha: 0) }
        if lowered == "auto" || lowered == "blur" { throw ThumborURLs.unsupported("fill(\(lowered))") }
        var hex = names[lowered] ?? String(lowered.drop { $0 == "#" })
        if hex.count == 3 { hex = String(hex.flatMap { [$0, $0] }) }
        guard hex.count == 6, let colour = ImageProcessing.Background(hex: hex) else {
            throw ServiceError(.background, "fill() is a colour name, RRGGBB, RGB or transparent, not '\(text)'")
        }
        return colour
    }

    /// `watermark(NAME,X,Y,ALPHA[,W_RATIO[,H_RATIO]])`: a configured watermark by name; X and Y pixels from
    /// the left/top (negative: from the right/bottom) or `center`, both `repeat` to tile; ALPHA its
    /// transparency in percent; W_RATIO its width as a percentage of the image's.
    static func watermark(_ args: [String]) throws(ServiceError) -> ImageProcessing.Watermark {
        let name = args[0].trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        guard let alpha = Int(args[3]), (0...100).contains(alpha) else { throw ServiceError(.watermark, "watermark()'s alpha is 0…100") }
        var mark = ImageProcessing.Watermark(name: name, opacity: Double(100 - alpha) / 100)
        if args.count > 4, args[4] != "none" {
            guard let ratio = Int(args[4]), (1...100).contains(ratio) else { throw ServiceError(.watermark, "watermark()'s w_ratio is 1…100 or none") }
            mark.scale = Double(ratio) / 100
        }
        if args.count > 5, args[5] != "none" { throw ThumborURLs.unsupported("watermark()'s h_ratio") }
        if args[1] == "repeat" || args[2] == "repeat" {
            guard args[1] == "repeat", args[2] == "repeat" else { throw ThumborURLs.unsupported("watermark() repeated along one axis") }
            mark.position = .repeat
            return mark
        }
        func axis(_ text: String) throws(ServiceError) -> (place: Int, offset: Int) {   // place: -1 start, 0 centre, 1 end
            if text == "center" { return (0, 0) }
            guard let value = Int(text) else { throw ThumborURLs.unsupported("watermark() position '\(text)'") }
            return value < 0 ? (1, -value) : (-1, value)
        }
        let (x, y) = (try axis(args[1]), try axis(args[2]))
        let gravities: [[ImageProcessing.Gravity]] = [[.northWest, .north, .northEast], [.west, .center, .east], [.southWest, .south, .southEast]]
        mark.position = .gravity(gravities[y.place + 1][x.place + 1])
        mark.offsetX = x.offset
        mark.offsetY = y.offset
        return mark
    }
}
#endif
