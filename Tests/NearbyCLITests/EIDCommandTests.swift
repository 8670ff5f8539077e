import Foundation
import Resolution
import ServerStorage
import Testing
import Tokens

/// Eddystone-EID by key exchange from the CLI (issue 18): `nearby beacons eid-params` and
/// `register --eid-beacon-key`, against a `nearby server` this test starts.
@Suite("Eddystone-EID key exchange from the CLI")
struct EIDCommandTests {
  @Test func registerByKeyExchange() async throws {
    let server = try await CLIServer.start()
    defer { server.stop() }
    let params = try await server.run(["beacons", "eid-params", "--json"] + server.common)
    #expect(params.status == 0, "\(params.err)")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(params.out.utf8)) as? [String: Any])
    let serviceText = try #require(object["serviceEcdhPublicKey"] as? String)
    let servicePublic = Array(try #require(Data(base64Encoded: serviceText)))
    let text = try await server.run(["beacons", "eid-params"] + server.common)
    #expect(text.out.contains("service public key\t\(Hex.encode(servicePublic))"), "\(text.out)")
    #expect(text.out.contains("rotation exponents\t6 to 15"), "\(text.out)")

    // The beacon's side, as a provisioning tool computes it: its key pair, the identity key
    // from the server's public key, and the id it broadcasts now.
    let beacon = EIDKeyExchange.newServiceKey()
    let identityKey = try EIDKeyExchange.identityKey(
      beaconPrivateKey: beacon.privateKey, servicePublicKey: servicePublic)
    let eid = Hex.encode(
      try EddystoneEIDGenerator(identityKey: identityKey, rotationExponent: 10)
        .eid(beaconTime: 65280))
    let options = [
      "beacons", "register", "--eid-beacon-key", Hex.encode(beacon.publicKey), "--eid-exponent",
      "10", "--eid-clock", "65280",
    ]
    let registered = try await server.run(options + ["--eid", eid] + server.common)
    #expect(registered.status == 0, "\(registered.err)")
    #expect(registered.out == "eddystone-eid!\(eid)")

    // Another beacon key does not produce that id: the server says so.
    let other = EIDKeyExchange.newServiceKey()
    var wrong = options
    wrong[3] = Hex.encode(other.publicKey)
    let refused = try await server.run(wrong + ["--eid", eid] + server.common)
    #expect(refused.status == 1)
    #expect(refused.err.contains("identity key"), "\(refused.err)")
    // Checked before asking: a key that is not 32 bytes, both methods at once.
    var short = options
    short[3] = "0011"
    #expect(try await server.run(short + ["--eid", eid]).status == 64)
    #expect(
      try await server.run(
        options + ["--eid", eid, "--eid-key", "000102030405060708090a0b0c0d0e0f"]
      ).status == 64)
  }
}
