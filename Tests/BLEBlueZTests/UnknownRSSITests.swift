import Core
import DBus
import Testing

@testable import BLEBlueZ

/// A controller with no RSSI reports 127 (HCI's "not available"); real bluetoothd passes it on
/// and its emulated controllers always send it (docs/bluez-vm-findings.md). The advertisement
/// counts; its strength is unknown, not 127 dBm.
@Suite("Unknown RSSI")
struct UnknownRSSITests {
  static let now = NearbyClock.Instant(offset: .seconds(100))
  @Test func rssi127IsUnknownButStillAReport() {
    var device = DeviceState(at: Self.now)
    let strong = device.apply(["RSSI": .int16(-60)], at: Self.now)
    #expect(strong && device.rssi == -60)
    let unknown = device.apply(["RSSI": .int16(127)], at: Self.now)
    #expect(unknown && device.rssi == nil)
    let weak = device.apply(["RSSI": .int16(126)], at: Self.now)
    #expect(weak && device.rssi == 126)
  }
}
