import Foundation
import Glibc
import Synchronization

/// A Unix datagram socket standing in for systemd's `$NOTIFY_SOCKET`: it keeps every message
/// a service sends, read on a thread of its own.
final class NotifySocket: Sendable {
  let path: String
  private let fd: Int32
  private let messages = Mutex<[String]>([])
  private let stopped = Atomic<Bool>(false)

  init(path: String) throws {
    self.path = path
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw Executables.Failure("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw Executables.Failure("socket path too long: \(path)")
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
      throw Executables.Failure("bind \(path): \(String(cString: strerror(errno)))")
    }
    self.fd = fd
    let thread = Thread { [self] in readLoop() }
    thread.start()
  }

  private func readLoop() {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while !stopped.load(ordering: .relaxed) {
      var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, 50) > 0 else { continue }
      let count = recv(fd, &buffer, buffer.count, 0)
      if count > 0 {
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        messages.withLock { $0.append(text) }
      }
    }
    close(fd)
  }

  /// Every message received so far.
  var received: [String] { messages.withLock { $0 } }

  func stop() {
    stopped.store(true, ordering: .relaxed)
    unlink(path)
  }
}
