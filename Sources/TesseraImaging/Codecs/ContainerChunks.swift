/// The chunks of PNG and RIFF (WebP) files, walked lazily with every length checked against the data: a
/// chunk that does not fit ends the walk, so a cut or malformed file yields the chunks before the damage,
/// and a caller that stops early (at `IDAT`, say) reads no further.
struct ContainerChunks: Sequence, IteratorProtocol {
    /// One chunk: its four-character type and where it lies in the data.
    struct Chunk {
        /// The type (`IHDR`, `eXIf`, `VP8X`, `EXIF`, …).
        var type: String
        /// The body's bytes in the data (without the length, type and CRC or padding).
        var body: Range<Int>
        /// The whole chunk's bytes in the data: length, type, body and (PNG) CRC.
        var whole: Range<Int>
    }

    /// PNG's eight-byte signature.
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Whether `data` starts as a WebP file: `RIFF`, a size, `WEBP`.
    static func isWebP(_ data: UnsafeRawBufferPointer) -> Bool {
        data.count >= 12 && ExifOrientationReader.starts(data, with: Array("RIFF".utf8))
            && ExifOrientationReader.starts(UnsafeRawBufferPointer(rebasing: data[8...]), with: Array("WEBP".utf8))
    }

    /// The chunks of a PNG, up to and with `IEND`: each is a 4-byte big-endian length, the type, the body
    /// and a CRC (12 bytes around the body).
    static func png(_ data: UnsafeRawBufferPointer) -> ContainerChunks { ContainerChunks(data: data, offset: pngSignature.count, isPNG: true) }

    /// The chunks of a RIFF file after its 12-byte header: each is the type, a 4-byte little-endian size and
    /// the body, padded to an even length.
    static func riff(_ data: UnsafeRawBufferPointer) -> ContainerChunks { ContainerChunks(data: data, offset: 12, isPNG: false) }

    private let data: UnsafeRawBufferPointer
    private var offset: Int
    private let isPNG: Bool
    private var ended = false

    private init(data: UnsafeRawBufferPointer, offset: Int, isPNG: Bool) {
        self.data = data
        self.offset = offset
        self.isPNG = isPNG
    }

    /// The next chunk, or `nil` at the end, at `IEND`'s successor, or at a chunk that does not fit.
    mutating func next() -> Chunk? {
        let i = offset
        guard !ended, i + (isPNG ? 12 : 8) <= data.count else { return nil }
        let chunk: Chunk
        if isPNG {
            let length = Int(data[i]) << 24 | Int(data[i + 1]) << 16 | Int(data[i + 2]) << 8 | Int(data[i + 3])
            guard length <= data.count - i - 12 else { return nil }
            chunk = Chunk(type: Self.type(data, at: i + 4), body: (i + 8)..<(i + 8 + length), whole: i..<(i + 12 + length))
            ended = chunk.type == "IEND"
        } else {
            let size = Int(data[i + 4]) | Int(data[i + 5]) << 8 | Int(data[i + 6]) << 16 | Int(data[i + 7]) << 24
            guard size <= data.count - i - 8 else { return nil }
            chunk = Chunk(type: Self.type(data, at: i), body: (i + 8)..<(i + 8 + size), whole: i..<(i + 8 + size))
        }
        offset = chunk.whole.upperBound + (isPNG ? 0 : chunk.body.count & 1)
        return chunk
    }

    private static func type(_ data: UnsafeRawBufferPointer, at offset: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: data[offset..<(offset + 4)]), as: UTF8.self)
    }
}
