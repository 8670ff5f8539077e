import Foundation
import NIOHTTP1
import Resolution
import Testing
import TestSupport
import Tokens
import ResolverWire

/// A project's beacons are bounded: how many, how many Eddystone-EID, how many attachments
/// each, and how short an EID rotation period may be (each costs entries in the EID index)
/// (issue 16).
@Suite("Beacon limits")
struct BeaconLimitTests {
  func call(_ method: HTTPMethod, _ server: ServerHarness, _ path: String, body: String? = nil)
    async throws -> RawAnswer
  {
    try await rawRequest(
      method, server.url, path: path, headers: [ResolverContract.apiKeyHeader: server.apiKey],
      body: body)
  }

  func uid(_ index: Int) -> String { "0102030405060708090a" + String(format: "%012x", index) }

  @Test func beaconsAndAttachmentsPerProjectAreBounded() async throws {
    let server = try await ServerHarness.start {
      $0.beaconLimits.maximumBeaconsPerProject = 2
      $0.beaconLimits.maximumAttachmentsPerBeacon = 2
    }
    try await withShutdown(server) { server in
      let attachment = #"{"namespacedType": "cafe/menu", "data": "c291cA=="}"#
      func register(_ index: Int, attachments: Int = 0) async throws -> RawAnswer {
        let list = Array(repeating: attachment, count: attachments).joined(separator: ",")
        let id = #"{"type": "eddystone", "id": "\#(uid(index))"}"#
        return try await call(
          .POST, server, "/v1/beacons",
          body: #"{"advertisedId": \#(id), "attachments": [\#(list)]}"#)
      }
      #expect(try await register(1, attachments: 3).status == 422)
      #expect(try await register(1, attachments: 2).status == 201)
      let added = try await call(
        .POST, server, "/v1/beacons/eddystone!\(uid(1))/attachments", body: attachment)
      #expect(added.status == 422)
      #expect(added.json["message"]?.contains("its most (2)") == true, "\(added.body)")
      #expect(try await register(2).status == 201)
      let third = try await register(3)
      #expect(third.status == 422)
      #expect(third.json["error"] == "limit_exceeded")
      #expect(third.json["message"]?.contains("2 beacons") == true, "\(third.body)")
      // Deleting one makes room.
      #expect(try await call(.DELETE, server, "/v1/beacons/eddystone!\(uid(2))").status == 204)
      #expect(try await register(3).status == 201)
    }
  }

  @Test func eidBeaconsAreBoundedAndTheirPeriodHasAFloor() async throws {
    let server = try await ServerHarness.start { $0.beaconLimits.maximumEIDBeaconsPerProject = 1 }
    try await withShutdown(server) { server in
      let clock: UInt32 = 66036
      func register(key: String, exponent: Int) async throws -> RawAnswer {
        let generator = try EddystoneEIDGenerator(
          identityKey: Array(Hex.decode(key) ?? []), rotationExponent: min(max(exponent, 0), 15))
        let eid = Hex.encode(generator.eid(beaconTime: clock))
        return try await call(
          .POST, server, "/v1/beacons",
          body: """
            {"advertisedId": {"type": "eddystone-eid", "id": "\(eid)"},
             "eid": {"identityKey": "\(key)", "rotationExponent": \(exponent),
                     "clockValue": \(clock)}}
            """)
      }
      let short = try await register(key: String(repeating: "01", count: 16), exponent: 5)
      #expect(short.status == 400)
      #expect(short.json["message"]?.contains("6 to 15") == true, "\(short.body)")
      #expect(
        try await register(key: String(repeating: "01", count: 16), exponent: 6).status == 201)
      let second = try await register(key: String(repeating: "02", count: 16), exponent: 10)
      #expect(second.status == 422)
      #expect(second.json["message"]?.contains("Eddystone-EID beacons") == true, "\(second.body)")
    }
  }
}
