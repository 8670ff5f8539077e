import Foundation
import Testing
import Tokens
import ResolverWire
import BeaconFrames

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `nearby beacons diagnostics`, `attachments` and `detach` against a `nearby server` this
/// test starts (issue 18).
@Suite("Beacon diagnostics and attachments from the CLI")
struct DiagnosticsCommandTests {
  let name = "eddystone!00112233445566778899aabbccddeeff"

  /// What an app's manager sends: an observation of the beacon with a TLM frame it heard.
  func forward(_ server: CLIServer, millivolts: UInt16) async throws {
    let tlm = EddystoneTLM(
      batteryMillivolts: millivolts, temperatureCelsius: 20, advertisingCount: 7,
      uptimeDeciseconds: 100)
    var request = URLRequest(url: URL(string: server.url + "/v1/beaconinfo:getforobserved")!)
    request.httpMethod = "POST"
    request.setValue(server.key, forHTTPHeaderField: ResolverContract.apiKeyHeader)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = Data(
      """
      {"observations": [{"advertisedId": {"type": "eddystone",
        "id": "00112233445566778899aabbccddeeff"},
        "telemetry": "\(Data(tlm.frame).base64EncodedString())"}], "namespacedTypes": ["*"]}
      """.utf8)
    let (_, response) = try await URLSession.shared.data(for: request)
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
  }

  @Test func diagnosticsOfOneBeaconAndByAlert() async throws {
    let server = try await CLIServer.start()
    defer { server.stop() }
    let registered = try await server.run(
      ["beacons", "register", "--uid", "00112233445566778899:aabbccddeeff"] + server.common)
    #expect(registered.status == 0, "\(registered.err)")

    let fresh = try await server.run(["beacons", "diagnostics", name] + server.common)
    #expect(fresh.status == 0, "\(fresh.err)")
    #expect(fresh.out.hasPrefix(name), "\(fresh.out)")
    #expect(fresh.out.contains("last observed never"), "\(fresh.out)")
    #expect(fresh.out.contains("no alert"), "\(fresh.out)")

    try await forward(server, millivolts: 2100)
    let one = try await server.run(["beacons", "diagnostics", name, "--json"] + server.common)
    #expect(one.status == 0, "\(one.err)")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(one.out.utf8)) as? [String: Any])
    #expect(object["batteryMillivolts"] as? Int == 2100)
    #expect(object["alerts"] as? [String] == ["lowBattery"])

    let low = try await server.run(
      ["beacons", "diagnostics", "--alert", "lowBattery"] + server.common)
    #expect(low.status == 0, "\(low.err)")
    #expect(low.out.hasPrefix("\(name)\tbattery 2100 mV\t20.0 °C"), "\(low.out)")
    #expect(low.out.contains("alerts: lowBattery"), "\(low.out)")
    let idle = try await server.run(
      ["beacons", "diagnostics", "--alert", "lowActivity"] + server.common)
    #expect(idle.status == 0, "\(idle.err)")
    #expect(idle.out.isEmpty, "\(idle.out)")

    // Usage errors before the server is asked; an unknown beacon is the server's 404.
    #expect(try await server.run(["beacons", "diagnostics", "--alert", "sleepy"]).status == 64)
    #expect(
      try await server.run(["beacons", "diagnostics", name, "--alert", "lowBattery"]).status == 64)
    let unknown = try await server.run(
      ["beacons", "diagnostics", "eddystone!000000000000000000000000000000ff"] + server.common)
    #expect(unknown.status == 1)
    #expect(unknown.err.contains("no beacon"), "\(unknown.err)")
  }

  @Test func attachmentsByTypeAndDetach() async throws {
    let server = try await CLIServer.start()
    defer { server.stop() }
    let registered = try await server.run(
      ["beacons", "register", "--uid", "00112233445566778899:aabbccddeeff"] + server.common)
    #expect(registered.status == 0, "\(registered.err)")
    for (type, data) in [("cafe/menu", "soup"), ("cafe/price", "3 EUR"), ("shop/offer", "10%")] {
      let attached = try await server.run(
        ["beacons", "attach", name, "--type", type, "--data", data] + server.common)
      #expect(attached.status == 0, "\(attached.err)")
    }
    let cafe = try await server.run(
      ["beacons", "attachments", name, "--type", "cafe/*"] + server.common)
    #expect(cafe.status == 0, "\(cafe.err)")
    let types = cafe.out.split(separator: "\n").map { $0.split(separator: "\t")[1] }
    #expect(types == ["cafe/menu", "cafe/price"], "\(cafe.out)")

    let removed = try await server.run(
      ["beacons", "detach", name, "--type", "cafe/menu"] + server.common)
    #expect(removed.status == 0, "\(removed.err)")
    #expect(removed.out == "1 removed")
    #expect(try await server.run(["beacons", "detach", name] + server.common).status == 64)
    let unconfirmed = try await server.run(["beacons", "detach", name, "--all"] + server.common)
    #expect(unconfirmed.status == 64)
    #expect(unconfirmed.err.contains("--yes"), "\(unconfirmed.err)")
    let all = try await server.run(
      ["beacons", "detach", name, "--all", "--yes", "--json"] + server.common)
    #expect(all.out == #"{"deletedCount":2}"#, "\(all.out) \(all.err)")
    let left = try await server.run(["beacons", "attachments", name] + server.common)
    #expect(left.status == 0 && left.out.isEmpty, "\(left.out)")
  }
}
