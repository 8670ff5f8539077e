import Foundation
import Testing

/// `nearby beacons register/attach/list/delete` against a `nearby server` this test starts.
@Suite("Beacon administration from the CLI")
struct BeaconAdminTests {
  @Test func registerAttachListAndDelete() async throws {
    let server = try await CLIServer.start()
    defer { server.stop() }
    let (environment, url, common) = (server.environment, server.url, server.common)

    // An EID beacon: key 00…0f, K = 10, clock 65280 broadcasts 3439c83a6564bfdf
    // (computed independently; see ResolutionTests' EddystoneEIDTests).
    let identityKey = "000102030405060708090a0b0c0d0e0f"
    let registered = try await CLIEnvironment.run(
      [
        "beacons", "register", "--eid-key", identityKey, "--eid-exponent", "10", "--eid-clock",
        "65280", "--eid", "3439c83a6564bfdf", "--description", "door", "--json",
      ] + common,
      environment: environment)
    #expect(registered.status == 0, "\(registered.err)")
    let beacon = try #require(
      try JSONSerialization.jsonObject(with: Data(registered.out.utf8)) as? [String: Any])
    #expect(beacon["beaconName"] as? String == "eddystone-eid!3439c83a6564bfdf")
    #expect(!registered.out.contains(identityKey))

    let wrong = try await CLIEnvironment.run(
      [
        "beacons", "register", "--eid-key", identityKey, "--eid-exponent", "9", "--eid",
        "3439c83a6564bfdf",
      ] + common, environment: environment)
    #expect(wrong.status == 1)
    #expect(wrong.err.contains("identity key"), "\(wrong.err)")

    let uid = try await CLIEnvironment.run(
      ["beacons", "register", "--uid", "00112233445566778899:aabbccddeeff"] + common,
      environment: environment)
    #expect(uid.status == 0, "\(uid.err)")
    #expect(uid.out == "eddystone!00112233445566778899aabbccddeeff")

    let ibeacon = try await CLIEnvironment.run(
      ["beacons", "register", "--ibeacon", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:258"]
        + common, environment: environment)
    #expect(ibeacon.out == "ibeacon!e2c56db5dffb48d2b060d0f5a71096e000010102", "\(ibeacon.err)")
    let altbeacon = try await CLIEnvironment.run(
      ["beacons", "register", "--altbeacon", String(repeating: "0f", count: 20)] + common,
      environment: environment)
    #expect(altbeacon.out == "altbeacon!" + String(repeating: "0f", count: 20), "\(altbeacon.err)")
    let two = try await CLIEnvironment.run(
      ["beacons", "register", "--altbeacon", "00", "--uid", "00:00"] + common,
      environment: environment)
    #expect(two.status == 64)
    #expect(two.err.contains("exactly one"), "\(two.err)")
    let shortKey = try await CLIEnvironment.run(
      [
        "beacons", "register", "--eid-key", "0011", "--eid-exponent", "10", "--eid",
        "3439c83a6564bfdf",
      ] + common, environment: environment)
    #expect(shortKey.status == 64)
    #expect(shortKey.err.contains("--eid-key is 16 bytes"), "\(shortKey.err)")

    let attached = try await CLIEnvironment.run(
      [
        "beacons", "attach", "eddystone-eid!3439c83a6564bfdf", "--type", "cafe/menu", "--data",
        "soup of the day", "--json",
      ] + common, environment: environment)
    #expect(attached.status == 0, "\(attached.err)")
    #expect(attached.out.contains("cafe/menu"))

    let tooBig = try await CLIEnvironment.run(
      [
        "beacons", "attach", "eddystone-eid!3439c83a6564bfdf", "--type", "cafe/menu",
        "--data", String(repeating: "x", count: 1025),
      ] + common, environment: environment)
    #expect(tooBig.status != 0)
    #expect(tooBig.err.contains("1024"), "\(tooBig.err)")

    let listed = try await CLIEnvironment.run(
      ["beacons", "list", "--json"] + common, environment: environment)
    #expect(listed.status == 0, "\(listed.err)")
    let beacons = listed.out.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
    #expect(
      beacons.map { $0["beaconName"] as? String } == [
        "eddystone-eid!3439c83a6564bfdf", "eddystone!00112233445566778899aabbccddeeff",
        "ibeacon!e2c56db5dffb48d2b060d0f5a71096e000010102",
        "altbeacon!" + String(repeating: "0f", count: 20),
      ])
    #expect((beacons.first?["attachments"] as? [Any])?.count == 1)
    #expect(!listed.out.lowercased().contains(identityKey))

    let text = try await CLIEnvironment.run(["beacons", "list"] + common, environment: environment)
    #expect(text.out.contains("eid rotation exponent 10"))

    let deleted = try await CLIEnvironment.run(
      ["beacons", "delete", "eddystone!00112233445566778899aabbccddeeff"] + common,
      environment: environment)
    #expect(deleted.status == 0, "\(deleted.err)")
    let again = try await CLIEnvironment.run(
      ["beacons", "delete", "eddystone!00112233445566778899aabbccddeeff"] + common,
      environment: environment)
    #expect(again.status == 1)
    #expect(again.err.contains("no beacon"), "\(again.err)")

    // A client key (what apps carry) lists beacons no more than it changes them; the answer
    // names the fix. The first-start key above is an admin key.
    let created = try await CLIEnvironment.run(
      ["server", "keys", "create", "--project", "default", "--role", "client", "--json"],
      environment: environment)
    #expect(created.status == 0, "\(created.err)")
    let clientKey = try #require(
      (try JSONSerialization.jsonObject(with: Data(created.out.utf8)) as? [String: Any])?["key"]
        as? String)
    let refused = try await CLIEnvironment.run(
      ["beacons", "list", "--server", url, "--api-key", clientKey], environment: environment)
    #expect(refused.status == 77)  // EX_NOPERM, as for a refused key
    #expect(refused.err.contains("--role admin"), "\(refused.err)")
    let keys = try await CLIEnvironment.run(
      ["server", "keys", "list", "--project", "default"], environment: environment)
    #expect(keys.out.contains("\tadmin\t") && keys.out.contains("\tclient\t"), "\(keys.out)")
  }
}
