import Foundation
import Glibc

/// A Unix datagram socket in place of systemd's `$NOTIFY_SOCKET`, read synchronously (call
/// from a thread of its own).
final class NotifyListener {
  private let fd: Int32
  private let path: String

  init(path: String) throws {
    self.path = path
    fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard fd >= 0, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw ValidationErrorText("cannot make a notify socket at \(path)")
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
      throw ValidationErrorText("bind \(path): \(String(cString: strerror(errno)))")
    }
  }

  /// Waits for a datagram containing `text`, at most `timeout` seconds.
  func waitFor(_ text: String, timeout: Double) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while Date() < deadline {
      var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, 100) > 0 else { continue }
      let count = recv(fd, &buffer, buffer.count, 0)
      if count > 0, String(decoding: buffer[0..<count], as: UTF8.self).contains(text) {
        return true
      }
    }
    return false
  }

  func close() {
    Glibc.close(fd)
    unlink(path)
  }
}

struct ValidationErrorText: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
