import Hummingbird
import NIOCore

extension OriginLedger {
    /// Answers one request: records its arrival, waits out the latency and the resource's gate, then
    /// builds the response (a redirect, `304`, a stalling or chunked body, or the whole body).
    func respond(to request: Request) async throws -> Response {
        let arrival = Origin.Arrival(path: request.uri.path, ifNoneMatch: request.headers[.ifNoneMatch],
                                     ifModifiedSince: request.headers[.ifModifiedSince],
                                     authorization: request.headers[.authorization], host: request.head.authority)
        let found = await arrive(arrival)
        if latency > .zero { try await Task.sleep(for: latency) }
        guard let resource = found else { return Response(status: .notFound) }
        if let credential = resource.credential, !credential.admits(arrival.authorization) {
            return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer"])
        }
        await resource.gate?.wait()
        var headers = HTTPFields()
        if let value = resource.contentType { headers[.contentType] = value }
        if let value = resource.cacheControl { headers[.cacheControl] = value }
        if let value = resource.etag { headers[.eTag] = value }
        if let value = resource.lastModified { headers[.lastModified] = value }
        for (name, value) in resource.headers {
            if let field = HTTPFields.Element.Name(name) { headers[field] = value }
        }
        if let location = resource.redirect {
            headers[.location] = location
            return Response(status: .found, headers: headers)
        }
        let notModified = (resource.etag != nil && arrival.ifNoneMatch == resource.etag)
            || (resource.etag == nil && resource.lastModified != nil && arrival.ifModifiedSince == resource.lastModified)
        if notModified { return Response(status: .notModified, headers: headers) }
        return Response(status: HTTPResponse.Status(code: resource.status), headers: headers, body: Self.body(of: resource))
    }

    /// The body of a full response to `resource`.
    private static func body(of resource: Origin.Resource) -> ResponseBody {
        let body = resource.body
        if let stall = resource.stall {
            let first = min(resource.stallAfter, body.count)
            return ResponseBody(contentLength: body.count) { writer in
                try await writer.write(ByteBuffer(bytes: body[..<first]))
                await stall.wait()
                try await writer.write(ByteBuffer(bytes: body[first...]))
                try await writer.finish(nil)
            }
        }
        if let chunkSize = resource.chunkSize {
            return ResponseBody { writer in
                for start in stride(from: 0, to: body.count, by: chunkSize) {
                    try await writer.write(ByteBuffer(bytes: body[start..<min(body.count, start + chunkSize)]))
                }
                try await writer.finish(nil)
            }
        }
        return ResponseBody(byteBuffer: ByteBuffer(bytes: body))
    }
}
