@_spi(Resolver) import Core
@_spi(Resolver) import Resolution
import Synchronization

/// The rows of devices that authenticated through this instance, so that a device's next
/// refresh report checks its secret here and goes to the database once (see
/// `RefreshReport`). Never the authority: the refresh statement goes ahead only if the
/// device's row, once locked, still holds the stored secret checked here; a report that takes
/// the general path forgets the device (it is read again next time). A device's stored secret
/// changes only from a secret kept before digests to its digest, and such a device is never
/// kept. Of a row kept, a refresh reads the id, project and stored secret (which never change
/// otherwise) and the token's expiry (which only grows: a stale one sends a report the
/// general way, never the other way round); the answer comes from the row the statement
/// returns. At most ``capacity`` devices: past that it starts again empty.
package final class AuthenticatedDevices: Sendable {
  /// The most devices kept.
  static let capacity = 65_536

  private let rows = Mutex<[DeviceID: DeviceRecord]>([:])

  /// The device's kept row, if there is one and `credentials` carry its secret (compared in
  /// constant time, as the engine compares).
  func device(_ credentials: DeviceCredentials) -> DeviceRecord? {
    guard let row = rows.withLock({ $0[credentials.id] }), row.accepts(secret: credentials.secret)
    else { return nil }
    return row
  }

  /// Keeps the row of a device that authenticated (not one whose secret is kept as it was
  /// before digests).
  func keep(_ device: DeviceRecord) {
    guard !device.holdsPlainSecret else { return }
    rows.withLock { rows in
      if rows.count >= Self.capacity, rows[device.id] == nil {
        rows.removeAll(keepingCapacity: true)
      }
      rows[device.id] = device
    }
  }

  /// Forgets the device: its next report reads its row again.
  func forget(_ id: DeviceID) { _ = rows.withLock { $0.removeValue(forKey: id) } }

  /// How many devices are kept.
  package var count: Int { rows.withLock { $0.count } }
}
