import CommandLineSupport
import Core
import Foundation
import Synchronization

/// What the demo saw, printed as it happens (text or JSON lines) and kept for the checks at
/// the end. A mutex keeps lines whole and in order; handlers call it from several actors.
final class DemoLog: Sendable {
  struct Line: Encodable {
    var t: Double
    var device: String?
    var event: String
    var text: String?
    var type: String?
    var namespace: String?
  }

  private struct State {
    var lines: [Line] = []
  }
  private let state = Mutex(State())
  private let start = ContinuousClock.now
  private let json: Bool

  init(json: Bool) { self.json = json }

  private var elapsed: Double {
    (ContinuousClock.now - start).seconds
  }

  /// A step of the story ("Bob walks away").
  func step(_ text: String) {
    emit(Line(t: elapsed, device: nil, event: "step", text: text))
  }

  /// Something that happened to a device's message.
  func event(_ event: String, device: String, message: Message) {
    emit(
      Line(
        t: elapsed, device: device, event: event, text: message.text, type: message.type,
        namespace: message.namespace))
  }

  private func emit(_ line: Line) {
    state.withLock { state in
      state.lines.append(line)
      let text: String
      if json {
        text = JSONLine.encode(line)
      } else if line.event == "step" {
        text = String(format: "%6.2fs  — %@", line.t, line.text ?? "")
      } else {
        let device = (line.device ?? "").padding(toLength: 8, withPad: " ", startingAt: 0)
        let event = line.event.padding(toLength: 6, withPad: " ", startingAt: 0)
        let type = line.type ?? ""
        let what = "\"\(line.text ?? "")\"" + (type.isEmpty ? "" : " (\(type))")
        text = String(format: "%6.2fs  %@ %@ %@", line.t, device, event, what)
      }
      StandardStreams.output(text + "\n")
    }
  }

  /// How many events of `kind` a device saw for messages with `text`.
  func count(_ kind: String, device: String, text: String) -> Int {
    state.withLock { state in
      state.lines.filter { $0.event == kind && $0.device == device && $0.text == text }.count
    }
  }

  /// How many events of `kind` were seen in all.
  func count(_ kind: String) -> Int {
    state.withLock { state in state.lines.filter { $0.event == kind }.count }
  }
}
