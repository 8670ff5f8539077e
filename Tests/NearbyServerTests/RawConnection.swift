import Dispatch
import Foundation
import Glibc

/// A TCP connection to 127.0.0.1 written and read byte by byte, for tests of what a client
/// that does not behave gets (half requests, connections held open).
final class RawConnection: Sendable {
  let fd: Int32

  /// Connects; nil if the connection cannot be made.
  init?(port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(fd)
      return nil
    }
    self.fd = fd
  }

  deinit { close(fd) }

  func send(_ text: String) {
    _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
  }

  /// Sends all of `bytes` as a client that writes its whole body before reading does; false
  /// if they were not all taken within `seconds` (the server stopped reading) or the server
  /// closed the connection first.
  func send(_ bytes: [UInt8], within seconds: Int) async -> Bool {
    let fd = fd
    return await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let deadline = ContinuousClock.now + .seconds(seconds)
        var sent = 0
        while sent < bytes.count, ContinuousClock.now < deadline {
          let count = bytes[sent...].withUnsafeBytes {
            Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
          }
          guard count > 0 else { break }
          sent += count
        }
        continuation.resume(returning: sent == bytes.count)
      }
    }
  }

  /// One whole answer (its head, and a body of its `Content-Length`) as text, waiting at most
  /// `seconds`; nil if none came whole by then.
  func receiveAnswer(within seconds: Int) async -> String? {
    let fd = fd
    return await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
          if let answer = Self.wholeAnswer(received) {
            continuation.resume(returning: answer)
            return
          }
          let count = recv(fd, &buffer, buffer.count, 0)
          if count == 0 { break }
          if count > 0 { received += buffer.prefix(count) }
        }
        continuation.resume(returning: Self.wholeAnswer(received))
      }
    }
  }

  /// The answer at the start of `bytes`, if it is all there.
  private static func wholeAnswer(_ bytes: [UInt8]) -> String? {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let headEnd = text.range(of: "\r\n\r\n") else { return nil }
    let length =
      text[..<headEnd.lowerBound].split(separator: "\r\n")
      .first { $0.lowercased().hasPrefix("content-length:") }
      .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
      ?? 0
    let body = text[headEnd.upperBound...]
    guard body.utf8.count >= length else { return nil }
    return String(text[..<headEnd.upperBound])
      + String(decoding: body.utf8.prefix(length), as: UTF8.self)
  }

  /// Whether the server has closed the connection (a read finds its end at once).
  var isClosed: Bool {
    var byte: UInt8 = 0
    return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
  }

  /// How long until the server closes the connection (anything it sends is read and
  /// dropped), waiting at most `seconds`; nil if it did not close by then.
  func secondsUntilClosed(within seconds: Int) async -> Double? {
    let fd = fd
    return await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let start = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
          let count = recv(fd, &buffer, buffer.count, 0)
          if count > 0 { continue }
          let elapsed = start.duration(to: .now)
          let taken =
            Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
          continuation.resume(returning: count == 0 ? taken : nil)
          return
        }
      }
    }
  }

  /// What arrives within `seconds` (up to 64 KiB, as text), or nil if nothing does.
  func receive(within seconds: Int) async -> String? {
    let fd = fd
    return await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(fd, &buffer, buffer.count, 0)
        continuation.resume(
          returning: count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil)
      }
    }
  }
}
