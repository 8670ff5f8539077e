import Core
import NearbyTesting
import Foundation
import NIOHTTP1
import NearbyServer
import Resolution
import ServerStorage
import Synchronization
import ServerTestSupport
import TestSupport
import Testing
import Tokens
import ResolverWire

/// Issue 29: nothing one project's key can do reaches another project's beacons, devices or
/// ids, on SQLite and PostgreSQL alike.
@Suite("Tenant isolation")
struct TenantIsolationTests {
  typealias Engine = HostileInputTests.Engine

  /// A server on `engine` (and the PostgreSQL database's URL), stopped when `body` ends.
  func withServer(
    _ engine: Engine,
    configure: @escaping (inout ResolverServerConfiguration) -> Void = { _ in },
    now: @escaping @Sendable () -> Date = { Date() },
    _ body: (ServerHarness, String?) async throws -> Void
  ) async throws {
    let url: String? =
      engine == .postgres ? try await TestPostgres.freshDatabase() : nil
    var storage: (any ResolverStorage)?
    if let url { storage = try await PostgresStorage(url: url) }
    let server = try await ServerHarness.start(storage: storage, configure: configure, now: now)
    do {
      try await body(server, url)
    } catch {
      await server.shutdown()
      throw error
    }
    await server.shutdown()
  }

  /// A key of another project, "b".
  func otherProjectKey(_ server: ServerHarness, role: APIKeyRole = .admin) async throws -> String {
    try await server.storage.transaction { store in
      try store.apiKeys.createAPIKey(project: "b", role: role, label: "", now: Date())
    }.key
  }

  func call(
    _ method: HTTPMethod, _ server: ServerHarness, _ path: String, key: String,
    headers: [String: String] = [:], body: String? = nil
  ) async throws -> RawAnswer {
    try await rawRequest(
      method, server.url, path: path,
      headers: [ResolverContract.apiKeyHeader: key].merging(headers) { $1 }, body: body)
  }

