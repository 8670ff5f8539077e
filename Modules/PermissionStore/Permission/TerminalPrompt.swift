import Foundation
import Glibc

/// A y/n question on a terminal. Blocks: call it on a thread of its own.
enum TerminalPrompt {
  /// Writes `question` to `output` and reads one line from `input`: `true` for y/yes, `false`
  /// for anything else (an empty line too), `nil` at end of input or after `timeout`.
  static func ask(_ question: String, input: Int32, output: Int32, timeout: Duration) -> Bool? {
    var bytes = Array(question.utf8)
    _ = bytes.withUnsafeMutableBytes { write(output, $0.baseAddress, $0.count) }
    let deadline = ContinuousClock.now + timeout
    var line: [UInt8] = []
    while true {
      let left = ContinuousClock.now.duration(to: deadline)
      guard left > .zero else { return nil }
      var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
      let milliseconds = Int32(
        min(
          left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1,
          Int64(Int32.max)))
      let ready = poll(&descriptor, 1, milliseconds)
      if ready < 0 {
        if errno == EINTR { continue }
        return nil
      }
      if ready == 0 { continue }
      var byte: UInt8 = 0
      let count = read(input, &byte, 1)
      if count < 0, errno == EINTR || errno == EAGAIN { continue }
      if count <= 0 { return nil }
      if byte == 0x0A { break }
      line.append(byte)
    }
    let answer = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
      .lowercased()
    return answer == "y" || answer == "yes"
  }
}
