import BLEBlueZ
import Core
import Strategy
import TestSupport
import Testing
import Tokens
import NearbyTesting

extension RealBlueZTests {
  /// The emulated air reports every advert with RSSI 127, HCI's "not available" (findings
  /// item 8). End to end, over the real bluetoothd: the token is still sighted, with its
  /// strength unknown (nil), not 127 dBm, and with the TX power our frame declares. (For
  /// beacons, ``Beacons`` checks that a manager reports neither distance nor signal.)
  @Suite struct UnknownRSSI {
    @Test func aTokenHeardWithRSSI127IsSightedWithItsStrengthUnknown() async throws {
      try RealBlueZ.requireVM()
      let speaker = try await RealBlueZ.medium("hci0")
      let listener = try await RealBlueZ.medium("hci1")
      let heard = StreamRecorder(listener.sightings)
      let token = Token.random()
      try await speaker.transmit(token)
      try await listener.startScanning()
      let sighting = await heard.first(timeout: .seconds(30)) { $0.token == token }
      #expect(sighting != nil, "hci1 did not hear the token hci0 advertises")
      #expect(sighting.map { $0.rssi == nil } ?? true, "RSSI \(sighting?.rssi as Any)")
      #expect(sighting?.txPower == Int(BlueZConfiguration().txPowerAtZeroMeters))
      #expect(sighting?.medium == .ble)
      await speaker.shutdown()
      await listener.shutdown()
    }
  }
}
