import Foundation
import Tessera
@_spi(Internal) import TesseraImaging

/// The ThumbHash known answers in `Tools/Tests/Fixtures/thumbhash-cases.json`, written once by
/// generate-thumbhash.py with PyPI's thumbhash-python: images as straight RGBA, their hashes and decodes.
public enum ThumbHashFixtures {
    /// One image and its known answers.
    public struct Fixture: Decodable, Sendable {
        /// The reference decode of the hash.
        public struct Decoded: Decodable, Sendable {
            /// Its width.
            public var width: Int
            /// Its height.
            public var height: Int
            /// Its straight RGBA, base64.
            public var rgba: String
            /// What the generator noted about it.
            public var note: String?
        }
        /// A hash nibble whose exact value lies within 1e-9 of a half (it may round either way off glibc).
        public struct NearHalf: Decodable, Sendable {
            /// The field of the hash the nibble belongs to.
            public var field: String
            /// The byte it sits in.
            public var byte: Int?
            /// Which half of the byte.
            public var half: String?
        }
        /// The case's name.
        public var name: String
        /// The image's width.
        public var width: Int
        /// The image's height.
        public var height: Int
        /// The image's straight RGBA, rows packed, base64.
        public var rgba: String
        /// The reference hash, base64.
        public var thumbHash: String
        /// The reference decode.
        public var decoded: Decoded
        /// Nibbles that may round the other way off glibc.
        public var nearHalves: [NearHalf]?
        /// The hash of the package's own encoder where it differs from the published algorithm.
        public var packageThumbHash: String?

        /// ``rgba`` decoded.
        public var pixels: [UInt8] { Array(Data(base64Encoded: rgba)!) }
        /// ``thumbHash`` decoded.
        public var hashBytes: [UInt8] { Array(Data(base64Encoded: thumbHash)!) }
        /// Whether every pixel is opaque.
        public var isOpaque: Bool { stride(from: 3, to: pixels.count, by: 4).allSatisfy { pixels[$0] == 255 } }
    }

    /// The whole fixture file.
    public struct File: Decodable, Sendable {
        /// The generator and its reference.
        public struct Source: Decodable, Sendable {
            /// The PyPI package.
            public var package: String
            /// Its version.
            public var version: String
        }
        /// How the file was made.
        public var note: String
        /// The reference implementation.
        public var source: Source
        /// Every case.
        public var cases: [Fixture]
    }

    /// The fixture file, or no cases when it is missing or malformed (a test of the file's shape then fails
    /// instead of the whole test process).
    public static let file: File = {
        let url = TestFixtures.directory.appendingPathComponent("thumbhash-cases.json")
        guard let data = try? Data(contentsOf: url), let file = try? JSONDecoder().decode(File.self, from: data) else {
            return File(note: "", source: .init(package: "", version: ""), cases: [])
        }
        return file
    }()

    /// The case called `name` (it must exist).
    public static func fixture(_ name: String) -> Fixture { file.cases.first { $0.name == name }! }

    /// Straight RGBA (rows packed) as a Tessera bitmap: ``PixelStyle/bgra32`` premultiplied with the
    /// library's own rounding, or ``PixelStyle/bgr32`` for an opaque image.
    public static func bitmap(rgba: [UInt8], width: Int, height: Int, style: PixelStyle = .bgra32) -> Bitmap {
        Bitmap(width: width, height: height, style: style) { view in
            for y in 0..<height {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width {
                    let s = (y * width + x) * 4
                    row[x * 4] = rgba[s + 2]
                    row[x * 4 + 1] = rgba[s + 1]
                    row[x * 4 + 2] = rgba[s]
                    row[x * 4 + 3] = style == .bgr32 ? 255 : rgba[s + 3]
                }
            }
            if style == .bgra32 { PixelConversion.premultiplyBGRA(view) }
        }
    }
}
