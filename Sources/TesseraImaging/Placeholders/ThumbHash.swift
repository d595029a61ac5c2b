import Foundation

/// A ThumbHash: a placeholder of an image in about 25 bytes, in Evan Wallace's published format
/// (https://evanw.github.io/thumbhash/), byte for byte what the reference `rgbaToThumbHash` writes.
///
/// ```swift
/// let hash = try ThumbHash(image: bitmap)        // any size: downscaled to fit 100 × 100 first
/// let text = hash.base64                          // e.g. "occNTYSXeHh/h4h0hliIiWZwZwbW", as the demo prints
/// let again = try ThumbHash(base64: text)         // validated: a typed error, never a trap
/// let placeholder = again.placeholder()           // up to 32 × 32, premultiplied BGRA
/// ```
///
/// The format stores the image as a few cosine (DCT) coefficients of four channels: luminance
/// L = (r + g + b) / 3, the two colour differences P = (r + g) / 2 − b and Q = r − g, and alpha when
/// the image has any. Its bytes:
/// - bytes 0–2, 24 bits from the low end: L's DC term (6 bits, `round(63 × L)`), P's and Q's DC terms
///   (6 bits each, `round(31.5 + 31.5 × P)`), L's AC scale (5 bits) and a has-alpha flag (bit 23);
/// - bytes 3–4, 16 bits: the number of L coefficients along the shorter side (3 bits, 1…7, or 1…5
///   with alpha), P's and Q's AC scales (6 bits each) and an is-landscape flag (bit 15);
/// - with alpha, byte 5: alpha's DC term (low 4 bits) and AC scale (high 4 bits);
/// - then every AC coefficient of L, P, Q (and alpha) as 4 bits, `round(15 × (0.5 + 0.5 × c / scale))`,
///   two to a byte, low nibble first.
///
/// The length is therefore fixed by the header, and ``init(bytes:)`` checks it exactly.
public struct ThumbHash: Sendable, Hashable, CustomStringConvertible {
    /// The hash bytes, as the reference writes them: 17 to 24 bytes without alpha (24 for a square
    /// image), 23 to 25 with alpha.
    public let bytes: [UInt8]

    /// Checks `bytes` and keeps them: at least the 5 header bytes, a luminance coefficient count the
    /// encoder can write (1…7, or 1…5 with alpha), and exactly the length that header implies.
    /// Every other bit pattern is a hash that decodes.
    /// - Throws: ``Invalid`` naming what is wrong.
    public init(bytes: [UInt8]) throws(Invalid) {
        guard bytes.count >= 5 else { throw Invalid(.tooShort(byteCount: bytes.count)) }
        let header = Header(bytes)
        let allowed = 1...header.luminanceLimit
        guard allowed.contains(header.luminanceCount) else {
            throw Invalid(.badLuminanceCount(header.luminanceCount, allowed: allowed))
        }
        let expected = header.byteCount
        guard bytes.count == expected else { throw Invalid(.wrongLength(expected: expected, actual: bytes.count)) }
        self.bytes = bytes
    }

    /// Decodes standard base64 (RFC 4648 alphabet, `+` and `/`; the `=` padding may be left off) and
    /// checks the bytes as ``init(bytes:)`` does.
    /// - Throws: ``Invalid`` with ``Invalid/Reason/notBase64`` when the text is not base64, otherwise
    ///   what ``init(bytes:)`` throws.
    public init(base64: String) throws(Invalid) {
        var text = base64
        // A hash is at most 25 bytes (36 characters); refuse long text before decoding it.
        guard text.utf8.count <= 64 else { throw Invalid(.notBase64) }
        if text.utf8.count % 4 != 0 { text += String(repeating: "=", count: 4 - text.utf8.count % 4) }
        guard let data = Data(base64Encoded: text) else { throw Invalid(.notBase64) }
        try self.init(bytes: Array(data))
    }

    /// The bytes in standard base64 with padding, as the reference's demo page prints them.
    public var base64: String { Data(bytes).base64EncodedString() }

    /// ``base64``.
    public var description: String { base64 }

