import ArgumentParser
import Core

extension SubscribeCommand {
  /// The `--beacon-filter` values as filters.
  func beaconFilters() throws -> [BeaconFilter] {
    try beaconFilter.map { text in
      let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
      do {
        switch (parts.first, parts.count) {
        case ("uid", 2), ("uid", 3):
          return try .eddystoneUID(
            namespaceHex: parts[1], instanceHex: parts.count == 3 ? parts[2] : nil)
        case ("ibeacon", 2...4):
          let numbers = try parts.dropFirst(2).map { part in
            guard let value = UInt16(part) else {
              throw ValidationError("--beacon-filter \(text): major and minor are 0…65535")
            }
            return value
          }
          return try .iBeacon(
            uuid: parts[1], major: numbers.first, minor: numbers.dropFirst().first)
        default:
          throw ValidationError(
            "--beacon-filter \(text): use uid:NAMESPACE[:INSTANCE] or ibeacon:UUID[:MAJOR[:MINOR]]")
        }
      } catch let error as BeaconFilterError {
        throw ValidationError("--beacon-filter \(text): \(error)")
      }
    }
  }
}
