import Foundation
import Glibc
import Synchronization

/// Watches a store's folder for a new version of one file, on a dedicated thread, and calls
/// `changed` (on that thread) each time one may have appeared.
///
/// It uses inotify (`IN_MOVED_TO`, `IN_CLOSE_WRITE`, `IN_DELETE`, `IN_MOVED_FROM` on the
/// folder, filtered by file name): every write renames a new file into place, so a change by
/// any process shows as `IN_MOVED_TO`. If inotify cannot be used (the per-user watch limit,
/// `fs.inotify.max_user_watches`, is reached), it falls back to calling `changed` every
/// `pollInterval`, and the store compares the file's inode, size and change time.
final class FileWatcher: Sendable {
  /// The write end of the pipe that wakes the thread to stop; the thread owns every other fd.
  private let stopFD: Int32
  private let stopped = Atomic<Bool>(false)
  /// Why inotify is not used, when it is not.
  let fallbackReason: String?

  init(
    directory: String, fileName: String, pollInterval: Duration = .milliseconds(200),
    changed: @escaping @Sendable () -> Void
  ) throws(StoreError) {
    var pipeFDs: [Int32] = [0, 0]
    guard pipe(&pipeFDs) == 0 else {
      throw .system(operation: "pipe", path: directory, errno: errno)
    }
    for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var inotifyFD = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
    var reason: String?
    if inotifyFD < 0 {
      reason = "inotify_init1: \(String(cString: strerror(errno)))"
    } else {
      let mask = UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM)
      if inotify_add_watch(inotifyFD, directory, mask) < 0 {
        reason =
          "inotify_add_watch \(directory): \(String(cString: strerror(errno)))"
          + " (raise fs.inotify.max_user_watches if the limit is reached)"
        close(inotifyFD)
        inotifyFD = -1
      }
    }
    stopFD = pipeFDs[1]
    fallbackReason = reason
    let readStop = pipeFDs[0]
    let watchFD = inotifyFD
    let timeout =
      Int32(pollInterval.components.seconds * 1000)
      + Int32(pollInterval.components.attoseconds / 1_000_000_000_000_000)
    let thread = Thread {
      Self.run(
        inotifyFD: watchFD, stopFD: readStop, fileName: fileName, pollTimeout: timeout,
        changed: changed)
      if watchFD >= 0 { close(watchFD) }
      close(readStop)
    }
    thread.name = "nearby.store.watch"
    thread.start()
  }

  /// Stops the thread (it exits at its next wake-up, at once since the pipe wakes it).
  func stop() {
    guard !stopped.exchange(true, ordering: .relaxed) else { return }
    var byte: UInt8 = 1
    _ = write(stopFD, &byte, 1)
    close(stopFD)
  }

  deinit { stop() }

  private static func run(
    inotifyFD: Int32, stopFD: Int32, fileName: String, pollTimeout: Int32,
    changed: @Sendable () -> Void
  ) {
    var fds = [pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
    if inotifyFD >= 0 { fds.append(pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0)) }
    let name = Array(fileName.utf8)
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
      for index in fds.indices { fds[index].revents = 0 }
      let ready = poll(&fds, nfds_t(fds.count), inotifyFD >= 0 ? -1 : pollTimeout)
      if ready < 0 {
        if errno == EINTR { continue }
        return
      }
      if fds[0].revents != 0 { return }
      guard inotifyFD >= 0 else {
        changed()
        continue
      }
      guard fds[1].revents != 0 else { continue }
      var relevant = false
      while true {
        let count = buffer.withUnsafeMutableBytes { read(inotifyFD, $0.baseAddress, $0.count) }
        guard count > 0 else { break }
        relevant = relevant || containsEvent(for: name, in: buffer[0..<count])
      }
      if relevant { changed() }
    }
  }

  /// Whether one of the `struct inotify_event` records in `bytes` names `name`, or reports an
  /// overflow (events were lost, so the file may have changed).
  private static func containsEvent(for name: [UInt8], in bytes: ArraySlice<UInt8>) -> Bool {
    var offset = bytes.startIndex
    while offset + 16 <= bytes.endIndex {
      func field(_ at: Int) -> UInt32 {
        bytes.withUnsafeBytes {
          $0.loadUnaligned(fromByteOffset: offset - bytes.startIndex + at, as: UInt32.self)
        }
      }
      let mask = field(4)
      let length = Int(field(12))
      if mask & UInt32(IN_Q_OVERFLOW) != 0 { return true }
      let nameBytes = bytes[(offset + 16)..<min(offset + 16 + length, bytes.endIndex)]
      if nameBytes.prefix(while: { $0 != 0 }).elementsEqual(name) { return true }
      offset += 16 + length
    }
    return false
  }
}
