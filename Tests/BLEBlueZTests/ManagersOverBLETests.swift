import BLEBlueZ
import BlueZTestSupport
import Core
import DBus
import Foundation
import Logging
import MediumTestKit
import Resolution
import Strategy
import Testing
import TestSupport
import Tokens
import NearbyTesting
import BeaconFrames

extension BlueZDoubleTests {
  /// Two managers, each with only a BlueZ medium on its own adapter of the double, and one
  /// in-process resolver: each finds the other's message over BLE.
  @Test(.requires(.bluezDouble)) func twoManagersFindEachOtherOverBLE() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let resolver = try InProcessResolver(configuration: .init(lostAfter: .seconds(30)))
    let found = Watched<[String: [String]]>([:])
    let power = Watched<[Bool]>([])
    func manager(_ adapter: String) async throws -> MessageManager {
      var logger = Logger(label: "test.manager.\(adapter)")
      logger.logLevel = .warning
      var configuration = BlueZConfiguration(bus: control.bus, adapter: adapter)
      configuration.scanWatchdog = .seconds(5)
      return try await MessageManager(
        apiKey: "ble-test",
        configuration: .init(
          resolver: .inProcess(resolver), mediums: [.bluez(configuration)], logger: logger,
          bluetoothPowerErrorHandler: { hasError in power.withLock { $0.append(hasError) } }))
    }
    let alice = try await manager("hci0")
    let bob = try await manager("hci1")
    let ble = Strategy(mediums: .ble)
    var handles: [AnyObject] = []
    for (manager, name) in [(alice, "alice"), (bob, "bob")] {
      handles.append(
        try await manager.publish(Message(text: "hello from \(name)", type: "greeting")) {
          $0.strategy = ble
        })
      handles.append(
        try await manager.subscribe(
          onFound: { message in found.withLock { $0[name, default: []].append(message.text ?? "") }
          },
          configure: {
            $0.type = "greeting"
            $0.strategy = ble
          }))
    }
    #expect(
      await found.until(timeout: .seconds(10)) {
        $0["alice"] == ["hello from bob"] && $0["bob"] == ["hello from alice"]
      })
    // Both adverts reached BlueZ, and both adapters scan.
    #expect(try await control.adverts("hci0").count == 1)
    #expect(try await control.adverts("hci1").count == 1)
    #expect(try await control.discoveryClients("hci1").count == 1)
    // Power off → the power error handler says true; on → false.
    try await control.setPowered("hci0", false)
    #expect(await power.until { $0.last == true })
    try await control.setPowered("hci0", true)
    #expect(await power.until { $0 == [true, false] })
    withExtendedLifetime(handles) {}
    await alice.shutdown()
    await bob.shutdown()
  }

  /// `nearby ble scan --json` prints the advert another medium transmits, with our token.
  @Test(.requires(.bluezDouble)) func bleScanPrintsAdvertisements() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    guard case .address(let address) = control.bus else { return }
    let speaker = try await control.medium("hci0")
    let token = Token.random()
    try await speaker.transmit(token)
    let (status, output) = try await runNearby([
      "ble", "scan", "--bus-address", address, "--adapter", "hci2", "--duration", "1", "--json",
    ])
    await speaker.shutdown()
    #expect(status == 0, "\(output)")
    let lines = output.split(separator: "\n").filter { $0.contains(token.description) }
    #expect(!lines.isEmpty, "\(output)")
    #expect(lines.first?.contains(BLETokenFrame.serviceUUID) == true)
    let (statusStatus, statusOutput) = try await runNearby([
      "ble", "status", "--bus-address", address, "--json",
    ])
    #expect(statusStatus == 0)
    #expect(statusOutput.contains("\"status\":\"ready\""))
    #expect(statusOutput.contains("\"name\":\"hci2\""))
  }
}

/// Runs the built `nearby` (next to the test bundle) on a thread of its own.
func runNearby(_ arguments: [String]) async throws -> (Int32, String) {
  let result = try await ChildProcess.run(
    try ChildProcess.built("nearby"), arguments, combineOutput: true)
  return (result.status, result.outText)
}
