import TesseraImaging
import TesseraTables
import Foundation

/// Adds or refreshes the credentials of an ``ImageManager``'s requests: passed to the manager's
/// initializer, called before each load its ``DataLoading`` loader performs.
///
/// ```swift
/// import Tessera
///
/// actor TokenStore: RequestAuthorizing {
///     private var token = "first"
///     func authorize(_ request: inout LoadRequest, attempt: AuthorizationAttempt) async throws {
///         if attempt == .afterUnauthorized { token = "refreshed" }   // ask your identity service here
///         request.headers["Authorization"] = "Bearer \(token)"
///     }
/// }
/// ```
///
/// ## Contract
/// - ``authorize(_:attempt:)`` is called with ``AuthorizationAttempt/initial`` before every load the
///   manager hands to its loader (a download or a revalidation), in the job's own task, never on a
///   caller's actor. The request already carries the manager's headers
///   (``ImageManager/Configuration/headers``) with the request's own headers over them.
/// - Only the request's ``LoadRequest/headers`` are used afterwards: set or replace the credentials
///   there (typically `Authorization`); changes to the URL or the limits are ignored.
/// - When the loader fails with ``/TesseraCore/FetchFailure/httpStatus(code:url:)`` `401`, the hook is called once
///   more with ``AuthorizationAttempt/afterUnauthorized`` and the request as it was sent (with the
///   rejected credentials), and the load is retried exactly once. A second `401` ends the load with
///   ``/TesseraCore/FetchFailure/unauthorized(url:)``; no third request is made.
/// - An error the hook throws ends the load with that error (`CancellationError` when cancelled).
/// - Loads of different URLs run concurrently, so the hook may be called concurrently: an `actor`
///   keeps a token refresh from running twice at once.
///
/// A manager's credentials are one identity: the responses they obtain are cached and shared among
/// the manager's requests, as in any private (single-user) HTTP cache. See ``ImageManager``,
/// "Credentials and caching", for requests that carry credentials of their own.
public protocol RequestAuthorizing: Sendable {
    /// Sets the credentials of `request` for this `attempt` (see the protocol's contract).
    func authorize(_ request: inout LoadRequest, attempt: AuthorizationAttempt) async throws
}

/// Why ``RequestAuthorizing/authorize(_:attempt:)`` is called.
public enum AuthorizationAttempt: Sendable, Hashable {
    /// Before the request is sent the first time.
    case initial
    /// The server answered `401 Unauthorized` to the request as authorized before: refresh the
    /// credentials; the request is sent once more.
    case afterUnauthorized
}

extension LoadRequest {
    /// Names of request headers that carry credentials, lower-cased. A request of its own with one of
    /// these is private to its caller (``ImageManager``, "Credentials and caching").
    static let credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// `base` with `overrides` on top; names are compared case-insensitively, and an override keeps
    /// its own spelling (`["authorization": "a"]` over `["Authorization": "b"]` leaves only the former).
    static func headers(_ base: [String: String], overriddenBy overrides: [String: String]) -> [String: String] {
        var merged = base
        for (name, value) in overrides {
            let lowered = name.lowercased()
            for existing in merged.keys where existing.lowercased() == lowered { merged.removeValue(forKey: existing) }
            merged[name] = value
        }
        return merged
    }

    /// Whether `headers` (a request's own) carry credentials.
    static func carriesCredentials(_ headers: [String: String]) -> Bool {
        headers.keys.contains { credentialHeaders.contains($0.lowercased()) }
    }
}
