import Foundation
import Resolution

/// A device's ``Resolution/MediumUsage`` as compact text (`broadcast|scan`, each a list of
/// `medium:count`, e.g. `1:2,2:1|1:1`): read and written on every report, where JSON coding
/// cost more than the query.
enum UsageText {
  static func encode(_ usage: MediumUsage) -> String {
    func list(_ counts: [UInt32: Int]) -> String {
      counts.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }
    return list(usage.broadcastCounts) + "|" + list(usage.scanCounts)
  }

  /// - Throws: ``SQLStorageError/unexpectedValue(_:)`` for text this did not write.
  static func decode(_ text: String) throws -> MediumUsage {
    if text.hasPrefix("{") {
      // Written as JSON by the first builds of schema 1.
      do { return try JSONDecoder().decode(MediumUsage.self, from: Data(text.utf8)) } catch {
        throw SQLStorageError.unexpectedValue("usage '\(text)': \(error)")
      }
    }
    let halves = text.split(separator: "|", omittingEmptySubsequences: false)
    guard halves.count == 2 else { throw SQLStorageError.unexpectedValue("usage '\(text)'") }
    func counts(_ part: Substring) throws -> [UInt32: Int] {
      var counts: [UInt32: Int] = [:]
      for pair in part.split(separator: ",") {
        let fields = pair.split(separator: ":")
        guard fields.count == 2, let medium = UInt32(fields[0]), let count = Int(fields[1]) else {
          throw SQLStorageError.unexpectedValue("usage '\(text)'")
        }
        counts[medium] = count
      }
      return counts
    }
    var usage = MediumUsage()
    usage.broadcastCounts = try counts(halves[0])
    usage.scanCounts = try counts(halves[1])
    return usage
  }
}
