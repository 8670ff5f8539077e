import AsyncHTTPClient
@_spi(Resolver) import Core
import Foundation
import NIOHTTP1
import Resolution
import ServerStorage
import ServerTestSupport
import Synchronization
import ResolverClient
import Testing
import TestSupport
import Tokens
import ResolverWire
import BeaconFrames

/// Eddystone-EID beacons over HTTP: registration checked against the parameters, resolution of
/// the ids the beacon broadcasts within the tolerance, the identity key never answered, and
/// `observedId` in every answer; then the library's client against the same server.
@Suite("Eddystone-EID beacons")
struct EIDBeaconTests {
  let key = "000102030405060708090a0b0c0d0e0f"
  /// Mid-period for K = 10 (65536 + 500), so the seconds a test takes stay in one period.
  let clock: UInt32 = 66036
  let uid = "0102030405060708090a" + "aabbccddeeff"

  var generator: EddystoneEIDGenerator {
    try! EddystoneEIDGenerator(identityKey: hexBytes(key), rotationExponent: 10)
  }

  func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

  func call(_ method: HTTPMethod, _ server: ServerHarness, _ path: String, body: String? = nil)
    async throws -> RawAnswer
  {
    try await rawRequest(
      method, server.url, path: path, headers: [ResolverContract.apiKeyHeader: server.apiKey],
      body: body)
  }

