import ToolsLCMS2
import Foundation

/// ICC profiles made with lcms2 at run time, and JPEGs that embed them, for the colour tests and
/// `tessera bench colour` (no profile files are committed).
public enum ICCProfiles {
    /// lcms2 failed to build or save a profile.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Display P3: the DCI-P3 primaries (0.680, 0.320), (0.265, 0.690), (0.150, 0.060), the D65 white
    /// point and the sRGB transfer curve (ICC parametric type 4: γ 2.4, a = 1/1.055, b = 0.055/1.055,
    /// c = 1/12.92, d = 0.04045), as Apple's profile defines it.
    public static func displayP3() throws(Failure) -> [UInt8] {
        var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1)
        var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: 0.680, y: 0.320, Y: 1), Green: cmsCIExyY(x: 0.265, y: 0.690, Y: 1),
                                        Blue: cmsCIExyY(x: 0.150, y: 0.060, Y: 1))
        var parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        guard let curve = cmsBuildParametricToneCurve(nil, 4, &parameters) else { throw Failure(description: "tone curve") }
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfile(&white, &primaries, &curves) else { throw Failure(description: "Display P3") }
        return try save(profile)
    }

    /// lcms2's own sRGB profile.
    public static func sRGB() throws(Failure) -> [UInt8] {
        guard let profile = cmsCreate_sRGBProfile() else { throw Failure(description: "sRGB") }
        return try save(profile)
    }

    /// A CMYK output profile whose AToB0 table (between identity curves, as lutAtoBType requires)
    /// has two grid points per ink, holding the Lab values (ICC v4 16-bit encoding, from sRGB by
    /// lcms2, relative colorimetric) of `corner(c, m, y, k)`, an sRGB colour 0…255 per corner;
    /// between the corners lcms2 interpolates.
    public static func cmyk(corner: (Bool, Bool, Bool, Bool) -> [Double]) throws(Failure) -> [UInt8] {
        var rgb: [UInt16] = []
        for index in 0..<16 {   // lcms2's grid order: the first input (C) varies slowest
            rgb += corner(index & 8 != 0, index & 4 != 0, index & 2 != 0, index & 1 != 0).map { UInt16(($0 * 257).rounded()) }
        }
        guard let sRGB = cmsCreate_sRGBProfile(), let lab = cmsCreateLab4Profile(nil) else { throw Failure(description: "sRGB/Lab") }
        defer { cmsCloseProfile(sRGB); cmsCloseProfile(lab) }
        let typeRGB16: cmsUInt32Number = 4 << 16 | 3 << 3 | 2    // TYPE_RGB_16 (PT_RGB = 4, 3 channels, 2 bytes)
        let typeLab16: cmsUInt32Number = 10 << 16 | 3 << 3 | 2   // TYPE_Lab_16 (PT_Lab = 10)
        guard let toLab = cmsCreateTransform(sRGB, typeRGB16, lab, typeLab16, cmsUInt32Number(INTENT_RELATIVE_COLORIMETRIC), 0)
        else { throw Failure(description: "sRGB → Lab") }
        defer { cmsDeleteTransform(toLab) }
        var table = [UInt16](repeating: 0, count: rgb.count)
        cmsDoTransform(toLab, rgb, &table, 16)

        guard let profile = cmsCreateProfilePlaceholder(nil), let pipeline = cmsPipelineAlloc(nil, 4, 3) else {
            throw Failure(description: "placeholder")
        }
        defer { cmsPipelineFree(pipeline) }
        cmsSetProfileVersion(profile, 4.3)
        cmsSetDeviceClass(profile, cmsSigOutputClass)
        cmsSetColorSpace(profile, cmsSigCmykData)
        cmsSetPCS(profile, cmsSigLabData)
        var white = cmsCIEXYZ(X: 0.9642, Y: 1, Z: 0.8249)
        guard cmsPipelineInsertStage(pipeline, cmsAT_BEGIN, cmsStageAllocCLut16bit(nil, 2, 4, 3, table)) != 0,
              cmsPipelineInsertStage(pipeline, cmsAT_BEGIN, cmsStageAllocToneCurves(nil, 4, nil)) != 0,
              cmsPipelineInsertStage(pipeline, cmsAT_END, cmsStageAllocToneCurves(nil, 3, nil)) != 0,
              cmsWriteTag(profile, cmsSigAToB0Tag, UnsafeRawPointer(pipeline)) != 0,
              cmsWriteTag(profile, cmsSigMediaWhitePointTag, &white) != 0
        else { cmsCloseProfile(profile); throw Failure(description: "CMYK table") }
        return try save(profile)
    }

    /// Serialises and closes `profile`.
    static func save(_ profile: cmsHPROFILE) throws(Failure) -> [UInt8] {
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { throw Failure(description: "save") }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &bytes, &size) != 0 else { throw Failure(description: "save") }
        return bytes
    }

    /// `jpeg` with APP2 "ICC_PROFILE" segments right after SOI (ICC.1 annex B.4): `profile` cut into
    /// `chunks` pieces, written in the sequence order `order` (1-based; ascending by default), each
    /// declaring `declaredCount` chunks (the real count by default).
    public static func jpeg(_ jpeg: [UInt8], embedding profile: [UInt8], chunks: Int = 1, order: [Int]? = nil,
                            declaredCount: Int? = nil) -> [UInt8] {
        let size = (profile.count + chunks - 1) / chunks
        let pieces = (0..<chunks).map { Array(profile[min($0 * size, profile.count)..<min(($0 + 1) * size, profile.count)]) }
        var segments: [UInt8] = []
        for number in order ?? Array(1...chunks) {
            let payload = Array("ICC_PROFILE".utf8) + [0, UInt8(number), UInt8(declaredCount ?? chunks)] + pieces[number - 1]
            let length = payload.count + 2
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        }
        return Array(jpeg[0..<2]) + segments + Array(jpeg[2...])
    }

    // MARK: Expected values, from the colour-space definitions (not from lcms2)

    /// RGB → XYZ for primaries and a white point given as xy chromaticities.
    static func rgbToXYZ(_ primaries: [(Double, Double)], white: (Double, Double)) -> [[Double]] {
        let columns = primaries.map { [$0.0 / $0.1, 1, (1 - $0.0 - $0.1) / $0.1] }
        let w = [white.0 / white.1, 1, (1 - white.0 - white.1) / white.1]
        let p = (0..<3).map { r in (0..<3).map { c in columns[c][r] } }
        let s = solve(p, w)   // the primaries' luminances that add up to the white
        return (0..<3).map { r in (0..<3).map { c in p[r][c] * s[c] } }
    }

    /// Solves `a · x = b` (3 × 3, Cramer's rule).
    static func solve(_ a: [[Double]], _ b: [Double]) -> [Double] {
        func det(_ m: [[Double]]) -> Double {
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        }
        let d = det(a)
        return (0..<3).map { column in
            det((0..<3).map { r in (0..<3).map { c in c == column ? b[r] : a[r][c] } }) / d
        }
    }

    /// The sRGB (and Display P3) decoding curve, 0…1 → linear light.
    static func linear(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
    /// The sRGB encoding curve, linear light → 0…1 (clipped).
    static func encoded(_ v: Double) -> Double {
        let c = min(max(v, 0), 1)
        return c <= 0.0031308 ? 12.92 * c : 1.055 * pow(c, 1 / 2.4) - 0.055
    }

    /// The sRGB value (0…255, unrounded) of Display P3 `rgb`: both spaces share D65 and the
    /// transfer curve, so it is decode, P3 → XYZ → sRGB in linear light, encode.
    public static func sRGB(fromDisplayP3 rgb: [Double]) -> [Double] {
        let d65 = (0.3127, 0.3290)
        let p3 = rgbToXYZ([(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)], white: d65)
        let srgb = rgbToXYZ([(0.64, 0.33), (0.30, 0.60), (0.15, 0.06)], white: d65)
        let lin = rgb.map { linear($0 / 255) }
        let xyz = (0..<3).map { r in (0..<3).reduce(0.0) { $0 + p3[r][$1] * lin[$1] } }
        let out = solve(srgb, xyz)
        return out.map { encoded($0) * 255 }
    }
}
