/// One codec's encoder: turns decoded pixels into an encoded file.
///
/// Encoders never crash on valid bitmaps; every failure is a thrown ``/TesseraCore/TesseraError`` with reason
/// `.encoding(format:message:)`.
public protocol ImageEncoding: Sendable {
    /// The format this encoder writes.
    var format: ImageFileFormat { get }

    /// Encodes `image` (any ``PixelStyle``) and returns the file's bytes.
    func encode(_ image: some BitmapImage) throws(TesseraError) -> [UInt8]
}
