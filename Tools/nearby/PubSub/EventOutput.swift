import CommandLineSupport
import Core
import Foundation
import Strategy
import Tokens

/// Where publish and subscribe write: notes for people on stderr, and with `--json` one JSON
/// object a line on stdout for scripts (keys sorted).
struct EventOutput: Sendable {
  let json: Bool

  struct Line: Encodable {
    var event: String
    var time: String
    var medium: String?
    var available: Bool?
    var detail: String?
    var status: String?
    var text: String?
    var content: String?
    var type: String?
    var namespace: String?
    var mediums: [String]?
    var distance: Double?
    var accuracy: Double?
    var rssi: Double?
    var txPower: Double?
    var url: String?
  }

  /// Now as RFC 3339 UTC with milliseconds, e.g. `2026-11-21T13:05:00.123Z`.
  static func now() -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: Date())
  }

  func emit(_ line: Line) {
    let text = JSONLine.encode(line) + "\n"
    StandardStreams.output(text)
  }

  /// A note for people (stderr); with `--json`, also a `note` line.
  func note(_ text: String) {
    if json {
      emit(Line(event: "note", time: Self.now(), detail: text))
    } else {
      StandardStreams.error("nearby: \(text)\n")
    }
  }

  func medium(_ kind: DiscoveryMediums, _ availability: MediumCatalog.Availability) {
    if json {
      var line = Line(event: "medium", time: Self.now(), medium: kind.description)
      switch availability {
      case .available(let detail): (line.available, line.detail) = (true, detail)
      case .unavailable(let reason): (line.available, line.detail) = (false, reason)
      }
      emit(line)
    } else {
      note("\(kind): \(MediumCatalog.describe(availability))")
    }
  }

  /// A message event (found, lost) or the publication's own message with its status.
  func message(
    _ event: String, _ message: Message, mediums: DiscoveryMediums, status: String? = nil
  ) {
    emit(
      Line(
        event: event, time: Self.now(), status: status, text: message.text,
        content: message.content.base64EncodedString(), type: message.type,
        namespace: message.namespace, mediums: mediums.names))
  }

  /// A beacon attachment's distance or signal change (`nearby subscribe --beacons`).
  func beaconUpdate(_ event: SubscriptionEvent) {
    switch event {
    case .distanceChanged(let message, let estimate):
      var line = Self.line("distance", message)
      (line.distance, line.accuracy) = (
        Self.rounded(estimate.metres), Self.rounded(estimate.accuracy)
      )
      emit(line)
    case .signalChanged(let message, let signal):
      var line = Self.line("signal", message)
      (line.rssi, line.txPower) = (Self.rounded(signal.rssi), signal.txPower)
      emit(line)
    default: break
    }
  }

  private static func line(_ event: String, _ message: Message) -> Line {
    Line(
      event: event, time: now(), text: message.text,
      content: message.content.base64EncodedString(), type: message.type,
      namespace: message.namespace, mediums: ["ble"])
  }

  private static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }

  /// A short, one-line, printable preview of a message's content.
  static func preview(_ message: Message, width: Int = 40) -> String {
    guard let text = message.text,
      !text.unicodeScalars.contains(where: {
        $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t"
      })
    else {
      let hex = Hex.encode(message.content.prefix(8))
      return "<\(message.content.count) bytes \(hex)\(message.content.count > 8 ? "…" : "")>"
    }
    let flat = text.replacingOccurrences(of: "\n", with: "⏎").replacingOccurrences(
      of: "\t", with: " ")
    return flat.count > width ? String(flat.prefix(width - 1)) + "…" : flat
  }
}
