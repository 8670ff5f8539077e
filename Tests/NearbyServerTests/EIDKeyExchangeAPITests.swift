import Foundation
import NIOHTTP1
import Resolution
import ServerStorage
import Testing
import TestSupport
import Tokens
import ResolverWire

/// Registering an Eddystone-EID beacon by key exchange over HTTP (issue 18): the beacon's
/// side derives its identity key from the server's public key (`GET /v1/eidparams`), the
/// server derives the same one from the beacon's public key, and the EID resolves.
@Suite("Eddystone-EID by key exchange")
struct EIDKeyExchangeAPITests {
  typealias Engine = HostileInputTests.Engine

  func call(
    _ method: HTTPMethod, _ server: ServerHarness, _ path: String, body: String? = nil
  ) async throws -> RawAnswer {
    try await rawRequest(
      method, server.url, path: path, headers: [ResolverContract.apiKeyHeader: server.apiKey],
      body: body)
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func aBeaconRegisteredByKeyExchangeResolves(_ engine: Engine) async throws {
    let server = try await HostileInputTests().start(engine)
    try await withShutdown(server) { server in
      let params = try await call(.GET, server, "/v1/eidparams")
      #expect(params.status == 200, "\(params.body)")
      let object = try #require(
        try JSONSerialization.jsonObject(with: Data(params.body.utf8)) as? [String: Any])
      let serviceText = try #require(object["serviceEcdhPublicKey"] as? String)
      #expect(object["minRotationPeriodExponent"] as? Int == 6)
      #expect(object["maxRotationPeriodExponent"] as? Int == 15)
      let servicePublic = try #require(Data(base64Encoded: serviceText)).map { $0 }

      // The beacon's side: its own key pair, the identity key, the EID it broadcasts now.
      let beacon = EIDKeyExchange.newServiceKey()
      let identityKey = try EIDKeyExchange.identityKey(
        beaconPrivateKey: beacon.privateKey, servicePublicKey: servicePublic)
      let clock: UInt32 = 65280
      let eid = Hex.encode(
        try EddystoneEIDGenerator(identityKey: identityKey, rotationExponent: 10)
          .eid(beaconTime: clock))
      let beaconText = Data(beacon.publicKey).base64EncodedString()
      func register(_ eidBody: String) async throws -> RawAnswer {
        try await call(
          .POST, server, "/v1/beacons",
          body: """
            {"advertisedId": {"type": "eddystone-eid", "id": "\(eid)"}, "eid": \(eidBody),
             "attachments": [{"namespacedType": "cafe/menu", "data": "c291cA=="}]}
            """)
      }
      // Refused: another service key, both methods at once, a low-order key.
      let otherService = Data(EIDKeyExchange.newServiceKey().publicKey).base64EncodedString()
      let wrongService = try await register(
        #"{"beaconEcdhPublicKey": "\#(beaconText)", "serviceEcdhPublicKey": "\#(otherService)", "rotationExponent": 10, "clockValue": \#(clock)}"#
      )
      #expect(wrongService.status == 400)
      #expect(
        wrongService.json["message"]?.contains("/v1/eidparams") == true, "\(wrongService.body)")
      let both = try await register(
        #"{"identityKey": "\#(Hex.encode(identityKey))", "beaconEcdhPublicKey": "\#(beaconText)", "serviceEcdhPublicKey": "\#(serviceText)", "rotationExponent": 10, "clockValue": \#(clock)}"#
      )
      #expect(both.status == 400)
      let zero = Data(count: 32).base64EncodedString()
      let lowOrder = try await register(
        #"{"beaconEcdhPublicKey": "\#(zero)", "serviceEcdhPublicKey": "\#(serviceText)", "rotationExponent": 10, "clockValue": \#(clock)}"#
      )
      #expect(lowOrder.status == 400, "\(lowOrder.body)")
      #expect(lowOrder.json["message"]?.contains("zero shared secret") == true, "\(lowOrder.body)")

      let registered = try await register(
        #"{"beaconEcdhPublicKey": "\#(beaconText)", "serviceEcdhPublicKey": "\#(serviceText)", "rotationExponent": 10, "clockValue": \#(clock)}"#
      )
      #expect(registered.status == 201, "\(registered.body)")
      #expect(!registered.body.contains(Hex.encode(identityKey)))
      let observed = try await call(
        .POST, server, "/v1/beaconinfo:getforobserved",
        body:
          #"{"observations": [{"advertisedId": {"type": "eddystone-eid", "id": "\#(eid)"}}], "namespacedTypes": ["*"]}"#
      )
      let answer = observed.body.replacingOccurrences(of: "\\/", with: "/")
      #expect(answer.contains("cafe/menu"), "\(observed.body)")
      #expect(answer.contains("eddystone-eid!\(eid)"), "\(observed.body)")
    }
  }
}
