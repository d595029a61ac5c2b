#if Serving
import Foundation

/// The gallery page that `GET /gallery` serves: `Resources/gallery.html`, one HTML document with its
/// style and script inline, embedded in the binary by SwiftPM (`.embedInCode`, so there is no resource
/// bundle to find at run time), no build step and nothing loaded from elsewhere (the route's
/// Content-Security-Policy enforces it).
///
/// What the script does (docs/SERVING.md, "Gallery"):
/// - asks `/gallery/list?dir=…&preset=…&lowres=…` for the image paths and the two presets;
/// - lays out a grid of cells of the full preset's size (in CSS pixels: preset pixels ÷ devicePixelRatio)
///   and keeps only the cells of the rows on screen in the DOM, a pool of `columns × (rows on screen + 1)`
///   elements where index `i` always lands in cell `i % pool`, so scrolling recycles cells and never
///   adds any;
/// - loads each image with `fetch` → blob → object URL → `Image.decode()`, so a cell only ever gets a
///   decoded picture; at most 6 requests run at once (Chromium's connections per host), the cells on
///   screen first, then the next screen in the scroll direction (the prefetch);
/// - measures the scroll speed (a moving average of pixels per millisecond between scroll events): above
///   2 px/ms the cells on screen ask for the low-resolution preset and nothing further is prefetched but
///   in low resolution; 150 ms after the last scroll event the grid is at rest and asks for the full preset;
/// - keeps loaded images for the rows on screen, the next screen and one row either side; whatever
///   leaves that window is dropped: its request is cancelled with its `AbortController` and its object
///   URL revoked;
/// - shows frames per second (from `requestAnimationFrame`) and how long images take to appear (from a
///   cell coming on screen to its first picture, and to its full-resolution picture; p50 and p95);
/// - exposes `window.tesseraGallery` (documented at the top of the script) for a script an application
///   appends (``GalleryRoutes/Addition``): the scroller, the layout, promises for "scrolled" and
///   "settled" (at rest, every cell on screen showing its full picture, nothing in flight), the cells on
///   screen and the measurements. The browser test mode of `tessera serve --gallery-report FILE` is such
///   a script, in the tools package.
enum GalleryPage {
    /// The page as the library ships it, without any addition.
    static let html = String(decoding: PackageResources.gallery_html, as: UTF8.self)

    /// The page with `script` in a `<script>` element of its own, after the page's script (right before
    /// `</body>`); the page itself when `script` is `nil`.
    static func html(adding script: String?) -> String {
        guard let script else { return html }
        precondition(script.range(of: "</script", options: .caseInsensitive) == nil,
                     "a gallery script must not contain </script: it would end its element")
        guard let body = html.range(of: "</body>", options: .backwards) else { return html + "<script>\n" + script + "\n</script>\n" }
        return html.replacingCharacters(in: body, with: "<script>\n" + script + "\n</script>\n</body>")
    }
}
#endif
