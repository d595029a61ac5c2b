/// Why an image could not be probed or decoded.
public enum DecodingFailure: Sendable, Equatable, CustomStringConvertible {
    /// The input has no bytes.
    case empty
    /// The input is larger than `DecodingLimits.maximumInputBytes`.
    case inputTooLarge(bytes: Int, limit: Int)
    /// The first bytes match no supported format; `signature` is their hex dump.
    case unsupportedFormat(signature: String)
    /// The data ends before the image does.
    case truncated(ImageFileFormat)
    /// The declared dimensions exceed `DecodingLimits.maximumPixelCount` (a decompression bomb or
    /// simply too big); checked before any pixel memory is allocated.
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// The declared dimensions are zero, negative or beyond what the codec allows.
    case invalidDimensions(width: Int, height: Int)
    /// The codec reported an error; `message` is its own text.
    case codec(ImageFileFormat, message: String)
    /// An animation has more frames than `DecodingLimits.maximumFrameCount`.
    case tooManyFrames(limit: Int)
    /// `frames` frames of `width` × `height` exceed `DecodingLimits.maximumAnimationPixelCount`.
    case animationTooLarge(frames: Int, width: Int, height: Int, limit: Int)
    /// A HEIF container (HEIC, AVIF) declares more items (grid tiles, thumbnails, metadata) than
    /// `DecodingLimits.maximumItemCount`; checked before any item is decoded.
    case tooManyItems(count: Int, limit: Int)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .empty: "the input is empty (0 bytes)"
        case .inputTooLarge(let bytes, let limit): "input of \(bytes) bytes exceeds the limit of \(limit) bytes"
        case .unsupportedFormat(let signature): "unsupported or unrecognised format (first bytes: \(signature))"
        case .truncated(let format): "truncated \(format) data"
        case .tooManyPixels(let w, let h, let limit): "declared size \(w)x\(h) (\(w * h) pixels) exceeds the limit of \(limit) pixels"
        case .invalidDimensions(let w, let h): "invalid dimensions \(w)x\(h)"
        case .codec(let format, let message): "\(format) codec: \(message)"
        case .tooManyFrames(let limit): "the animation has more than \(limit) frames"
        case .animationTooLarge(let frames, let w, let h, let limit):
            "\(frames) frames of \(w)x\(h) exceed the limit of \(limit) pixels over all frames"
        case .tooManyItems(let count, let limit): "the container declares \(count) items, more than the limit of \(limit)"
        }
    }
}
