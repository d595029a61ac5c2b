import CDeflate

/// Finds the ICC profile embedded in a JPEG (APP2 "ICC_PROFILE" segments), PNG (`iCCP`) or WebP
/// (`ICCP`) file, and the PNG chunks that decide how its gamma is handled.
///
/// Every read is bounds-checked, and nothing larger than ``ColourConversion/maximumProfileBytes`` is
/// assembled or inflated. A malformed container (a missing or repeated JPEG chunk, a PNG `iCCP`
/// that does not inflate, a chunk running past the end) gives no profile: the pixels are then left
/// as decoded, never an error.
enum EmbeddedProfile {
    /// "ICC_PROFILE\0", the start of an APP2 segment holding a chunk of a profile (ICC.1, annex B.4).
    static let jpegSignature: [UInt8] = Array("ICC_PROFILE".utf8) + [0]

    /// The profile in a JPEG's APP2 `segments` (payloads as ``ExifOrientationReader`` found them).
    ///
    /// Each payload is the signature, the chunk's sequence number (1-based), the chunk count and the
    /// chunk's bytes. The profile is the chunks in sequence order, and only when every number from 1
    /// to the count appears exactly once, every segment agrees on the count and the sum stays within
    /// ``ColourConversion/maximumProfileBytes``.
    static func jpeg(_ data: UnsafeRawBufferPointer, segments: [Range<Int>]) -> [UInt8]? {
        let header = jpegSignature.count + 2
        guard let first = segments.first, first.count >= header else { return nil }
        let count = Int(data[first.lowerBound + header - 1])
        guard count >= 1, segments.count == count else { return nil }
        var ordered = [Range<Int>?](repeating: nil, count: count)
        var total = 0
        for segment in segments {
            guard segment.count >= header, Int(data[segment.lowerBound + header - 1]) == count else { return nil }
            let sequence = Int(data[segment.lowerBound + header - 2])
            guard (1...count).contains(sequence), ordered[sequence - 1] == nil else { return nil }
            ordered[sequence - 1] = (segment.lowerBound + header)..<segment.upperBound
            total += segment.count - header
            guard total <= ColourConversion.maximumProfileBytes else { return nil }
        }
        var profile: [UInt8] = []
        profile.reserveCapacity(total)
        for range in ordered {
            guard let range else { return nil }
            profile.append(contentsOf: UnsafeRawBufferPointer(rebasing: data[range]))
        }
        return profile
    }

    /// The colour chunks of a PNG, read before the first `IDAT`.
    struct PNGChunks {
        /// The inflated `iCCP` profile, when present and well-formed.
        var profile: [UInt8]?
        /// The `gAMA` value (gamma × 100000), when present.
        var gamma: UInt32?
        /// The byte ranges of the `gAMA` and `cHRM` chunks (length to CRC), for ``pngWithoutGammaChunks(_:)``.
        var gammaChunks: [Range<Int>] = []

        /// Whether libpng would change the pixels for `gAMA`: any value other than sRGB's 1/2.2
        /// (45455; the PNG fast path takes 45000…46000 as sRGB's as well).
        var hasNonSRGBGamma: Bool { gamma.map { !(45000...46000).contains($0) } ?? false }
    }

    /// Walks the chunks of a PNG up to the first `IDAT` or `IEND`, or until a chunk does not fit.
    static func png(_ data: UnsafeRawBufferPointer) -> PNGChunks {
        var chunks = PNGChunks()
        for chunk in ContainerChunks.png(data) {
            let body = UnsafeRawBufferPointer(rebasing: data[chunk.body])
            switch chunk.type {
            case "IDAT", "IEND": return chunks
            case "iCCP" where chunks.profile == nil: chunks.profile = inflateICCP(body)
            case "gAMA" where body.count == 4: chunks.gamma = be32(body, 0); chunks.gammaChunks.append(chunk.whole)
            case "cHRM": chunks.gammaChunks.append(chunk.whole)
            default: break
            }
        }
        return chunks
    }

    /// A copy of the PNG `data` without the chunks in `chunks.gammaChunks`: an embedded profile
    /// overrides `gAMA` and `cHRM` (PNG 3rd edition, 4.3), but libpng's simplified API would still
    /// apply `gAMA`. Removing whole chunks keeps every remaining CRC valid.
    static func pngWithoutGammaChunks(_ data: UnsafeRawBufferPointer, _ chunks: PNGChunks) -> [UInt8] {
        var copy: [UInt8] = []
        copy.reserveCapacity(data.count)
        var start = 0
        for range in chunks.gammaChunks {
            copy.append(contentsOf: UnsafeRawBufferPointer(rebasing: data[start..<range.lowerBound]))
            start = range.upperBound
        }
        copy.append(contentsOf: UnsafeRawBufferPointer(rebasing: data[start...]))
        return copy
    }

    /// The profile of an `iCCP` body: a name of 1–79 bytes, a zero byte, compression method 0 and a
    /// zlib stream, inflated into at most ``ColourConversion/maximumProfileBytes`` (starting at
    /// 64 KiB and doubling, so that a small profile takes a small buffer).
    static func inflateICCP(_ body: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let nul = body.prefix(80).firstIndex(of: 0), nul >= 1, nul + 2 <= body.count, body[nul + 1] == 0 else { return nil }
        let stream = UnsafeRawBufferPointer(rebasing: body[(nul + 2)...])
        guard let inflater = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(inflater) }
        var capacity = 64 << 10
        while true {
            var profile = [UInt8](repeating: 0, count: capacity)
            var produced = 0
            let result = profile.withUnsafeMutableBytes { output in
                libdeflate_zlib_decompress(inflater, stream.baseAddress, stream.count, output.baseAddress, capacity, &produced)
            }
            switch result {
            case LIBDEFLATE_SUCCESS:
                profile.removeLast(capacity - produced)
                return profile
            case LIBDEFLATE_INSUFFICIENT_SPACE where capacity < ColourConversion.maximumProfileBytes:
                capacity = min(capacity * 2, ColourConversion.maximumProfileBytes)
            default:
                return nil
            }
        }
    }

    /// The `ICCP` chunk of a WebP file in the extended format: the first chunk is `VP8X` with the
    /// ICC flag (bit 5 of its first byte), and `ICCP` comes before the image data.
    static func webp(_ data: UnsafeRawBufferPointer) -> [UInt8]? {
        guard data.count >= 30, ExifOrientationReader.starts(data, with: Array("RIFF".utf8)),
              ExifOrientationReader.starts(UnsafeRawBufferPointer(rebasing: data[8...]), with: Array("WEBPVP8X".utf8)),
              data[20] & 0x20 != 0
        else { return nil }
        for chunk in ContainerChunks.riff(data) {
            switch chunk.type {
            case "ICCP":
                guard chunk.body.count <= ColourConversion.maximumProfileBytes else { return nil }
                return Array(UnsafeRawBufferPointer(rebasing: data[chunk.body]))
            case "VP8 ", "VP8L", "ALPH", "ANMF": return nil
            default: continue
            }
        }
        return nil
    }

    private static func be32(_ data: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(data[at]) << 24 | UInt32(data[at + 1]) << 16 | UInt32(data[at + 2]) << 8 | UInt32(data[at + 3])
    }
}
