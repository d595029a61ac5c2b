#if Vapor
import Dispatch
import HTTPTypes
import NIOCore
import NIOHTTP1
import TesseraServer
import Vapor

extension ImageRoutes {
    /// Mounts the image routes in `application` under `prefix` (`register(on:prefix:)`) and shuts their
    /// service down with the application (``ImageServiceLifecycle``): the tables flushed and the loaders
    /// closed when the application shuts down, after its server has stopped answering.
    ///
    /// ```swift
    /// let app = try await Application.make(.production)
    /// let service = try ImageService(configuration: ServerConfiguration(root: "/srv/images"))
    /// ImageRoutes(service: service).mount(in: app, prefix: "/images")
    /// // GET /images/v1/thumb/cat.jpg, /images/v1/resize?src=cat.jpg&w=300, /images/healthz
    /// try await app.execute()
    /// ```
    public func mount(in application: Application, prefix: String = "") {
        register(on: application, prefix: prefix)
        application.lifecycle.use(ImageServiceLifecycle(service: service))
    }

    /// Adds the image routes to `routes` (an application or a route group) under `prefix`: the same
    /// `ImageRoutes/endpoints(prefix:)` that `ImageRoutes/add(to:prefix:)` mounts in a Hummingbird router,
    /// each answered by the one request path of the service, measured and logged as under Hummingbird.
    ///
    /// Vapor answers a `HEAD` request with the `GET` route and writes the headers only, so only the
    /// `GET` and `POST` endpoints are registered. The routes read the path and query as Vapor's `URI` gives
    /// them (percent-encoded as sent); a signed URL is signed without the prefix, as under Hummingbird.
    public func register(on routes: any RoutesBuilder, prefix: String = "") {
        for endpoint in endpoints(prefix: prefix) where endpoint.method != .head {
            let path = endpoint.path.split(separator: "/").map { PathComponent(stringLiteral: String($0)) }
            routes.on(HTTPMethod(rawValue: endpoint.method.rawValue), path) { request async -> Response in
                Response(await endpoint.respond(to: RouteRequest(request)))
            }
        }
    }
}

/// Shuts an `ImageService` down when the Vapor application does (`ImageService.shutdown()`: the tables'
/// pages written, the remote loader and the object stores closed). `ImageRoutes/mount(in:prefix:)` adds it.
public struct ImageServiceLifecycle: LifecycleHandler {
    /// The service to shut down.
    public let service: ImageService

    /// A handler that shuts `service` down with the application.
    public init(service: ImageService) {
        self.service = service
    }

    /// `asyncShutdown()`'s step: waits for the service's shutdown.
    public func shutdownAsync(_ application: Application) async {
        await service.shutdown()
    }

    /// The synchronous `shutdown()`'s step (called outside Swift concurrency): blocks the calling thread
    /// until the service has shut down on a task of its own.
    public func shutdown(_ application: Application) {
        let done = DispatchSemaphore(value: 0)
        let service = service
        Task {
            await service.shutdown()
            done.signal()
        }
        done.wait()
    }
}

extension RouteRequest {
    /// Vapor's `request` as the image routes read it: its method, its path and query as sent, its headers.
    init(_ request: Request) {
        var fields = HTTPFields()
        for (name, value) in request.headers {
            guard let field = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: field, value: value))
        }
        self.init(method: HTTPRequest.Method(request.method.rawValue) ?? .get, path: request.url.path,
                  query: request.url.query, headers: fields)
    }
}

extension Response {
    /// `answer` as Vapor's response. Vapor adds `Content-Length` for a body; a `204` or `304` goes out
    /// without one (RFC 9110: a `204` has none, a `304`'s would describe the representation, not this empty body).
    convenience init(_ answer: RouteAnswer) {
        var headers = HTTPHeaders()
        for field in answer.headers { headers.add(name: field.name.rawName, value: field.value) }
        let status = HTTPResponseStatus(statusCode: Int(answer.status.code))
        if answer.body.readableBytes == 0, answer.status == .noContent || answer.status == .notModified {
            self.init(status: status, version: .init(major: 1, minor: 1), headersNoUpdate: headers, body: .empty)
        } else {
            self.init(status: status, headers: headers, body: .init(buffer: answer.body))
        }
    }
}
#endif
