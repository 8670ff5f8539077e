import Core
import Foundation
import Strategy

/// The messages present now, as `nearby subscribe` shows them: redrawn in place on a
/// terminal, one line per change otherwise.
struct LiveTable {
  struct Row {
    var message: Message
    var since: Date
  }

  private(set) var rows: [Row] = []
  let mediums: DiscoveryMediums

  init(mediums: DiscoveryMediums) { self.mediums = mediums }

  mutating func found(_ message: Message, at time: Date = Date()) {
    guard !rows.contains(where: { $0.message == message }) else { return }
    rows.append(Row(message: message, since: time))
  }

  mutating func lost(_ message: Message) { rows.removeAll { $0.message == message } }

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
          Self.age(now.timeIntervalSince(row.since)),
          // The resolver's found events do not carry a signal strength yet.
          "-"))
    }
    if rows.isEmpty { lines.append("(no messages nearby yet)") }
    return lines.joined(separator: "\n")
  }

  static func age(_ seconds: TimeInterval) -> String {
    let whole = max(0, Int(seconds))
    if whole < 60 { return "\(whole)s" }
    if whole < 3600 { return "\(whole / 60)m\(String(format: "%02d", whole % 60))s" }
    return "\(whole / 3600)h\(String(format: "%02d", whole / 60 % 60))m"
  }

  private static func columns(_ values: String...) -> String {
    values.columns(widths: [33, 14, 18, 12, 8, 6])
  }
}
