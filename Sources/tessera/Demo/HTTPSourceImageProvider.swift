import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tessera

/// A minimal source-image provider for `http://` URLs with `URLSession`, for the demo's loopback
/// origin. (Issue 6 builds the real HTTP manager; the demo only needs the fetch path to be real.)
struct HTTPSourceImageProvider: SourceImageProviding {
    let session: URLSession

    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 4
        session = URLSession(configuration: configuration)
    }

    func sourceImage(at url: URL, for entity: any ImageEntity, format: ImageFormat) async throws -> SourceImage {
        let (data, response) = try await session.data(from: url)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            let code = (response as? HTTPURLResponse)?.statusCode ?? 0
            throw TesseraError(.cache(.sourceUnavailable(url: url.absoluteString, message: "HTTP \(code)")))
        }
        return .encoded(data)
    }
}
