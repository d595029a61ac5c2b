import TesseraImaging
import Foundation

/// A source image as a provider hands it to ``ImageCache``: encoded bytes (decoded once by the
/// cache, off the caller's thread, downscaled just enough for the largest format to be drawn) or an
/// image already decoded.
public enum SourceImage: Sendable {
    /// Encoded bytes (JPEG, PNG, WebP, GIF).
    case encoded(Data)
    /// Decoded pixels, upright.
    case decoded(Bitmap)
}
