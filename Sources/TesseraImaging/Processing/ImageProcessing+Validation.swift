extension ImageProcessing {
    /// Checks every field against `limits` (their `…Range` properties): ``width`` and ``height`` in
    /// ``Limits/dimensionRange`` when given, ``dpr`` in ``Limits/dprRange``, a focal point's fractions in
    /// ``Limits/focalPointRange``, ``format`` one that Tessera writes, ``quality`` in ``Limits/qualityRange``,
    /// ``blur`` in ``Limits/blurRange``, then the operations: one of ``crop`` and ``cropBox`` at most, a crop's
    /// sides in ``Limits/cropSideRange`` (its focal point as the gravity's), a crop box's edges not negative
    /// and each right of (below) its left (top), ``trim`` in ``Limits/trimRange``, ``padding``'s sides in
    /// ``Limits/paddingRange``, ``sharpen`` in ``Limits/sharpenRange``, ``pixelate`` in
    /// ``Limits/pixelateRange``, a watermark's opacity 0…1, scale above 0 and at most 1, offsets within
    /// ±``Limits/maximumDimension``. NaN is outside every range (and limits below the lower bounds refuse
    /// everything rather than trap). Throws for the first field that fails, in that order.
    public func validate(_ limits: Limits = Limits()) throws(Invalid) {
        for (parameter, side) in [(Parameter.width, width), (.height, height)] {
            if let side, !limits.dimensionRange.contains(side) {
                throw Invalid(parameter: parameter, message: "\(side) is not a whole number from \(limits.dimensionRange)")
            }
        }
        guard limits.dprRange.contains(dpr) else {
            throw Invalid(parameter: .dpr, message: "\(dpr) is not from \(limits.dprRange)")
        }
        if case .focalPoint(let x, let y) = gravity, !limits.focalPointRange.contains(x) || !limits.focalPointRange.contains(y) {
            throw Invalid(parameter: .gravity, message: "focal point \(x), \(y) is not inside 0…1 on both axes")
        }
        if let format, !format.isEncodable {
            throw Invalid(parameter: .format, message: "\(format) is read but not written; the formats written are "
                          + ImageFileFormat.encodable.map(\.rawValue).joined(separator: ", "))
        }
        if let quality, !limits.qualityRange.contains(quality) {
            throw Invalid(parameter: .quality, message: "\(quality) is not a whole number from \(limits.qualityRange)")
        }
        if let blur, !limits.blurRange.contains(blur) {
            throw Invalid(parameter: .blur, message: "\(blur) is not from \(limits.blurRange)")
        }
        try validateOperations(limits)
    }

    /// The part of ``validate(_:)`` for the operations after rotation and flip.
    private func validateOperations(_ limits: Limits) throws(Invalid) {
        if crop != nil, cropBox != nil { throw Invalid(parameter: .crop, message: "crop and a crop box exclude each other") }
        if let crop {
            guard limits.cropSideRange.contains(crop.width), limits.cropSideRange.contains(crop.height) else {
                throw Invalid(parameter: .crop, message: "crop \(crop.width):\(crop.height) has a side not from \(limits.cropSideRange)")
            }
            if case .focalPoint(let x, let y) = crop.gravity, !limits.focalPointRange.contains(x) || !limits.focalPointRange.contains(y) {
                throw Invalid(parameter: .crop, message: "crop focal point \(x), \(y) is not inside 0…1 on both axes")
            }
        }
        if let box = cropBox, box.left < 0 || box.top < 0 || box.right <= box.left || box.bottom <= box.top {
            throw Invalid(parameter: .crop, message: "crop box \(box.identity) is not LEFT,TOP,RIGHT,BOTTOM with 0 ≤ LEFT < RIGHT and 0 ≤ TOP < BOTTOM")
        }
        if let trim, !limits.trimRange.contains(trim) {
            throw Invalid(parameter: .trim, message: "\(trim) is not a colour distance from \(limits.trimRange)")
        }
        if let padding, let side = padding.sides.first(where: { !limits.paddingRange.contains($0) }) {
            throw Invalid(parameter: .padding, message: "padding side \(side) is not from \(limits.paddingRange)")
        }
        if let sharpen, !limits.sharpenRange.contains(sharpen) {
            throw Invalid(parameter: .sharpen, message: "\(sharpen) is not a sigma from \(limits.sharpenRange)")
        }
        if let pixelate, !limits.pixelateRange.contains(pixelate) {
            throw Invalid(parameter: .pixelate, message: "\(pixelate) is not a block side from \(limits.pixelateRange)")
        }
        if let watermark {
            guard (0...1).contains(watermark.opacity) else {
                throw Invalid(parameter: .watermark, message: "opacity \(watermark.opacity) is not from 0 to 1")
            }
            if let scale = watermark.scale, !(scale > 0 && scale <= 1) {
                throw Invalid(parameter: .watermark, message: "scale \(scale) is not above 0 and at most 1")
            }
            guard abs(watermark.offsetX) <= limits.maximumDimension, abs(watermark.offsetY) <= limits.maximumDimension else {
                throw Invalid(parameter: .watermark, message: "offset \(watermark.offsetX),\(watermark.offsetY) is beyond ±\(limits.maximumDimension)")
            }
        }
    }
}
