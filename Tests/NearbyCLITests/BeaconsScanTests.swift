import BlueZTestSupport
import Foundation
import TestSupport
import Testing
import Tokens

/// `nearby beacons scan` against the BlueZ double (Tools/scripts/test.sh starts it), with a
/// beacon simulated on another adapter. Serialized: the tests share the double's air.
@Suite("nearby beacons scan", .serialized)
struct BeaconsScanTests {
  @Test(
    "lists a simulated beacon's fields, signal and distance as JSON lines", .requires(.bluezDouble))
  func scansASimulatedBeacon() async throws {
    let address = try DoubleBus.address()
    try await DoubleControl.once { try await $0.reset() }
    let beacon = try await SimulatedBeacon.start(
      SampleBeacons.iBeacon, on: "hci1", bus: .address(address))
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = try await CLIEnvironment.run(
      [
        "beacons", "scan", "--adapter", "hci0", "--bus-address", address, "--seconds", "3",
        "--json",
      ], environment: environment)
    await beacon.stop()
    #expect(result.status == 0, "\(result.err)")
    let objects = result.out.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
    let heard = objects.filter {
      $0["kind"] as? String == "ibeacon"
        && $0["uuid"] as? String == "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    }
    // Reports every 100 ms for about 3 s.
    #expect(heard.count >= 10, "\(result.out)")
    guard let last = heard.last else { return }
    #expect(last["major"] as? Int == 1)
    #expect(last["minor"] as? Int == 2)
    #expect(last["measuredPower"] as? Int == -59)
    #expect((last["address"] as? String)?.hasPrefix("C0:DE:01:") == true)
    let rssi = try #require(last["rssi"] as? Int)
    #expect((-53 ... -49).contains(rssi))
    let smoothed = try #require(last["smoothedRSSI"] as? Double)
    #expect((-53 ... -49).contains(smoothed))
    // −51 dBm against −59 dBm at 1 m: about 0.4 m in free space.
    let distance = try #require(last["distance"] as? Double)
    #expect((0.2...0.8).contains(distance))
    #expect((last["accuracy"] as? Double ?? 0) > 0)
  }

  @Test(
    "without --json: a line when a beacon is first heard, the table at the end",
    .requires(.bluezDouble))
  func readableOutput() async throws {
    let address = try DoubleBus.address()
    let beacon = try await SimulatedBeacon.start(
      SampleBeacons.eddystoneUID, on: "hci2", bus: .address(address))
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = try await CLIEnvironment.run(
      [
        "beacons", "scan", "--adapter", "hci0", "--bus-address", address, "--seconds", "2",
        "--low-power",
      ], environment: environment)
    await beacon.stop()
    #expect(result.status == 0, "\(result.err)")
    let lines = result.out.split(separator: "\n")
    let found = lines.filter { $0.hasPrefix("found ") }
    #expect(found.count == 1, "\(result.out)")
    #expect(found.first?.contains("eddystone-uid") == true)
    #expect(found.first?.contains("namespace=00112233445566778899") == true)
    #expect(lines.contains { $0.hasPrefix("ADDRESS") && $0.contains("DISTANCE") })
    #expect(lines.last?.contains("instance=aabbccddeeff") == true, "\(result.out)")
    #expect(lines.last?.contains("m") == true)
  }

  @Test("a clear error when BlueZ is not on the bus", .requires(.bluezDouble))
  func noBlueZ() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    // The private session bus has no bluetoothd.
    guard let session = ProcessInfo.processInfo.environment["NEARBY_TEST_DBUS_SESSION_ADDRESS"]
    else { throw DoubleMissing() }
    let result = try await CLIEnvironment.run(
      ["beacons", "scan", "--bus-address", session, "--seconds", "1"], environment: environment)
    #expect(result.status == 1)
    #expect(result.err.contains("bluetoothd"), "\(result.err)")
  }
}
