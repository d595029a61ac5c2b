// What the documentation's snippets use but leave to the reader's app: the bytes of an image, a photo,
// an entity id, a place to show an image. The generated snippet functions are compiled, never called,
// so each stand-in only has to have the right type; none is ever evaluated.
import Foundation
import Tessera

/// A value of any type for a stand-in that is compiled but never evaluated.
private func standIn<T>() -> T { fatalError("documentation snippets are compiled, not run") }

/// Encoded image bytes (JPEG, PNG, WebP or GIF), as an app would read them from a file or the network.
var data: Data { standIn() }
/// Encoded JPEG bytes.
var jpegData: Data { standIn() }
/// Encoded (animated) GIF bytes.
var gifData: Data { standIn() }
/// Memory the app owns, large enough for the layout a snippet decodes into.
var pointer: UnsafeMutableRawPointer { standIn() }
/// A decoded photo to draw.
var photo: Bitmap { standIn() }
/// An entity's id and its source image's id, as an app would derive them with `UUID(hashing:)`.
var id: UUID { standIn() }
/// The id of the source image an entry was drawn from.
var sourceID: UUID { standIn() }
/// An image URL, the URLs of the next page and one that scrolled out of view.
var url: URL { standIn() }
/// The image URLs of the next page, to prefetch.
var nextPageURLs: [URL] { standIn() }
/// An image URL that scrolled out of view.
var urlScrolledAway: URL { standIn() }
/// The decoder the first snippet of docs/LIBRARY.md makes, used by the snippets after it.
var decoder: ImageDecoder { standIn() }

/// Shows an image in the app's own view.
func show(_ image: some BitmapImage) {}
/// Shows one frame of an animation for its duration.
func show(_ image: some BitmapImage, for duration: Duration) {}
