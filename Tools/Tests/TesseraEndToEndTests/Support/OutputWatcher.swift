import Foundation
import TesseraTestSupport
@_spi(Internal) import TesseraImaging

/// A child's standard output and error through a pipe: a thread of its own reads it, appends it to a
/// file, and lets a test wait for a line that contains some text (with a time limit) rather than poll.
///
/// Give ``writeEnd`` to the child as its output, then call ``childStarted()`` so that the pipe ends
/// when the child exits (the reader then sees end of file and fails the waits still open).
final class OutputWatcher: Sendable {
    /// The file that receives everything the child printed.
    let path: String
    /// The pipe's write end, for the child.
    let writeEnd: Int32

    private struct Waiter {
        var id: Int
        var text: String
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var lines: [String] = []
        var waiters: [Waiter] = []
        var nextID = 0
        var ended = false
    }

    private let state = LockedValue(State())
    /// Signalled once, when the reader has seen the end of the output and written all of it to the file.
    private let finished = DispatchSemaphore(value: 0)

    /// Opens the pipe and the file, and starts the reader.
    init(path: String) throws {
        self.path = path
        let ends = try ChildProcess.makePipe()
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        writeEnd = ends.write
        let readEnd = ends.read
        let thread = Thread { [state, finished] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                _ = buffer.withUnsafeBytes { write(file, $0.baseAddress, count) }
                pending += buffer[..<count]
                var lines: [String] = []
                while let newline = pending.firstIndex(of: 10) {
                    lines.append(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
                guard !lines.isEmpty else { continue }
                let resumed = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                    state.lines += lines
                    let matched = state.waiters.filter { waiter in lines.contains { $0.contains(waiter.text) } }
                    state.waiters.removeAll { waiter in matched.contains { $0.id == waiter.id } }
                    return matched.map(\.continuation)
                }
                for continuation in resumed { continuation.resume(returning: true) }
            }
            close(readEnd)
            close(file)
            let left = state.withLock { state -> [Waiter] in
                state.ended = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in left { waiter.continuation.resume(returning: false) }
            finished.signal()
        }
        thread.start()
    }

    /// Closes this process's copy of the write end: call once the child has it.
    func childStarted() { close(writeEnd) }

    /// Whether a line containing `text` was printed: waits until one is, the child's output ends
    /// (`false`), or `timeout` passes (`false`).
    func wait(for text: String, timeout: Duration) async -> Bool {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskGroup(of: Bool?.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let answer = self.state.withLock { state -> Bool? in
                        if state.lines.contains(where: { $0.contains(text) }) { return true }
                        if state.ended { return false }
                        state.waiters.append(Waiter(id: id, text: text, continuation: continuation))
                        return nil
                    }
                    if let answer { continuation.resume(returning: answer) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)   // a time limit, not synchronisation
                return Task.isCancelled ? nil : false
            }
            var result: Bool?
            while result == nil, let next = await group.next() {
                result = next
                if next == false {
                    // Timed out: the waiter (if still registered) is resumed here, so the group can finish.
                    let waiter = self.state.withLock { state -> Waiter? in
                        guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                        return state.waiters.remove(at: index)
                    }
                    waiter?.continuation.resume(returning: false)
                }
            }
            group.cancelAll()
            return result ?? false
        }
    }

    /// Suspends until the output has ended (the child exited) and all of it is in the file; the wait
    /// runs on a thread of its own (``onOwnThread(_:)``).
    func waitUntilEnded() async {
        await onOwnThread { [finished] in
            finished.wait()
            finished.signal()
        }
    }

    /// Every line printed so far that contains `text`.
    func lines(containing text: String) -> [String] {
        state.withLock { state in state.lines.filter { $0.contains(text) } }
    }
}