    /// Why bytes or text are not a ThumbHash.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public enum Reason: Sendable, Hashable {
            /// Fewer than the 5 header bytes.
            case tooShort(byteCount: Int)
            /// The 3-bit luminance coefficient count is 0 or more than the format allows (7, or 5 with alpha).
            case badLuminanceCount(Int, allowed: ClosedRange<Int>)
            /// The header implies `expected` bytes and there are `actual`.
            case wrongLength(expected: Int, actual: Int)
            /// The text is not standard base64 (or is far longer than any hash).
            case notBase64
        }

        /// What is wrong.
        public let reason: Reason

        /// An error for `reason`.
        public init(_ reason: Reason) { self.reason = reason }

        /// A sentence for people.
        public var description: String {
            switch reason {
            case .tooShort(let count): "a ThumbHash has at least 5 bytes, not \(count)"
            case .badLuminanceCount(let count, let allowed):
                "luminance coefficient count \(count) is outside \(allowed.lowerBound)…\(allowed.upperBound)"
            case .wrongLength(let expected, let actual): "the header implies \(expected) bytes, not \(actual)"
            case .notBase64: "not a base64 ThumbHash"
            }
        }
    }

    // MARK: Header

    /// The fixed fields of a hash, read from its first 5 bytes (6 with alpha).
    struct Header {
        /// L, P, Q DC terms: L in 0…1, P and Q in −1…1.
        let lDC: Double, pDC: Double, qDC: Double
        /// The AC scales of L, P and Q, 0…1.
        let lScale: Double, pScale: Double, qScale: Double
        /// Whether the hash has an alpha channel (and so a sixth header byte).
        let hasAlpha: Bool
        /// Whether the image was wider than tall.
        let isLandscape: Bool
        /// The stored 3-bit count: L coefficients along the shorter side.
        let luminanceCount: Int

        /// Reads the fields; `bytes` has at least 5 elements.
        init(_ bytes: [UInt8]) {
            let header24 = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16
            let header16 = Int(bytes[3]) | Int(bytes[4]) << 8
            lDC = Double(header24 & 63) / 63
            pDC = Double((header24 >> 6) & 63) / 31.5 - 1
            qDC = Double((header24 >> 12) & 63) / 31.5 - 1
            lScale = Double((header24 >> 18) & 31) / 31
            hasAlpha = header24 >> 23 != 0
            luminanceCount = header16 & 7
            pScale = Double((header16 >> 3) & 63) / 63
            qScale = Double((header16 >> 9) & 63) / 63
            isLandscape = header16 >> 15 != 0
        }

        /// The most L coefficients along the longer side: 7, or 5 when alpha takes the space.
        var luminanceLimit: Int { hasAlpha ? 5 : 7 }

        /// L coefficients across and down as stored (the aspect ratio is `lx / ly`).
        var storedLX: Int { isLandscape ? luminanceLimit : luminanceCount }
        /// See ``storedLX``.
        var storedLY: Int { isLandscape ? luminanceCount : luminanceLimit }

        /// The L grid the coefficients fill: at least 3 × 3.
        var lx: Int { max(3, storedLX) }
        /// See ``lx``.
        var ly: Int { max(3, storedLY) }

        /// The byte where the AC nibbles start.
        var acStart: Int { hasAlpha ? 6 : 5 }

        /// Bytes of a hash with this header: the header, then one nibble per AC coefficient rounded up
        /// to whole bytes. L has ``ThumbHash/acCount(nx:ny:)`` of its grid, P and Q 5 each (3 × 3),
        /// alpha 14 (5 × 5). An opaque square image (7 × 7): 5 + ⌈(27 + 5 + 5) / 2⌉ = 24 bytes; a square
        /// one with alpha (5 × 5): 6 + ⌈(14 + 5 + 5 + 14) / 2⌉ = 25.
        var byteCount: Int {
            let count = ThumbHash.acCount(nx: lx, ny: ly) + 5 + 5 + (hasAlpha ? 14 : 0)
            return acStart + (count + 1) / 2
        }
    }

    /// How many AC coefficients a channel on an `nx × ny` grid has: the pairs (cx, cy) with
    /// `cx × ny < nx × (ny − cy)` (a triangle, lower frequencies only), less the DC term (0, 0).
    /// Row `cy` holds `⌈nx × (ny − cy) / ny⌉` of them. For 7 × 7: 7 + 6 + 5 + 4 + 3 + 2 + 1 − 1 = 27;
    /// for 3 × 3: 3 + 2 + 1 − 1 = 5; for 5 × 5: 15 − 1 = 14.
    static func acCount(nx: Int, ny: Int) -> Int {
        var count = 0
        for cy in 0..<ny { count += (nx * (ny - cy) + ny - 1) / ny }
        return count - 1
    }

    /// JavaScript's `Math.round`, which the reference uses: the nearest integer, halves rounded up
    /// (towards +∞). Swift's `rounded()` rounds halves away from zero and Python's `round` to even; they
    /// differ at −0.5, 2.5 and the like.
    @inline(__always)
    static func jsRound(_ x: Double) -> Int {
        let floor = x.rounded(.down)
        return Int(x - floor >= 0.5 ? floor + 1 : floor)
    }
}
