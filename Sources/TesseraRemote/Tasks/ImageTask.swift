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
///   happens from then on and ends when the request does (a sequence made after the answer starts with
///   ``Event/finished(_:)``, and ends there unless a revalidation is still running).
/// - **Stale while revalidate**: when the answer is a stale disk copy answered at once (the origin's
///   `stale-while-revalidate`, or ``ImageRequest/CachePolicy/staleWhileRevalidate``), ``response`` is
///   that copy, and the task revalidates it in the background: the events go on after
///   ``Event/finished(_:)`` with ``Event/refreshed(_:)`` when the origin sent a new image (none when it
///   answered `304 Not Modified` or the revalidation failed), and end when the revalidation does.
public final class ImageTask: Sendable {
    /// What a task reports, in order.
    public enum Event: Sendable {
        /// Bytes received of expected while the image downloads.
        case progress(LoadProgress)
        /// The task's priority was set to another level.
        case priorityChanged(FetchPriority)
        /// The request was answered: its response, or the error (``/TesseraCore/TesseraError/Reason/cancelled``
        /// when cancelled). The last event, unless the response is a stale copy being revalidated in the
        /// background: then ``refreshed(_:)`` may follow.
        case finished(Result<ImageResponse, TesseraError>)
        /// The stale copy answered in ``finished(_:)`` was revalidated in the background and the origin
        /// sent a new image: this response (``ImageResponse/CacheType/network``), now also in the memory
        /// and disk caches. Never sent when the origin says the copy is unchanged.
        case refreshed(ImageResponse)
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
            var revalidation: ImageManager.Revalidation?
            do throws(TesseraError) {
                let answer = try await manager.answer(for: request, caller: caller, progress: { hub.send(.progress($0)) })
                result = .success(answer.response)
                revalidation = answer.revalidation
            } catch {
                result = .failure(error)
            }
            hub.finish(with: result, refreshing: revalidation != nil)
            if let revalidation {
                // Not part of this task: `response` answers now, the events follow the revalidation.
                Task.detached {
                    if let refreshed = await manager.revalidate(revalidation, caller: caller) { hub.send(.refreshed(refreshed)) }
                    hub.close()
                }
            }
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
    /// ended already); its download stops when no other request needs it. After a stale answer, the
    /// events end without ``Event/refreshed(_:)`` (the background revalidation still updates the caches).
    public func cancel() {
        work.cancel()
        hub.cancelRefresh()
    }

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

    /// The task's events from now on (``Event``), ending with ``Event/finished(_:)``, or after the
    /// background revalidation of a stale answer (see "Stale while revalidate").
    public var events: AsyncStream<Event> { hub.events() }
}
