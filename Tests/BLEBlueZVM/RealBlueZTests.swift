import BLEBlueZ
import DBus
import Foundation
import Logging
import MediumTestKit
import TestSupport
import Testing
import Tokens
import NearbyTesting

/// MediumConformance for `.bluez()`, and one adapter both advertising and scanning, against the
/// REAL bluetoothd, in the virtual machine of
/// `Tools/scripts/bluez-vm/run.sh` (hci0 and hci1 from `btvirt`, bluetoothd on the VM's system
/// bus). Not run by `Tools/scripts/test.sh`'s loop over `Tests/*Tests` (this folder's name does
/// not end in `Tests`): the test command runs every test of this target inside the VM through
/// `Tools/scripts/bluez-vm/vm-suite.sh` (one at a time, `--no-parallel`), and
/// `Tools/scripts/bluez-vm/conformance.sh` runs them by hand. Outside the VM every test fails,
/// naming the rig, instead of skipping.
///
/// One serialized suite (Swift Testing runs suites in parallel unless told not to): both
/// adapters and the one bluetoothd are shared by every test.
@Suite(.serialized, .requires(.bluezVM)) struct RealBlueZTests {
  @Test(arguments: MediumConformance.Check.allCases)
  func conformance(_ check: MediumConformance.Check) async throws {
    try RealBlueZ.requireVM()
    // Timings for a TCG guest on a busy 2-core machine: bluetoothd answers in tens of ms, but
    // the guest runs everything 10-50 times slower than the host. The settle after a stop is
    // how long bluetoothd keeps a peer that stopped: the medium holds a device present (and
    // re-reports it) until bluetoothd lets it go, since bluetoothd is silent about a still
    // one (findings item 10): under the pattern monitor these mediums use, until its last
    // report (the monitor's DeviceFound) is `monitorLostAfter` (10 s) old (item F).
    try await MediumConformance(
      settle: .seconds(13), quiet: .seconds(3),
      makePair: {
        MediumConformance.Pair(
          first: try await RealBlueZ.medium("hci0"), second: try await RealBlueZ.medium("hci1"))
      }
    ).run(check)
  }

  /// One adapter that both advertises and scans, as a manager that publishes and subscribes
  /// does, advertising first (the conformance check ignoresOwnToken scans first: the order
  /// where the medium has to pause its scan, docs/bluez-vm-findings.md item D).
  @Test func advertisingThenScanningOnOneAdapterKeepsTheAdvertHeard() async throws {
    try RealBlueZ.requireVM()
    let both = try await RealBlueZ.medium("hci0")
    let peer = try await RealBlueZ.medium("hci1")
    let heard = StreamRecorder(peer.sightings)
    let start = ContinuousClock.now
    let token = Token.random()
    try await peer.startScanning()
    try await both.transmit(token)
    try await both.startScanning()
    let sighting = await heard.first(since: start, timeout: .seconds(20)) { $0.token == token }
    #expect(sighting != nil, "hci1 did not hear the token hci0 advertises while it also scans")
    await both.shutdown()
    await peer.shutdown()
  }

  /// A token rotation on an adapter that advertises and scans (a manager that publishes and
  /// subscribes, every 2 minutes): the medium replaces its advert with a new one, which goes
  /// out from a new random address, while its own scan runs (docs/bluez-vm-findings.md item
  /// D). The peer on hci1 must hear the new token.
  @Test func rotationWhileScanningIsHeard() async throws {
    try RealBlueZ.requireVM()
    let both = try await RealBlueZ.medium("hci0")
    let peer = try await RealBlueZ.medium("hci1")
    let heard = StreamRecorder(peer.sightings)
    let old = Token.random()
    try await peer.startScanning()
    try await both.transmit(old)
    try await both.startScanning()
    let first = await heard.first(timeout: .seconds(20)) { $0.token == old }
    #expect(first != nil, "hci1 did not hear the first token of hci0")
    let new = Token.random()
    let rotated = ContinuousClock.now
    try await both.transmit(new)
    let sighting = await heard.first(since: rotated, timeout: .seconds(20)) { $0.token == new }
    #expect(sighting != nil, "hci1 did not hear the token hci0 rotated to while it scans")
    await both.shutdown()
    await peer.shutdown()
  }
}

enum RealBlueZ {
  struct NotInVM: Error, CustomStringConvertible {
    var description: String {
      "these tests need the real bluetoothd of the BlueZ VM: run Tools/scripts/bluez-vm/conformance.sh"
    }
  }

  /// Throws unless the test runs inside the VM's stack (guest.sh sets NEARBY_BLUEZ_VM=1).
  static func requireVM() throws {
    guard ProcessInfo.processInfo.environment["NEARBY_BLUEZ_VM"] == "1" else { throw NotInVM() }
  }

  static func medium(_ adapter: String) async throws -> BlueZMedium {
    var configuration = BlueZConfiguration(bus: .system, adapter: adapter)
    configuration.scanWatchdog = .seconds(30)
    var logger = Logger(label: "vm.bluez.\(adapter)")
    // Info: the medium says when it pauses its scan to register an advert (findings item D).
    logger.logLevel = .info
    return try await BlueZMedium(configuration: configuration, logger: logger)
  }
}
