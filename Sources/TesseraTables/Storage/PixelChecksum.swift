import TesseraImaging
/// The fast non-cryptographic 64-bit hashes an image table uses: one over an entry's pixels and a
/// 48-bit one over a slot header's fields (folded into the commit word).
///
/// The pixel hash reads 8 bytes at a time into four independent lanes (so the CPU overlaps the
/// multiplies), each lane doing `lane = rotl((lane ^ word) × prime, 31)` — a bijection of the lane
/// for a fixed word, so changing any single word always changes its lane — and then mixes the lanes
/// and the length with MurmurHash3's 64-bit finaliser. It detects torn pages and flipped bits; it is
/// **not** meant to resist deliberate forgery (anyone who can write the file can rewrite the sum).
enum PixelChecksum {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F

    /// The hash of `count` bytes at `start`; `count` must be a multiple of 8 and `start` 8-aligned.
    static func hash(_ start: UnsafeRawPointer, count: Int) -> UInt64 {
        var a: UInt64 = 0x243F_6A88_85A3_08D3, b: UInt64 = 0x1319_8A2E_0370_7344
        var c: UInt64 = 0xA409_3822_299F_31D0, d: UInt64 = 0x082E_FA98_EC4E_6C89
        let words = count / 8
        let p = start.assumingMemoryBound(to: UInt64.self)
        var i = 0
        while i + 4 <= words {
            a = rotl((a ^ p[i]) &* prime1, 31)
            b = rotl((b ^ p[i + 1]) &* prime1, 31)
            c = rotl((c ^ p[i + 2]) &* prime1, 31)
            d = rotl((d ^ p[i + 3]) &* prime1, 31)
            i += 4
        }
        while i < words {
            a = rotl((a ^ p[i]) &* prime1, 31)
            i += 1
        }
        var h = UInt64(truncatingIfNeeded: count) &* prime2
        h = mix(h ^ a) &+ rotl(b, 7)
        h = mix(h ^ c) &+ rotl(d, 19)
        return mix(h)
    }

    /// A hash of the eight words of a slot header's identity (no allocation).
    static func hash(_ w: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)) -> UInt64 {
        var h: UInt64 = 0x5443_5345_5241_5442
        @inline(__always) func step(_ x: UInt64) { h = mix(h ^ (x &* prime1)) &+ prime2 }
        step(w.0); step(w.1); step(w.2); step(w.3); step(w.4); step(w.5); step(w.6); step(w.7)
        return h
    }

    @inline(__always) static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    /// MurmurHash3's `fmix64`.
    @inline(__always) static func mix(_ x: UInt64) -> UInt64 {
        var k = x
        k ^= k >> 33
        k &*= 0xFF51_AFD7_ED55_8CCD
        k ^= k >> 33
        k &*= 0xC4CE_B9FE_1A85_EC53
        k ^= k >> 33
        return k
    }
}