  func register(_ server: ServerHarness, key: String) async throws -> RegisteredDevice {
    let answer = try await call(.POST, server, "/v1/devices", key: key)
    #expect(answer.status == 201, "\(answer.body)")
    return RegisteredDevice(
      id: try #require(answer.json["id"]), secret: try #require(answer.json["secret"]))
  }

  func report(
    _ server: ServerHarness, _ device: RegisteredDevice, key: String, secret: String? = nil,
    body: String = "{}"
  ) async throws -> RawAnswer {
    try await call(
      .POST, server, "/v1/devices/\(device.id)/report", key: key,
      headers: [ResolverContract.deviceSecretHeader: secret ?? device.secret], body: body)
  }

  // MARK: Finding 2: naming a device is not being it

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func anotherProjectCannotSpendADevicesBudget(_ engine: Engine) async throws {
    try await withServer(
      engine,
      configure: {
        $0.requestsPerSecondPerDevice = 0.5
        $0.burstPerDevice = 5
        $0.clock = ManualClock()
      }
    ) { server, _ in
      let device = try await register(server, key: server.apiKey)
      let other = try await otherProjectKey(server, role: .client)
      // Far past the device's burst: another project's key with no secret, with a wrong
      // secret, and the device's own project's key with a wrong secret.
      for _ in 0..<10 {
        let noSecret = try await call(
          .POST, server, "/v1/devices/\(device.id)/report", key: other, body: "{}")
        #expect(noSecret.status == 403, "\(noSecret.body)")
        let wrong = try await report(server, device, key: other, secret: "wrong")
        #expect(wrong.status == 404, "\(wrong.body)")
        let guessed = try await report(server, device, key: server.apiKey, secret: "wrong")
        #expect(guessed.status == 404, "\(guessed.body)")
        let stream = try await call(
          .GET, server, "/v1/devices/\(device.id)/events", key: other,
          headers: [ResolverContract.deviceSecretHeader: "wrong"])
        #expect(stream.status == 404, "\(stream.body)")
      }
      // The device's own reports still pass, and its own budget still holds.
      var statuses: [Int] = []
      for _ in 0..<7 {
        statuses.append(try await report(server, device, key: server.apiKey).status)
      }
      #expect(statuses.prefix(5).allSatisfy { $0 == 200 }, "\(statuses)")
      #expect(statuses.last == 429, "\(statuses)")
    }
  }

  /// On PostgreSQL a report locks its device's row: one that does not authenticate must not
  /// (it waited behind a lock held elsewhere, and would hold the device's reports up).
  @Test(.requires(.postgres)) func aReportThatDoesNotAuthenticateLocksNothing() async throws {
    try await withServer(Engine.postgres) { server, url in
      let device = try await register(server, key: server.apiKey)
      let other = try await otherProjectKey(server, role: .client)
      try await TestPostgres.whileLocked(
        in: try #require(url), "SELECT id FROM devices WHERE id = '\(device.id)' FOR UPDATE"
      ) {
        let start = ContinuousClock.now
        let answer = try await report(server, device, key: other, secret: "wrong")
        #expect(answer.status == 404, "\(answer.body)")
        #expect(start.duration(to: .now) < .seconds(8))  // it waited for the lock: 10 s and more
      }
      #expect(try await report(server, device, key: server.apiKey).status == 200)
    }
  }

  // MARK: Finding 7: ids are the device's own

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func publicationIDsAreScopedToTheirDevice(_ engine: Engine) async throws {
    try await withServer(engine) { server, _ in
      let other = try await otherProjectKey(server, role: .client)
      let theirs = try await register(server, key: other)
      let mine = try await register(server, key: server.apiKey)
      let id = UUID().uuidString.lowercased()
      let subscription = UUID().uuidString.lowercased()
      func publish(_ content: String) -> String {
        #"{"publish":[{"id":"\#(id)","message":{"content":"\#(content)","type":"t"}}],"#
          + #""subscribe":[{"id":"\#(subscription)","namespace":""}]}"#
      }
      // Project b uses the ids first; project a's device uses them all the same.
      #expect(try await report(server, theirs, key: other, body: publish("aGk=")).status == 200)
      let first = try await report(server, mine, key: server.apiKey, body: publish("aGk="))
      #expect(first.status == 200, "\(first.body)")
      // Another device of the same project too.
      let second = try await register(server, key: server.apiKey)
      #expect(
        try await report(server, second, key: server.apiKey, body: publish("aGk=")).status == 200)
      // The device's own rules still hold, and name the id as it sent it.
      let changed = try await report(server, mine, key: server.apiKey, body: publish("aG8="))
      #expect(changed.status == 422, "\(changed.body)")
      #expect(changed.json["message"]?.contains(id) == true, "\(changed.body)")
      // b unpublishing the id leaves a's publication alone.
      #expect(
        try await report(server, theirs, key: other, body: #"{"unpublish":["\#(id)"]}"#).status
          == 200)
      let stored = try await server.storage.read { store in
        try store.resolution.handles.publications(on: try #require(DeviceID(mine.id)))
      }
      #expect(stored.count == 1)
      #expect(stored.first?.id.description != id)
    }
  }

  // MARK: Finding 1: an EID identity cannot be twinned in another project

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func anEIDBeaconCannotBeTwinnedByAnotherProject(_ engine: Engine) async throws {
    try await withServer(engine) { server, _ in
      let other = try await otherProjectKey(server)
      func serviceKey(_ key: String) async throws -> (text: String, bytes: [UInt8]) {
        let params = try await call(.GET, server, "/v1/eidparams", key: key)
        #expect(params.status == 200, "\(params.body)")
        let object = try #require(
          try JSONSerialization.jsonObject(with: Data(params.body.utf8)) as? [String: Any])
        let text = try #require(object["serviceEcdhPublicKey"] as? String)
        return (text, try #require(Data(base64Encoded: text)).map { $0 })
      }
      let mine = try await serviceKey(server.apiKey)
      let theirs = try await serviceKey(other)
      #expect(mine.bytes != theirs.bytes)
      let again = try await serviceKey(server.apiKey)
      #expect(again.bytes == mine.bytes)

      let beacon = EIDKeyExchange.newServiceKey()
      let identityKey = try EIDKeyExchange.identityKey(
        beaconPrivateKey: beacon.privateKey, servicePublicKey: mine.bytes)
      let clock: UInt32 = 65280
      let eid = Hex.encode(
        try EddystoneEIDGenerator(identityKey: identityKey, rotationExponent: 10)
          .eid(beaconTime: clock))
      let beaconText = Data(beacon.publicKey).base64EncodedString()
      func register(key: String, service: String) async throws -> RawAnswer {
        try await call(
          .POST, server, "/v1/beacons", key: key,
          body: """
            {"advertisedId": {"type": "eddystone-eid", "id": "\(eid)"},
             "eid": {"beaconEcdhPublicKey": "\(beaconText)", "serviceEcdhPublicKey": "\(service)",
                     "rotationExponent": 10, "clockValue": \(clock)},
             "attachments": [{"namespacedType": "twin/menu", "data": "c291cA=="}]}
            """)
      }
      #expect(try await register(key: server.apiKey, service: mine.text).status == 201)
      // Project b, with the beacon's public key and its current EID (both public): with a's
      // service key it is refused; with its own the identity derived is another, so the EID
      // the beacon broadcasts is not its own.
      let withMine = try await register(key: other, service: mine.text)
      #expect(withMine.status == 400, "\(withMine.body)")
      let withTheirs = try await register(key: other, service: theirs.text)
      #expect(withTheirs.status == 400, "\(withTheirs.body)")
      let observed = try await call(
        .POST, server, "/v1/beaconinfo:getforobserved", key: other,
        body:
          #"{"observations": [{"advertisedId": {"type": "eddystone-eid", "id": "\#(eid)"}}], "namespacedTypes": ["*"]}"#
      )
      #expect(observed.status == 200)
      #expect(!observed.body.contains("twin"), "\(observed.body)")
    }
  }
  // MARK: Finding 9: another project learns nothing that links an EID beacon's ids

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func anotherProjectSeesAnEIDBeaconByTheIDItObserved(_ engine: Engine) async throws {
    let offset = Mutex<TimeInterval>(0)
    try await withServer(engine, now: { Date().addingTimeInterval(offset.withLock { $0 }) }) {
      server, _ in
      let other = try await otherProjectKey(server, role: .client)
      let identityKey = (0..<16).map { UInt8($0) }
      let generator = try EddystoneEIDGenerator(identityKey: identityKey, rotationExponent: 10)
      let clock: UInt32 = 65536
      let registeredEID = Hex.encode(generator.eid(beaconTime: clock))
      let registered = try await call(
        .POST, server, "/v1/beacons", key: server.apiKey,
        body: """
          {"advertisedId": {"type": "eddystone-eid", "id": "\(registeredEID)"},
           "eid": {"identityKey": "\(Hex.encode(identityKey))", "rotationExponent": 10,
                   "clockValue": \(clock)},
           "attachments": [{"namespacedType": "shared.menus/menu", "data": "c291cA=="}]}
          """)
      #expect(registered.status == 201, "\(registered.body)")
      let made = try await call(
        .PATCH, server, "/v1/namespaces/shared.menus", key: server.apiKey,
        body: #"{"visibility": "public"}"#)
      #expect(made.status == 200, "\(made.body)")
      // Two rotations later the beacon sends another id; b reads the public attachment.
      offset.withLock { $0 = 2048 }
      let later = Hex.encode(generator.eid(beaconTime: clock + 2048))
      #expect(later != registeredEID)
      let observed = try await call(
        .POST, server, "/v1/beaconinfo:getforobserved", key: other,
        body:
          #"{"observations": [{"advertisedId": {"type": "eddystone-eid", "id": "\#(later)"}}], "namespacedTypes": ["shared.menus/*"]}"#
      )
      #expect(observed.status == 200, "\(observed.body)")
      #expect(observed.body.contains("c291cA=="), "\(observed.body)")
      #expect(observed.body.contains(later), "\(observed.body)")
      #expect(!observed.body.contains(registeredEID), "\(observed.body)")
      // Its own project still sees it by its registered name.
      let own = try await call(
        .POST, server, "/v1/beaconinfo:getforobserved", key: server.apiKey,
        body:
          #"{"observations": [{"advertisedId": {"type": "eddystone-eid", "id": "\#(later)"}}], "namespacedTypes": ["*"]}"#
      )
      #expect(own.body.contains(registeredEID), "\(own.body)")
    }
  }
}
