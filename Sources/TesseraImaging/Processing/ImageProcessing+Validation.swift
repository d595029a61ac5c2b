extension ImageProcessing {
    /// Checks every field against `limits` (their `…Range` properties): ``width`` and ``height`` in
    /// ``Limits/dimensionRange`` when given, ``dpr`` in ``Limits/dprRange``, a focal point's fractions in
    /// ``Limits/focalPointRange``, ``format`` one that Tessera writes, ``quality`` in ``Limits/qualityRange``,
    /// ``blur`` in ``Limits/blurRange``. NaN is outside every range (and limits below the lower bounds refuse
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
    }
}
