#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

extension ImageService {
    /// The `ImageProcessing` of a `/v1/resize` query: `w` and/or `h` (one alone keeps the aspect ratio),
    /// `mode` (`fit` by default, `fill`, `fill-down`, `force`, `pad`), `gravity` (compass points, `smart`, or
    /// `fp` with `fp=X,Y` as fractions; `fp=X,Y` alone means `gravity=fp`), `enlarge=1` (nothing is made larger
    /// than its source without it), `bg=RRGGBB[AA]`, `dpr=1…4`, `blur=SIGMA`, `rotate=0|90|180|270` (clockwise,
    /// after the resize), `flip=h|v|hv` (after the turn). A bad value is `400` with a code
    /// naming the parameter (`bad_size`, `bad_mode`, `bad_gravity`, `bad_fp`, `bad_enlarge`, `bad_bg`, `bad_dpr`,
    /// `bad_blur`, `bad_rotate`, `bad_flip`); `fmt` and `q` are read by the caller. The output-pixel limit is checked on `w`×`h`×`dpr²`
    /// here when both are given, and on the real canvas when the image is drawn.
    static func processing(from query: [String: String], limits: ServerConfiguration.Limits) throws(ServiceError) -> ImageProcessing {
        let ranges = ImageProcessing.Limits(maximumOutputPixels: limits.maximumOutputPixels)
        var processing = ImageProcessing()
        processing.width = try query["w"].map { (text) throws(ServiceError) in
            try dimension(text, name: "w", parameter: .width, allowed: limits.allowedWidths)
        }
        processing.height = try query["h"].map { (text) throws(ServiceError) in
            try dimension(text, name: "h", parameter: .height, allowed: limits.allowedHeights)
        }
        guard processing.width != nil || processing.height != nil else { throw ServiceError(.width, "w or h is required") }
        if let text = query["mode"] {
            guard let mode = ImageProcessing.Mode(rawValue: text) else {
                throw ServiceError(.mode, "mode is " + Self.names(ImageProcessing.Mode.allCases.map(\.rawValue)))
            }
            processing.mode = mode
        }
        if let text = query["fp"] {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
            guard parts.count == 2, let x = parts[0], let y = parts[1], ranges.focalPointRange.contains(x),
                  ranges.focalPointRange.contains(y) else {
                throw ServiceError(.focalPoint, "fp is X,Y with fractions from \(ranges.focalPointRange)")
            }
            guard query["gravity"] == nil || query["gravity"] == "fp" else {
                throw ServiceError(.gravity, "fp goes with gravity=fp (or alone)")
            }
            processing.gravity = .focalPoint(x: x, y: y)
        } else if let text = query["gravity"] {
            guard let gravity = ImageProcessing.Gravity(name: text) else {
                throw ServiceError(.gravity, text == "fp" ? "gravity=fp needs fp=X,Y"
                                   : "gravity is center, north, south, east, west, north-east, north-west, south-east, south-west, smart or fp")
            }
            processing.gravity = gravity
        }
        if let text = query["enlarge"] {
            switch text {
            case "1", "true": processing.enlarge = true
            case "0", "false": processing.enlarge = false
            default: throw ServiceError(.enlarge, "enlarge is 0 or 1")
            }
        }
        if let text = query["bg"] {
            guard let background = ImageProcessing.Background(hex: text) else { throw ServiceError(.background, "bg is RRGGBB or RRGGBBAA") }
            processing.background = background
        }
        if let text = query["dpr"] {
            guard let dpr = Double(text), dpr.isFinite, ranges.dprRange.contains(dpr) else {
                throw ServiceError(.dpr, "dpr is a number from \(ranges.dprRange)")
            }
            processing.dpr = dpr
        }
        if let text = query["blur"] {
            guard let sigma = Double(text), sigma.isFinite, ranges.blurRange.contains(sigma) else {
                throw ServiceError(.blur, "blur is a sigma from \(ranges.blurRange)")
            }
            processing.blur = sigma
        }
        if let text = query["rotate"] {
            guard let degrees = Int(text), let rotation = ImageProcessing.Rotation(rawValue: degrees) else {
                throw ServiceError(.rotation, "rotate is 0, 90, 180 or 270 (clockwise)")
            }
            processing.rotation = rotation
        }
        if let text = query["flip"] {
            guard let flip = ImageProcessing.Flip(rawValue: text) else { throw ServiceError(.flip, "flip is h, v or hv") }
            processing.flip = flip
        }
        if let width = processing.width, let height = processing.height {
            let pixels = (Double(width) * processing.dpr).rounded() * (Double(height) * processing.dpr).rounded()
            guard pixels <= Double(limits.maximumOutputPixels) else {
                throw ServiceError(.output, "\(width)x\(height) at dpr \(processing.dpr) is more than \(limits.maximumOutputPixels) output pixels")
            }
        }
        return processing
    }

    /// `names` as a sentence's list: `a, b or c`.
    static func names(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
    }

    /// The processing limits of this service (its output-pixel limit).
    var processingLimits: ImageProcessing.Limits {
        ImageProcessing.Limits(maximumOutputPixels: configuration.limits.maximumOutputPixels)
    }

    /// `data` drawn by `processing` (the caller holds a permit of the work limit): the library's render,
    /// its refusals as the service's errors by their parameter (``ServiceError/Code/init(_:)``: a canvas over the
    /// output-pixel limit is `400 output_too_large`, a source size out of range `400 bad_size`).
    func render(_ data: Data, processing: ImageProcessing) throws -> Bitmap {
        try decoder.limits.checkInput(byteCount: data.count)
        _ = try decoder.probe(data)   // the pixel limit, before the decode is counted
        let start = ContinuousClock.now
        defer { metrics.decodeTime.recordSince(start) }
        counters.withLock { $0.decodes += 1 }
        do {
            return try decoder.render(data, processing: processing, limits: processingLimits)
        } catch {
            switch error {
            case .invalid(let invalid):
                throw ServiceError(invalid)
            case .failed(let failure):
                throw failure
            }
        }
    }
}
#endif
