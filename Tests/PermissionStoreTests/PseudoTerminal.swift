import Foundation
import Glibc

/// A pseudo-terminal pair: the code under test uses `follower` as its terminal, the test
/// reads and types on `leader`.
struct PseudoTerminal {
  let leader: Int32
  let follower: Int32

  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  init() throws {
    // posix_openpt/grantpt/unlockpt/ptsname are not visible to Swift's Glibc module; do what
    // they do: open /dev/ptmx, unlock (TIOCSPTLCK), get the number (TIOCGPTN). The request
    // numbers are Linux's generic _IOW('T', 0x31, int) and _IOR('T', 0x30, unsigned int).
    let leader = open("/dev/ptmx", O_RDWR | O_NOCTTY)
    var unlock: Int32 = 0
    var number: UInt32 = 0
    guard leader >= 0, ioctl(leader, 0x4004_5431, &unlock) == 0,
      ioctl(leader, 0x8004_5430, &number) == 0
    else { throw Failure(description: "no pseudo-terminal: \(String(cString: strerror(errno)))") }
    let follower = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
    guard follower >= 0 else { throw Failure(description: "open /dev/pts/\(number) failed") }
    // Raw: no echo, no line editing, so the test reads exactly what the prompt wrote.
    var settings = termios()
    tcgetattr(follower, &settings)
    cfmakeraw(&settings)
    tcsetattr(follower, TCSANOW, &settings)
    self.leader = leader
    self.follower = follower
  }

  func type(_ text: String) {
    var bytes = Array(text.utf8)
    _ = write(leader, &bytes, bytes.count)
  }

  /// Reads from the leader until `suffix` arrives, on a thread of its own. The bound (60 s)
  /// catches a prompt that never comes, not a slow one: the prompt's own thread may start late
  /// on a loaded machine.
  func read(until suffix: String) async throws -> String {
    let leader = leader
    return try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread {
        var text = ""
        let deadline = Date().addingTimeInterval(60)
        while !text.hasSuffix(suffix) {
          guard Date() < deadline else {
            continuation.resume(throwing: Failure(description: "no prompt; got \(text)"))
            return
          }
          var descriptor = pollfd(fd: leader, events: Int16(POLLIN), revents: 0)
          guard poll(&descriptor, 1, 100) > 0 else { continue }
          var buffer = [UInt8](repeating: 0, count: 1024)
          let count = Glibc.read(leader, &buffer, buffer.count)
          if count > 0 { text += String(decoding: buffer[0..<count], as: UTF8.self) }
        }
        continuation.resume(returning: text)
      }
    }
  }

  func close() {
    Glibc.close(follower)
    Glibc.close(leader)
  }
}
