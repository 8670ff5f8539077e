import Foundation
import Testing

/// Bad arguments and missing pieces end with a message that names the fix and a documented
/// exit code; nothing here needs a server.
@Suite("nearby publish and subscribe arguments")
struct ArgumentTests {
  func run(_ arguments: [String]) async throws -> (status: Int32, out: String, err: String) {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await CLIEnvironment.run(arguments, environment: environment)
  }

  @Test(arguments: [
    (["publish"], "exactly one"),
    (["publish", "hi", "--file", "/etc/hostname"], "exactly one"),
    (["publish", "hi", "--mediums", "wifi"], "unknown medium \"wifi\""),
    (["publish", "hi", "--mediums", ""], "at least one"),
    (["publish", "hi", "--mode", "shout"], "unknown mode \"shout\""),
    (["publish", "hi", "--ttl", "forever"], "'infinite'"),
    (["publish", "hi", "--ttl", "100000"], "86400"),
    (["publish", "hi", "--namespace", "bad space"], "--namespace"),
    (["publish", "hi", "--type", String(repeating: "t", count: 33)], "--type"),
    (["publish", "hi", "--server", "ftp://x"], "http(s) URL"),
    (
      [
        "publish", "hi", "--mediums", "lan", "--lan-interface", "lo", "--server",
        "http://192.0.2.1:7171", "--api-key", "nk_k",
      ], "refusing plain http://"
    ),
    (["publish", "hi", "--lan-port", "0"], "--lan-port"),
    (["publish", "hi", "--lan-group", "10.0.0.1"], "multicast address"),
    (["publish", "hi", "--background"], "BLE-only"),
    (["subscribe", "--background"], "BLE-only"),
    (["subscribe", "--log-level", "loud"], "--log-level"),
    (["subscribe", "--beacons", "--mediums", "audio"], "BLE only"),
    (["subscribe", "--no-ibeacons"], "need --beacons"),
    (["subscribe", "--beacons", "--beacon-filter", "uid:1234"], "20 hex digits"),
    (["subscribe", "--beacons", "--beacon-filter", "eddystone:x"], "uid:NAMESPACE"),
    (["subscribe", "--beacons", "--beacon-filter", "ibeacon:not-a-uuid"], "proximity UUID"),
    (["publish", "hi", "--ble-adapter", ""], "--ble-adapter must name"),
    (["publish", "hi", "--ble-adapter", "eth0"], "such as hci0"),
    (["subscribe", "--ble-adapter", "hci+1"], "such as hci0"),
    (["subscribe", "--ble-adapter", "/org/bluez/hci0"], "such as hci0"),
    (["subscribe", "--mediums", "lan", "--ble-adapter", "hci0"], "add ble to --mediums"),
    (
      ["publish", "hi", "--background", "--mediums", "ble", "--ble-adapter", "hci0"], "not recorded"
    ),
    (["subscribe", "--background", "--mediums", "ble", "--ble-adapter", "hci0"], "not recorded"),
    (["publish", "hi", "--resolver", "server"], "--resolver server needs a server: pass --server"),
    (
      ["publish", "hi", "--resolver", "peer", "--server", "http://127.0.0.1:9"],
      "drop --server to use --resolver peer"
    ),
    (["subscribe", "--beacons", "--resolver", "peer"], "use --resolver local or --server URL"),
    (["publish", "hi", "--resolver", "local", "--lost-after", "5"], "is for --resolver peer"),
    (["publish", "hi", "--lost-after", "1"], "--lost-after takes seconds from 2"),
    (["publish", "hi", "--peer-group-port", "0"], "--peer-group-port must be between"),
    (["publish", "hi", "--resolver", "cloud"], "--resolver"),
  ])
  func badArgumentsExit64(_ arguments: [String], _ message: String) async throws {
    let result = try await run(arguments)
    #expect(result.status == 64, "\(result)")
    #expect(result.err.contains(message), "\(result.err)")
  }

