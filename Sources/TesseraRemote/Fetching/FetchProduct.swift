import TesseraImaging
import TesseraTables
import Foundation

/// What a requester wants from a job: a decoded variant, or the encoded bytes (for ``ImageCache``).
enum FetchProduct: Sendable, Hashable {
    case decoded(ImageKey)
    case encoded
}

/// What a job hands a requester.
enum FetchOutput: Sendable {
    case decoded(Bitmap)
    case encoded(Data)
}
