import Core
import Foundation
import Strategy
import Tokens

/// The messages present now, as `nearby subscribe` shows them: redrawn in place on a
/// terminal, one line per change otherwise.
struct LiveTable {
  struct Row {
    var message: Message
    var since: Date
    var rssi: Double?
    var distance: DistanceEstimate?
  }

  private(set) var rows: [Row] = []
  let mediums: DiscoveryMediums

  init(mediums: DiscoveryMediums) { self.mediums = mediums }

  mutating func found(_ message: Message, at time: Date = Date()) {
    guard !rows.contains(where: { $0.message == message }) else { return }
    rows.append(Row(message: message, since: time))
  }

  mutating func lost(_ message: Message) { rows.removeAll { $0.message == message } }

  /// A beacon attachment's signal or distance changed.
  mutating func update(_ event: SubscriptionEvent) {
    switch event {
    case .distanceChanged(let message, let estimate):
      for index in rows.indices where rows[index].message == message {
        rows[index].distance = estimate
      }
    case .signalChanged(let message, let signal):
      for index in rows.indices where rows[index].message == message {
        rows[index].rssi = signal.rssi
      }
    default: break
    }
  }

  /// The table as text: a header and one line per message, `now` for the "since" column.
  func render(now: Date = Date()) -> String {
    var lines = [
      Self.columns("MESSAGE", "TYPE", "NAMESPACE", "MEDIUM", "SINCE", "SIGNAL")
    ]
    for row in rows {
      lines.append(
        Self.columns(
          EventOutput.preview(row.message, width: 32), row.message.type,
          row.message.namespace.isEmpty ? "-" : row.message.namespace, mediums.description,
          Self.age(now.timeIntervalSince(row.since)), Self.signal(row)))
    }
    if rows.isEmpty { lines.append("(no messages nearby yet)") }
    return lines.joined(separator: "\n")
  }

  /// Beacon attachments: smoothed RSSI and distance; nearby devices' found events carry no
  /// signal strength.
  static func signal(_ row: Row) -> String {
    var parts: [String] = []
    if let rssi = row.rssi { parts.append("\(Int(rssi.rounded())) dBm") }
    if let distance = row.distance {
      parts.append(String(format: "%.1f±%.1f m", distance.metres, distance.accuracy))
    }
    return parts.isEmpty ? "-" : parts.joined(separator: " ")
  }

  static func age(_ seconds: TimeInterval) -> String {
    let whole = max(0, Int(seconds))
    if whole < 60 { return "\(whole)s" }
    if whole < 3600 { return "\(whole / 60)m\(String(format: "%02d", whole % 60))s" }
    return "\(whole / 3600)h\(String(format: "%02d", whole / 60 % 60))m"
  }

  private static func columns(_ values: String...) -> String {
    values.columns(widths: [33, 14, 18, 12, 8, 20])
  }
}