  @Test func subscribeBackgroundRecordsADescriptor() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let recorded = try await CLIEnvironment.run(
      ["subscribe", "--background", "--mediums", "ble", "--type", "offer", "--app", "t.app"],
      environment: environment)
    #expect(recorded.status == 0, "\(recorded)")
    let status = try await CLIEnvironment.run(
      ["background", "status", "--app", "t.app", "--json"], environment: environment)
    #expect(status.status == 0, "\(status)")
    #expect(status.out.contains("\"offer\""), "\(status.out)")
  }

  @Test func subscribeBackgroundBeaconsRecordsTheBeaconStrategy() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let recorded = try await CLIEnvironment.run(
      [
        "subscribe", "--background", "--beacons", "--no-ibeacons", "--type", "menu", "--app", "t.b",
      ],
      environment: environment)
    #expect(recorded.status == 0, "\(recorded)")
    let status = try await CLIEnvironment.run(
      ["background", "status", "--app", "t.b", "--json"], environment: environment)
    #expect(status.status == 0, "\(status)")
    #expect(status.out.contains("\"includeIBeacons\":false"), "\(status.out)")
    #expect(status.out.contains("\"allowInBackground\":true"), "\(status.out)")
  }

  @Test func permissionWithoutAppUsesPublishsDefaultApp() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    let granted = try await CLIEnvironment.run(["permission", "grant"], environment: environment)
    #expect(granted.status == 0, "\(granted)")
    let status = try await CLIEnvironment.run(
      ["permission", "status", "--json"], environment: environment)
    #expect(status.status == 0, "\(status)")
    #expect(status.out.contains("\"app\":\"nearby\""), "\(status.out)")
    #expect(status.out.contains("\"permission\":\"granted\""), "\(status.out)")
    // The same store `nearby publish --background` (default --app nearby) records into.
    let named = try await CLIEnvironment.run(
      ["permission", "status", "--app", "nearby", "--json"], environment: environment)
    #expect(named.out.contains("\"permission\":\"granted\""), "\(named.out)")
    let revoked = try await CLIEnvironment.run(["permission", "revoke"], environment: environment)
    #expect(revoked.status == 0, "\(revoked)")
  }

  @Test func aTooLargeFileIsRefusedNamingTheLimit() async throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "nearby-big-\(UUID().uuidString)")
    try Data(count: 102_401).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let result = try await run(["publish", "--file", file.path, "--mediums", "lan"])
    #expect(result.status == 64)
    #expect(result.err.contains("102400"), "\(result.err)")
  }

  @Test func aMediumThatIsNotAvailableIsAnErrorWithTheReason() async throws {
    let result = try await run(["subscribe", "--mediums", "audio"])
    #expect(result.status == 69)
    #expect(result.err.contains("no PulseAudio server"), "\(result.err)")
  }

  @Test func aMissingInterfaceIsNamedWithTheOnesThatExist() async throws {
    let result = try await run(["subscribe", "--mediums", "lan", "--lan-interface", "nosuch0"])
    #expect(result.status == 69)
    #expect(result.err.contains("nosuch0") && result.err.contains("lo"), "\(result.err)")
  }

  /// `--ble-adapter` naming an adapter that is not there: 69, naming it and the adapters that
  /// are (this host's /sys/class/bluetooth; none on CI hosts, hci0 and hci1 in the BlueZ VM,
  /// where Tools/scripts/bluez-vm/check-nearby-pubsub.sh checks the list).
  @Test(arguments: [["--mediums", "ble"], []])
  func aMissingBLEAdapterIsNamedWithTheOnesThatExist(_ mediums: [String]) async throws {
    let result = try await run(["subscribe", "--ble-adapter", "hci97"] + mediums)
    #expect(result.status == 69, "\(result)")
    #expect(result.err.contains("no Bluetooth adapter \"hci97\"; adapters here: "), "\(result.err)")
    let present =
      ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth")) ?? [])
      .filter { $0.hasPrefix("hci") && !$0.contains(":") }
    for adapter in present { #expect(result.err.contains(adapter), "\(result.err)") }
    if present.isEmpty { #expect(result.err.contains("adapters here: none"), "\(result.err)") }
  }

  @Test func anUnreachableServerIsReported() async throws {
    let result = try await run([
      "subscribe", "--mediums", "lan", "--lan-interface", "lo", "--server",
      "http://127.0.0.1:9",
    ])
    #expect(result.status == 69)
    #expect(result.err.contains("does not answer"), "\(result.err)")
  }

  @Test(arguments: ["publish", "subscribe"])
  func helpHasExamplesAndExitCodes(_ command: String) async throws {
    let result = try await run([command, "--help"])
    #expect(result.status == 0)
    #expect(result.out.contains("Examples:"))
    #expect(result.out.contains("Exit codes:"))
    #expect(result.out.contains("--lan-interface"))
    #expect(result.out.contains("--ble-adapter <hciN>"), "\(result.out)")
    #expect(result.out.contains("--resolver <peer|server|local>"), "\(result.out)")
  }

  /// A bare `publish` uses peer resolution: no server is started or asked, and the start
  /// note says so, with the open default key. Here it stops at once: an unknown interface.
  @Test func aBarePublishUsesPeerResolutionAndNamesTheInterfaceItLacks() async throws {
    let result = try await run(["publish", "hi", "--lan-interface", "nosuch0"])
    #expect(result.status == 69, "\(result)")
    #expect(result.err.contains("peer resolution needs the LAN"), "\(result.err)")
    #expect(result.err.contains("interfaces here: lo"), "\(result.err)")
    #expect(!result.err.contains("started a local resolver"), "\(result.err)")
  }

  @Test func nearbyServerInTheEnvironmentChoosesTheServer() async throws {
    let (folder, environment, _) = try CLIEnvironment.make()
    defer { try? FileManager.default.removeItem(at: folder) }
    var withServer = environment
    withServer["NEARBY_SERVER"] = "http://127.0.0.1:9"
    let result = try await CLIEnvironment.run(
      ["subscribe", "--mediums", "lan", "--lan-interface", "lo"], environment: withServer)
    #expect(result.status == 69, "\(result)")
    #expect(result.err.contains("http://127.0.0.1:9 does not answer"), "\(result.err)")
    // --resolver peer wins over the variable (a default, not an order).
    let peer = try await CLIEnvironment.run(
      ["subscribe", "--mediums", "lan", "--lan-interface", "nosuch0", "--resolver", "peer"],
      environment: withServer)
    #expect(peer.err.contains("peer resolution needs the LAN"), "\(peer.err)")
  }
}
