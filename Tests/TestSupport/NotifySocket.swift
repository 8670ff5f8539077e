import Foundation
import Glibc
public import NearbyTesting
import Synchronization

/// A Unix datagram socket standing in for systemd's `$NOTIFY_SOCKET` (the one sd_notify
/// listener of the tests and the benchmarks): it keeps every message a service sends, with
/// the instant it arrived, read on a thread of its own.
public final class NotifySocket: Sendable {
  /// The socket's path: set it as the service's `NOTIFY_SOCKET`.
  public let path: String
  private let fd: Int32
  private let messages = Mutex<[(at: ContinuousClock.Instant, text: String)]>([])
  private let stopped = Atomic<Bool>(false)
  /// Broadcast by the reader after each message, under its lock: what ``arrival(of:since:timeout:)``
  /// waits on (checking the messages under the same lock, so no message slips between).
  private let arrived = NSCondition()
  /// Wakes the waits of ``until(timeout:_:)`` after each message.
  private let changes = ChangeSignal()

  /// A socket that could not be made.
  public struct Failure: Error, CustomStringConvertible {
    public var description: String
  }

  /// Binds a datagram socket at `path` and starts reading it.
  /// - Throws: ``Failure`` naming the system call that failed, or a path too long for a
  ///   socket address.
  public init(path: String) throws {
    self.path = path
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else {
      throw Failure(description: "socket: \(String(cString: strerror(errno)))")
    }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      close(fd)
      throw Failure(description: "socket path too long: \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      for (index, byte) in bytes.enumerated() { buffer[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard bound == 0 else {
      let reason = String(cString: strerror(errno))
      close(fd)
      throw Failure(description: "bind \(path): \(reason)")
    }
    self.fd = fd
    Thread.detachNewThread { [self] in readLoop() }
  }

  private func readLoop() {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while !stopped.load(ordering: .relaxed) {
      var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, 50) > 0 else { continue }
      let count = recv(fd, &buffer, buffer.count, 0)
      if count > 0 {
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        let now = ContinuousClock.now
        messages.withLock { $0.append((now, text)) }
        arrived.lock()
        arrived.broadcast()
        arrived.unlock()
        changes.changed()
      }
    }
    close(fd)
  }

  /// Every message received so far.
  public var received: [String] { messages.withLock { $0.map(\.text) } }

  /// Waits until `condition` holds, asking it now and after each message, for at most
  /// `timeout`; returns whether it held. `condition` reads this socket:
  /// `socket.until { socket.received.contains { $0.contains("READY=1") } }`.
  public func until(
    timeout: Duration = defaultWaitBound, _ condition: () throws -> Bool
  ) async rethrows -> Bool {
    try await changes.wait(timeout: timeout, until: condition)
  }

  /// When the first message containing `text` arrived at or after `instant`, waiting for it at
  /// most `timeout`; `nil` if none came. Blocks the calling thread (for a benchmark's own
  /// thread: the arrival instant is the reader's, not this poll's).
  public func arrival(
    of text: String, since instant: ContinuousClock.Instant, timeout: Duration
  ) -> ContinuousClock.Instant? {
    let deadline = Date(timeIntervalSinceNow: Double(timeout.components.seconds))
      .addingTimeInterval(Double(timeout.components.attoseconds) / 1e18)
    arrived.lock()
    defer { arrived.unlock() }
    while true {
      if let found = firstArrival(of: text, since: instant) { return found }
      // Woken by the reader's broadcast; `false` once the deadline passed.
      guard arrived.wait(until: deadline) else { return firstArrival(of: text, since: instant) }
    }
  }

  private func firstArrival(
    of text: String, since instant: ContinuousClock.Instant
  ) -> ContinuousClock.Instant? {
    messages.withLock { list in list.first { $0.at >= instant && $0.text.contains(text) }?.at }
  }

  /// Stops reading and removes the socket file.
  public func stop() {
    stopped.store(true, ordering: .relaxed)
    unlink(path)
  }
}
