import Foundation
import NIOHTTP1
import NearbyServer
import ServerStorage
import ServerTestSupport
import Synchronization
import Testing
import TestSupport
import Tokens
import ResolverWire
import BeaconFrames

/// Beacon diagnostics (issue 18): telemetry and observations forwarded with `getforobserved`,
/// kept per beacon, and the low-battery and low-activity alerts. On both databases, through
/// HTTP, with the server's clock stepped by the test.
@Suite("Beacon diagnostics")
struct DiagnosticsTests {
  typealias Engine = HostileInputTests.Engine

  /// The server's clock.
  final class Clock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 += seconds } }
  }

  func start(_ engine: Engine, clock: Clock) async throws -> ServerHarness {
    let now: @Sendable () -> Date = { clock.now }
    return switch engine {
    case .sqlite: try await ServerHarness.start(now: now)
    case .postgres:
      try await ServerHarness.start(
        storage: try await PostgresStorage(url: try await TestPostgres.freshDatabase()), now: now)
    }
  }

  func call(
    _ method: HTTPMethod, _ server: ServerHarness, _ path: String, body: String? = nil,
    key: String? = nil
  ) async throws -> RawAnswer {
    try await rawRequest(
      method, server.url, path: path,
      headers: [ResolverContract.apiKeyHeader: key ?? server.apiKey],
      body: body)
  }

  func uid(_ index: Int) -> String { "0102030405060708090a" + String(format: "%012x", index) }
  func name(_ index: Int) -> String { "eddystone!\(uid(index))" }

  func object(_ answer: RawAnswer) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
  }

  func register(_ server: ServerHarness, _ index: Int, status: String = "active") async throws {
    let answer = try await call(
      .POST, server, "/v1/beacons",
      body:
        #"{"advertisedId": {"type": "eddystone", "id": "\#(uid(index))"}, "status": "\#(status)"}"#)
    #expect(answer.status == 201, "\(answer.body)")
  }

  /// A plain TLM frame, base64.
  func tlm(
    millivolts: UInt16?, celsius: Double? = 21.5, count: UInt32 = 1000, uptime: UInt32 = 36_000
  )
    -> String
  {
    let frame = EddystoneTLM(
      batteryMillivolts: millivolts, temperatureCelsius: celsius, advertisingCount: count,
      uptimeDeciseconds: uptime)
    return Data(frame.frame).base64EncodedString()
  }

  /// Observes beacon `index`, with telemetry if given.
  @discardableResult
  func observe(
    _ server: ServerHarness, _ index: Int, telemetry: String? = nil, key: String? = nil
  ) async throws -> RawAnswer {
    let extra = telemetry.map { #", "telemetry": "\#($0)""# } ?? ""
    let answer = try await call(
      .POST, server, "/v1/beaconinfo:getforobserved",
      body:
        #"{"observations": [{"advertisedId": {"type": "eddystone", "id": "\#(uid(index))"}\#(extra)}], "namespacedTypes": ["*"]}"#,
      key: key)
    return answer
  }

  func diagnostics(_ server: ServerHarness, _ index: Int) async throws -> [String: Any] {
    let answer = try await call(.GET, server, "/v1/beacons/\(name(index))/diagnostics")
    #expect(answer.status == 200, "\(answer.body)")
    return try object(answer)
  }

  /// The beacon names a diagnostics listing answers, following its pages.
  func listed(_ server: ServerHarness, alert: String?, pageSize: Int = 1000) async throws
    -> [String]
  {
    var names: [String] = []
    var token: String?
    repeat {
      var query = ["pageSize=\(pageSize)"]
      if let alert { query.append("alert=\(alert)") }
      if let token { query.append("pageToken=\(token)") }
      let answer = try await call(
        .GET, server, "/v1/diagnostics?" + query.joined(separator: "&"))
      #expect(answer.status == 200, "\(answer.body)")
      let page = try object(answer)
      names += (page["diagnostics"] as? [[String: Any]] ?? []).compactMap {
        $0["beaconName"] as? String
      }
      token = page["nextPageToken"] as? String
    } while token != nil && names.count < 100
    return names
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func telemetryForwardedIsKeptAsTheBeaconsLatest(_ engine: Engine) async throws {
    let clock = Clock()
    let server = try await start(engine, clock: clock)
    try await withShutdown(server) { server in
      try await register(server, 1)
      let fresh = try await diagnostics(server, 1)
      #expect(fresh["lastObservedAt"] == nil)
      #expect(fresh["alerts"] as? [String] == [])

      let observed = try await observe(server, 1, telemetry: tlm(millivolts: 2950))
      #expect(observed.status == 200, "\(observed.body)")
      var found = try await diagnostics(server, 1)
      #expect(found["beaconName"] as? String == name(1))
      #expect(found["batteryMillivolts"] as? Int == 2950)
      #expect(found["temperatureCelsius"] as? Double == 21.5)
      #expect(found["advertisingCount"] as? Int == 1000)
      #expect(found["uptimeSeconds"] as? Double == 3600)
      #expect(found["lastObservedAt"] as? String == "2027-01-15T08:00:00.000Z")
      #expect(found["telemetryAt"] as? String == "2027-01-15T08:00:00.000Z")
      #expect(found["alerts"] as? [String] == [])

      // The latest wins; a beacon that does not report its battery or temperature says so.
      clock.advance(10)
      try await observe(server, 1, telemetry: tlm(millivolts: nil, celsius: nil, count: 2000))
      found = try await diagnostics(server, 1)
      #expect(found["batteryMillivolts"] == nil)
      #expect(found["temperatureCelsius"] == nil)
      #expect(found["advertisingCount"] as? Int == 2000)

      // Encrypted telemetry is kept as heard.
      let etlm = Data([0x20, 0x01] + Array(repeating: 0xA5, count: 16)).base64EncodedString()
      try await observe(server, 1, telemetry: etlm)
      found = try await diagnostics(server, 1)
      #expect(found["encryptedTelemetry"] as? String == etlm)
      #expect(found["advertisingCount"] == nil)

      // Malformed telemetry is refused, naming the field; a beacon of no project is left alone.
      for bad in [
        "AAE=", Data([0x20, 0x07] + Array(repeating: 0, count: 12)).base64EncodedString(),
        "not base64!",
      ] {
        let refused = try await observe(server, 1, telemetry: bad)
        #expect(refused.status == 400, "\(bad): \(refused.body)")
        #expect(
          refused.json["message"]?.contains("observations[0].telemetry") == true, "\(refused.body)")
      }
      #expect(try await observe(server, 99, telemetry: tlm(millivolts: 3000)).status == 200)
      #expect(try await call(.GET, server, "/v1/beacons/\(name(99))/diagnostics").status == 404)

      // A client key forwards telemetry but cannot read diagnostics.
      let client = try await server.storage.transaction { store in
        try store.apiKeys.createAPIKey(project: "test", role: .client, label: "app", now: Date())
      }.key
      #expect(
        try await observe(server, 1, telemetry: tlm(millivolts: 2800), key: client).status == 200)
      #expect(try await diagnostics(server, 1)["batteryMillivolts"] as? Int == 2800)
      let refused = try await call(.GET, server, "/v1/beacons/\(name(1))/diagnostics", key: client)
      #expect(refused.status == 403)
      #expect(try await call(.GET, server, "/v1/diagnostics", key: client).status == 403)
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func anObservationIsWrittenAtMostOnceAMinute(_ engine: Engine) async throws {
    let clock = Clock()
    let server = try await start(engine, clock: clock)
    try await withShutdown(server) { server in
      try await register(server, 1)
      try await observe(server, 1)
      clock.advance(30)
      try await observe(server, 1)
      #expect(
        try await diagnostics(server, 1)["lastObservedAt"] as? String == "2027-01-15T08:00:00.000Z")
      clock.advance(31)
      try await observe(server, 1)
      #expect(
        try await diagnostics(server, 1)["lastObservedAt"] as? String == "2027-01-15T08:01:01.000Z")
      // Telemetry is always written, with the observation.
      clock.advance(5)
      try await observe(server, 1, telemetry: tlm(millivolts: 3000))
      #expect(
        try await diagnostics(server, 1)["lastObservedAt"] as? String == "2027-01-15T08:01:06.000Z")
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func lowBatteryByThresholdAndByTrend(_ engine: Engine) async throws {
    let clock = Clock()
    let server = try await start(engine, clock: clock)
    try await withShutdown(server) { server in
      for index in 1...4 { try await register(server, index) }
      // 1: under the threshold (2200 mV). 2: draining 100 mV a day from 2900: at 2200 in 7 days,
      // within the 60-day horizon. 3: steady at 3000. 4: draining 2 mV a day: years away.
      for day in 0...3 {
        try await observe(server, 2, telemetry: tlm(millivolts: UInt16(2900 - 100 * day)))
        try await observe(server, 3, telemetry: tlm(millivolts: 3000))
        try await observe(server, 4, telemetry: tlm(millivolts: UInt16(3000 - 2 * day)))
        if day < 3 { clock.advance(86_400) }
      }
      try await observe(server, 1, telemetry: tlm(millivolts: 2100))
      let low = try await diagnostics(server, 1)
      #expect(low["alerts"] as? [String] == ["lowBattery"])
      #expect(low["batteryTrendMillivoltsPerDay"] == nil, "one sample is no trend")

      let draining = try await diagnostics(server, 2)
      #expect(draining["alerts"] as? [String] == ["lowBattery"])
      let trend = try #require(draining["batteryTrendMillivoltsPerDay"] as? Double)
      #expect(abs(trend + 100) < 0.001, "\(trend)")
      // 2600 mV now, 400 mV above the threshold: 4 days on (from the middle of this hour).
      let expected = Date(timeIntervalSince1970: 1_800_000_000 + 3 * 86_400 + 1800 + 4 * 86_400)
      let estimate = try #require(draining["estimatedLowBatteryDate"] as? String)
      let date = try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(estimate)
      #expect(abs(date.timeIntervalSince(expected)) < 1, "\(estimate)")

      let steady = try await diagnostics(server, 3)
      #expect(steady["alerts"] as? [String] == [])
      #expect(abs(steady["batteryTrendMillivoltsPerDay"] as? Double ?? 1) < 0.001)
      #expect(steady["estimatedLowBatteryDate"] == nil)
      let slow = try await diagnostics(server, 4)
      #expect(slow["alerts"] as? [String] == [], "400 days away is beyond the horizon")
      #expect(slow["estimatedLowBatteryDate"] != nil)

      #expect(try await listed(server, alert: "lowBattery") == [name(1), name(2)])
      #expect(try await listed(server, alert: nil) == (1...4).map(name))
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func lowActivityPagingAndTheBeaconsLifecycle(_ engine: Engine) async throws {
    let clock = Clock()
    let server = try await start(engine, clock: clock)
    try await withShutdown(server) { server in
      try await register(server, 1)
      try await register(server, 2)
      try await register(server, 3, status: "inactive")
      try await register(server, 4)
      try await register(server, 5)
      clock.advance(2 * 86_400)
      try await observe(server, 2)
      clock.advance(2 * 86_400)
      // 1, 4 and 5 were never observed in the 4 days since they were registered (over 3); 2 was
      // observed 2 days ago; 3 is inactive: nobody expects to see it.
      #expect(try await diagnostics(server, 1)["alerts"] as? [String] == ["lowActivity"])
      #expect(try await diagnostics(server, 2)["alerts"] as? [String] == [])
      #expect(try await diagnostics(server, 3)["alerts"] as? [String] == [])
      #expect(try await listed(server, alert: "lowActivity") == [name(1), name(4), name(5)])
      #expect(
        try await listed(server, alert: "lowActivity", pageSize: 1) == [name(1), name(4), name(5)])
      #expect(try await listed(server, alert: nil, pageSize: 2) == (1...5).map(name))

      // Bad queries are 400s.
      for query in ["alert=sleepy", "pageSize=0", "pageSize=1001", "pageToken=bm9wZQ"] {
        let answer = try await call(.GET, server, "/v1/diagnostics?\(query)")
        #expect(answer.status == 400, "\(query): \(answer.body)")
      }
      #expect(try await call(.GET, server, "/v1/beacons/\(name(42))/diagnostics").status == 404)

      // Decommissioned: no diagnostics. Deleted and registered again: a fresh start.
      let retired = try await call(
        .PATCH, server, "/v1/beacons/\(name(4))", body: #"{"status": "decommissioned"}"#)
      #expect(retired.status == 200, "\(retired.body)")
      #expect(try await call(.GET, server, "/v1/beacons/\(name(4))/diagnostics").status == 404)
      #expect(try await call(.DELETE, server, "/v1/beacons/\(name(2))").status == 204)
      try await register(server, 2)
      #expect(try await diagnostics(server, 2)["lastObservedAt"] == nil)
      #expect(try await listed(server, alert: "lowActivity") == [name(1), name(5)])
    }
  }
}
