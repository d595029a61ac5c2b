/// The one error type Tessera throws. Switch on ``reason`` to learn exactly what failed.
public struct TesseraError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, grouped by area.
    public enum Reason: Sendable, Equatable {
        /// An image could not be probed or decoded.
        case decoding(DecodingFailure)
        /// An image could not be encoded.
        case encoding(format: ImageFileFormat, message: String)
        /// A bitmap geometry is impossible (non-positive size, stride shorter than a row, …).
        case invalidLayout(width: Int, height: Int, bytesPerRow: Int)
        /// The drawing library refused an operation.
        case drawing(message: String)
        /// An image table or its directory failed.
        case storage(StorageFailure)
        /// An `ImageCache` request failed.
        case cache(CacheFailure)
        /// A remote image could not be fetched (see `ImageManager`).
        case fetching(FetchFailure)
        /// A file-system call failed.
        case io(operation: String, path: String, errno: Int32)
        /// The request was cancelled (its task, its ticket, or the cache's `cancelRequest`).
        case cancelled
    }

    /// What failed.
    public let reason: Reason
    /// The error from below that caused this one, kept as a value when there is one: a loader's or a
    /// source provider's own error, AsyncHTTPClient's or NIO's transport error. Not part of equality.
    public let underlying: (any Error)?

    /// Creates an error with a reason and, optionally, the error that caused it.
    public init(_ reason: Reason, underlying: (any Error)? = nil) {
        self.reason = reason
        self.underlying = underlying
    }

    /// Errors are equal when their reasons are (the underlying error is context, not identity).
    public static func == (lhs: TesseraError, rhs: TesseraError) -> Bool { lhs.reason == rhs.reason }

    /// A one-line human-readable explanation.
    public var description: String {
        switch reason {
        case .decoding(let failure): "decoding failed: \(failure)"
        case .encoding(let format, let message): "\(format) encoding failed: \(message)"
        case .invalidLayout(let w, let h, let bpr): "invalid bitmap layout \(w)x\(h) with \(bpr) bytes per row"
        case .drawing(let message): "drawing failed: \(message)"
        case .storage(let failure): "image table: \(failure)"
        case .cache(let failure): "image cache: \(failure)"
        case .fetching(let failure): "fetch: \(failure)"
        case .io(let operation, let path, let code): "\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))"
        case .cancelled: "cancelled"
        }
    }

    /// `error` as a ``TesseraError``: itself when it is one, ``Reason/cancelled`` for `CancellationError`,
    /// otherwise what `other` makes of it (the layer that calls this knows the context).
    package static func wrapping(_ error: any Error, other: (any Error) -> TesseraError) -> TesseraError {
        if let error = error as? TesseraError { return error }
        if error is CancellationError { return TesseraError(.cancelled) }
        return other(error)
    }

    /// Whether this error is a cancellation.
    public var isCancellation: Bool { reason == .cancelled }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