  func object(_ answer: RawAnswer) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
  }

  func register(_ server: ServerHarness, eid: String, key: String? = nil, exponent: Int = 10)
    async throws -> RawAnswer
  {
    try await call(
      .POST, server, "/v1/beacons",
      body: """
        {"advertisedId": {"type": "eddystone-eid", "id": "\(eid)"},
         "eid": {"identityKey": "\(key ?? self.key)", "rotationExponent": \(exponent),
                 "clockValue": \(clock)},
         "attachments": [{"namespacedType": "cafe/menu", "data": "c291cA=="}]}
        """)
  }

  /// The `observedId.id` of each beacon answered for these observations.
  func observed(_ server: ServerHarness, _ observations: [(type: String, id: String)])
    async throws -> [(observed: String, name: String)]
  {
    let list = observations.map { #"{"advertisedId": {"type": "\#($0.type)", "id": "\#($0.id)"}}"# }
    let answer = try await call(
      .POST, server, "/v1/beaconinfo:getforobserved",
      body: #"{"observations": [\#(list.joined(separator: ","))], "namespacedTypes": ["*"]}"#)
    #expect(answer.status == 200)
    let beacons = try #require(try object(answer)["beacons"] as? [[String: Any]])
    return beacons.map {
      (
        (($0["observedId"] as? [String: Any])?["id"] as? String) ?? "none",
        $0["beaconName"] as? String ?? ""
      )
    }
  }

  @Test func registerAndResolveWithinTheTolerance() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let now = hex(generator.eid(beaconTime: clock))
      let registered = try await register(server, eid: now)
      #expect(registered.status == 201)
      let name = "eddystone-eid!\(now)"
      #expect(try object(registered)["beaconName"] as? String == name)
      #expect(!registered.body.contains(key))

      let previous = hex(generator.eid(beaconTime: clock - 1024))
      let far = hex(generator.eid(beaconTime: clock + 20 * 1024))
      let answers = try await observed(
        server,
        [("eddystone-eid", now), ("eddystone-eid", previous), ("eddystone-eid", far)])
      #expect(answers.map(\.observed) == [now, previous])
      #expect(answers.allSatisfy { $0.name == name })

      let list = try await call(.GET, server, "/v1/beacons")
      #expect(!list.body.lowercased().contains(key))
      #expect(!list.body.contains("identityKey"))
      let beacon = try #require((try object(list)["beacons"] as? [[String: Any]])?.first)
      #expect((beacon["eid"] as? [String: Any])?["rotationExponent"] as? Int == 10)

      // Deleting forgets it at once (the index of the project is dropped).
      #expect(try await call(.DELETE, server, "/v1/beacons/\(name)").status == 204)
      #expect(try await observed(server, [("eddystone-eid", now)]).isEmpty)
    }
  }

  @Test(.requires(.postgres), arguments: HostileInputTests.Engine.allCases)
  func aBeaconWhoseClockFellBehindIsFoundAndItsClockLearned(
    _ engine: HostileInputTests.Engine
  ) async throws {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let time = Mutex(start)
    let serverNow: @Sendable () -> Date = { time.withLock { $0 } }
    let server =
      switch engine {
      case .sqlite: try await ServerHarness.start(now: serverNow)
      case .postgres:
        try await ServerHarness.start(
          storage: try await PostgresStorage(url: try await TestPostgres.freshDatabase()),
          now: serverNow)
      }
    try await withShutdown(server) { server in
      let now = hex(generator.eid(beaconTime: clock))
      #expect(try await register(server, eid: now).status == 201)
      let name = "eddystone-eid!\(now)"
      // The beacon's clock: it lost power for 3000 s (and restored its clock as it was).
      let lag: UInt32 = 3000
      func broadcast(after seconds: TimeInterval) -> String {
        hex(generator.eid(beaconTime: clock + UInt32(seconds) - lag))
      }
      // Ten minutes on, 3000 s behind is beyond the window (one period, plus what ten minutes
      // unmatched widen it by): not found.
      time.withLock { $0 = start.addingTimeInterval(600) }
      #expect(try await observed(server, [("eddystone-eid", broadcast(after: 600))]).isEmpty)
      // Two hours unmatched widen it enough.
      time.withLock { $0 = start.addingTimeInterval(7200) }
      let found = try await observed(server, [("eddystone-eid", broadcast(after: 7200))])
      #expect(found.map(\.name) == [name])
      // Learned: ten minutes after that match the window is narrow again, and the beacon's ids
      // are still found.
      time.withLock { $0 = start.addingTimeInterval(7800) }
      #expect(
        try await observed(server, [("eddystone-eid", broadcast(after: 7800))]).map(\.name) == [
          name
        ])
      let stored = try await server.storage.read { store in
        try store.beacons.eidBeacons(project: "test")
      }
      let registration = try #require(stored.first?.registration)
      #expect(abs(registration.clockOffset + Int64(lag)) < 1024, "\(registration.clockOffset)")
      #expect(registration.lastMatchedAt == start.addingTimeInterval(7800))
      #expect(registration.window(at: start.addingTimeInterval(7800)) == (1024, 1024))
    }
  }

  @Test func aWrongKeyOrClockIsRefusedNamingTheProblem() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let now = hex(generator.eid(beaconTime: clock))
      let wrongKey = try await register(server, eid: now, key: "ffeeddccbbaa99887766554433221100")
      #expect(wrongKey.status == 400)
      #expect(wrongKey.json["message"]?.contains("identity key") == true)
      let wrongExponent = try await register(server, eid: now, exponent: 9)
      #expect(wrongExponent.status == 400)
      let shortKey = try await register(server, eid: now, key: "0011")
      #expect(shortKey.status == 400)
      let noParameters = try await call(
        .POST, server, "/v1/beacons",
        body: #"{"advertisedId": {"type": "eddystone-eid", "id": "\#(now)"}}"#)
      #expect(noParameters.status == 400)
      #expect(noParameters.json["message"]?.contains("eid") == true)
      #expect(
        (try object(try await call(.GET, server, "/v1/beacons"))["beacons"] as? [Any])?.isEmpty
          == true)
    }
  }

  @Test func everyAnswerSaysWhichObservationItAnswers() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let registered = try await call(
        .POST, server, "/v1/beacons",
        body: #"{"advertisedId": {"type": "eddystone", "id": "\#(uid)"}}"#)
      #expect(registered.status == 201)
      let answers = try await observed(server, [("eddystone", uid), ("eddystone", uid)])
      #expect(answers.map(\.observed) == [uid])
    }
  }

  @Test func resolverClientMapsAnswersToObservedIDs() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let now = generator.eid(beaconTime: clock)
      #expect(try await register(server, eid: hex(now)).status == 201)
      #expect(
        try await call(
          .POST, server, "/v1/beacons",
          body: """
            {"advertisedId": {"type": "eddystone", "id": "\(uid)"},
             "attachments": [{"namespacedType": "shop/hours", "data": "OS01"}]}
            """
        ).status == 201)

      let resolver = ResolverClient(
        configuration: .init(url: server.url, credentialStore: InMemoryCredentialStore()))
      let device = try await resolver.register(apiKey: server.apiKey)
      let eid = BeaconID.eddystoneEID(try BeaconBytes(now))
      let previous = BeaconID.eddystoneEID(
        try BeaconBytes(generator.eid(beaconTime: clock - 1024)))
      let uidID = BeaconID.eddystoneUID(
        namespace: try BeaconBytes(hexBytes("0102030405060708090a")),
        instance: try BeaconBytes(hexBytes("aabbccddeeff")))
      let unknown = BeaconID.altBeacon(try BeaconBytes([UInt8](repeating: 7, count: 20)))
      let infos = try await resolver.beaconInfo(
        for: [eid, uidID, unknown, previous], namespacedTypes: ["*"], from: device)
      #expect(infos.map(\.observed) == [eid, uidID, previous])
      let byObserved = Dictionary(uniqueKeysWithValues: infos.map { ($0.observed, $0) })
      #expect(byObserved[eid]?.beaconName == "eddystone-eid!\(hex(now))")
      #expect(
        byObserved[eid]?.attachments
          == [
            BeaconAttachment(
              name: byObserved[eid]?.attachments.first?.name ?? "", namespace: "cafe", type: "menu",
              data: Data("soup".utf8))
          ])
      #expect(byObserved[uidID]?.attachments.map(\.type) == ["hours"])
      let filtered = try await resolver.beaconInfo(
        for: [eid, uidID], namespacedTypes: ["shop/*"], from: device)
      #expect(filtered.map { $0.attachments.count } == [0, 1])

      // More than one request's worth of observations goes in batches.
      let many = (0..<1500).map { index in
        BeaconID.altBeacon(
          try! BeaconBytes(
            [UInt8](repeating: UInt8(index % 250), count: 18) + [
              UInt8(index >> 8), UInt8(index & 0xff),
            ]))
      }
      #expect(
        try await resolver.beaconInfo(for: many + [eid], namespacedTypes: ["*"], from: device).map(
          \.observed) == [eid])
      try await resolver.unregister(device)
    }
  }

  @Test func anUnreachableServerIsUnavailable() async throws {
    let resolver = ResolverClient(
      configuration: .init(
        url: URL(string: "http://127.0.0.1:9")!, credentialStore: InMemoryCredentialStore()))
    let device = DeviceCredentials(id: .random(), secret: "s")
    await #expect {
      _ = try await resolver.beaconInfo(
        for: [.altBeacon(try BeaconBytes([UInt8](repeating: 1, count: 20)))],
        namespacedTypes: ["*"], from: device)
    } throws: { error in
      if case .unavailable = error as? ResolverError { return true }
      return false
    }
  }
}

/// Bytes from even-length hex (test input, known good).
func hexBytes(_ hex: String) -> [UInt8] {
  guard let bytes = Hex.decode(hex) else { preconditionFailure("bad hex literal \(hex)") }
  return bytes
}
