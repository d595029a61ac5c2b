@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// One request of an ``ImageManager`` in flight, as a handle (``ImageManager/imageTask(for:)``): cancel
/// it, change its priority, watch its progress and events, await its response.
///
/// ```swift
/// let task = manager.imageTask(for: ImageRequest(url: url, size: PixelSize(width: 200, height: 200)))
/// Task { for await progress in task.progress { print(progress.fractionCompleted ?? 0) } }
/// task.priority = .high                        // moves its download ahead in the urgent queue
/// let response = try await task.response       // the image, cacheType, sourceFormat, statusCode, headers
/// ```
///
/// The request starts when the task is made and runs whether or not anyone awaits it, exactly as
/// ``ImageManager/image(for:progress:)`` would: it shares its download and decode with every other
/// request for the same image, and the download goes on while anyone still needs it.
///
/// - **Priority**: five levels (``/TesseraTables/FetchPriority``); setting one moves the download
///   between the lanes, or within one, at once — the download is never started twice. A download shared
///   with other requests takes the highest level among them. ``ImageManager/demote(_:)`` lowers a task's
///   level to `low`.
/// - **Cancellation**: ``cancel()``, or cancelling a task that awaits ``response``, ends the request with
///   ``/TesseraCore/TesseraError/Reason/cancelled``; the download stops when nobody else needs it.
/// - **Observation**: each access to ``progress`` or ``events`` gives a new sequence, which sees what
///   happens from then on and ends when the request does (a sequence made after the end sees only
///   ``Event/finished(_:)``).
public final class ImageTask: Sendable {
    /// What a task reports, in order.
    public enum Event: Sendable {
        /// Bytes received of expected while the image downloads.
        case progress(LoadProgress)
        /// The task's priority was set to another level.
        case priorityChanged(FetchPriority)
        /// The request ended: its response, or the error (``/TesseraCore/TesseraError/Reason/cancelled``
        /// when cancelled). Always the last event.
        case finished(Result<ImageResponse, TesseraError>)
    }

    /// The request the task runs.
    public let request: ImageRequest
    private let caller: CallerPriority
    private let jobs: FetchJobs
    /// The image's identity in the caches (its URL or cache key), `nil` when the request names no URL.
    private let identity: URL?
    private let hub = ImageTaskEvents()
    private let work: Task<Result<ImageResponse, TesseraError>, Never>

    init(request: ImageRequest, manager: ImageManager) {
        self.request = request
        let caller = CallerPriority(request.priority)
        let hub = hub
        self.caller = caller
        jobs = manager.jobs
        identity = (try? ImageManager.resolve(request))?.1.url
        work = Task.detached {
            let result: Result<ImageResponse, TesseraError>
            do throws(TesseraError) {
                result = .success(try await manager.response(for: request, caller: caller, progress: { hub.send(.progress($0)) }))
            } catch {
                result = .failure(error)
            }
            hub.finish(with: result)
            return result
        }
    }

    /// The level the request is wanted at: starts as the request's ``ImageRequest/priority``;
    /// setting it moves a queued download to its place (between the urgent and slow lanes, or within
    /// one) and relabels a running one, and reports ``Event/priorityChanged(_:)``.
    public var priority: FetchPriority {
        get { caller.value }
        set {
            guard caller.set(newValue) else { return }
            if let identity { jobs.priorityChanged(of: identity) }
            hub.send(.priorityChanged(newValue))
        }
    }

    /// Cancels the request: it ends with ``/TesseraCore/TesseraError/Reason/cancelled`` (unless it has
    /// ended already); its download stops when no other request needs it.
    public func cancel() { work.cancel() }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { work.isCancelled }

    /// The response: the image and where it came from. Cancelling the task that awaits it cancels the
    /// request (as ``cancel()``).
    /// - Throws: what ``ImageManager/image(for:progress:)`` throws.
    public var response: ImageResponse {
        get async throws(TesseraError) {
            let result = await withTaskCancellationHandler { await work.value } onCancel: { work.cancel() }
            return try result.get()
        }
    }

    /// The response's image.
    /// - Throws: as ``response``.
    public var image: Bitmap {
        get async throws(TesseraError) { try await response.image }
    }

    /// The download's progress from now on, ending when the request ends.
    public var progress: AsyncStream<LoadProgress> { hub.progress() }

    /// The task's events from now on (``Event``), ending with ``Event/finished(_:)``.
    public var events: AsyncStream<Event> { hub.events() }
}
