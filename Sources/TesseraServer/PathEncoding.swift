#if Serving
import Foundation

extension String {
    /// This relative path percent-encoded for a URL's path: slashes kept; `%`, `;`, `?`, `#` and everything
    /// else `urlPathAllowed` leaves out encoded. `nil` when the text cannot be encoded (invalid UTF-16).
    var percentEncodedPath: String? { addingPercentEncoding(withAllowedCharacters: Self.pathCharacters) }

    /// The characters ``percentEncodedPath`` keeps as they are, made once.
    private static let pathCharacters: CharacterSet = {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "%;?#")
        return allowed
    }()
}
#endif
