import TesseraImaging
import TesseraTables
import Foundation

/// Loads the bytes behind a URL for ``ImageManager``. `TesseraHTTP` provides the default implementation
/// (`HTTPDataLoader`, on AsyncHTTPClient); the core library itself never touches the network.
///
/// ## Contract
/// - Return a ``LoadResponse`` with a 2xx status and the whole body, or status `304` (empty body) when
///   ``LoadRequest/ifNoneMatch`` or ``LoadRequest/ifModifiedSince`` was sent and the server agreed that
///   the cached copy is still valid.
/// - Throw ``/TesseraCore/TesseraError`` with ``/TesseraCore/TesseraError/Reason/fetching(_:)``: ``/TesseraCore/FetchFailure/httpStatus(code:url:)``
///   for any other status, ``/TesseraCore/FetchFailure/timeout(url:)`` past ``LoadRequest/timeout``,
///   ``/TesseraCore/FetchFailure/tooLarge(bytes:limit:url:)`` when the body exceeds ``LoadRequest/maximumBytes``
///   (checked on `Content-Length` before reading, and while streaming), ``/TesseraCore/FetchFailure/redirectLimit(url:)``.
/// - Report progress through `progress` as bytes arrive, in order, from one task at a time.
/// - Stop promptly and throw `CancellationError` when the calling task is cancelled.
public protocol DataLoading: Sendable {
    /// Loads `request`, reporting progress as the body arrives.
    func load(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse
}
