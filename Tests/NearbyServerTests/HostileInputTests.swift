import AsyncHTTPClient
import Foundation
import NIOHTTP1
import ServerStorage
import ServerTestSupport
import Testing
import TestSupport
import ResolverWire

/// Input crafted to crash the server or earn a 5xx (issue 13) answers a 4xx naming the field,
/// on SQLite and on PostgreSQL alike, and the server keeps serving.
@Suite("Hostile input")
struct HostileInputTests {
  enum Engine: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
  }

  let uid = "0102030405060708090a" + "aabbccddeeff"

  func start(_ engine: Engine) async throws -> ServerHarness {
    switch engine {
    case .sqlite: try await ServerHarness.start()
    case .postgres:
      try await ServerHarness.start(
        storage: try await PostgresStorage(url: try await TestPostgres.freshDatabase()))
    }
  }

  func call(
    _ method: HTTPMethod, _ server: ServerHarness, _ path: String,
    headers: [String: String] = [:], body: String? = nil
  ) async throws -> RawAnswer {
    try await rawRequest(
      method, server.url, path: path,
      headers: [ResolverContract.apiKeyHeader: server.apiKey].merging(headers) { $1 }, body: body)
  }

  /// A device's report.
  func report(_ server: ServerHarness, _ body: String) async throws -> RawAnswer {
    let registered = try await call(.POST, server, "/v1/devices")
    let id = try #require(registered.json["id"])
    let secret = try #require(registered.json["secret"])
    return try await call(
      .POST, server, "/v1/devices/\(id)/report",
      headers: [ResolverContract.deviceSecretHeader: secret],
      body: body)
  }

  /// Expects `answer` to be `status` with the matching code and a message naming `field`.
  func expect(
    _ answer: RawAnswer, _ status: Int, naming field: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(answer.status == status, "\(answer.body)", sourceLocation: sourceLocation)
    let code = status == 422 ? "limit_exceeded" : "bad_request"
    #expect(answer.json["error"] == code, "\(answer.body)", sourceLocation: sourceLocation)
    #expect(
      answer.json["message"]?.contains(field) == true, "\(answer.body)",
      sourceLocation: sourceLocation)
  }

  func expectAlive(_ server: ServerHarness, sourceLocation: SourceLocation = #_sourceLocation)
    async throws
  {
    let health = try await rawRequest(.GET, server.url, path: "/healthz")
    #expect(health.status == 200, sourceLocation: sourceLocation)
  }

  /// Fullwidth digits pass `Character.isHexDigit` but not `UInt8(_:radix:)`: the force-unwrap
  /// between them aborted the process.
  @Test(.requires(.postgres), arguments: Engine.allCases)
  func fullwidthHexInABeaconRegistrationIs400(_ engine: Engine) async throws {
    let server = try await start(engine)
    try await withShutdown(server) { server in
      let two = try await call(
        .POST, server, "/v1/beacons",
        body: #"{"advertisedId":{"type":"ibeacon","id":"\uff10\uff10"}}"#)
      expect(two, 400, naming: "advertisedId.id")
      // The right number of characters (40) for an iBeacon id, all fullwidth.
      let forty = String(repeating: "\\uff10", count: 40)
      let full = try await call(
        .POST, server, "/v1/beacons", body: #"{"advertisedId":{"type":"ibeacon","id":"\#(forty)"}}"#
      )
      expect(full, 400, naming: "advertisedId.id")
      try await expectAlive(server)
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func fullwidthHexInGetForObservedIs400(_ engine: Engine) async throws {
    let server = try await start(engine)
    try await withShutdown(server) { server in
      let answer = try await call(
        .POST, server, "/v1/beaconinfo:getforobserved",
        body: """
          {"observations": [{"advertisedId": {"type": "eddystone", "id": "\(uid)"}},
                            {"advertisedId": {"type": "ibeacon", "id": "\\uff10\\uff10"}}],
           "namespacedTypes": ["*"]}
          """)
      expect(answer, 400, naming: "observations[1].advertisedId.id")
      let eid = try await call(
        .POST, server, "/v1/beaconinfo:getforobserved",
        body: """
          {"observations": [{"advertisedId": {"type": "eddystone-eid",
                                              "id": "\(String(repeating: "\\uff41", count: 16))"}}],
           "namespacedTypes": ["*"]}
          """)
      expect(eid, 400, naming: "observations[0].advertisedId.id")
      try await expectAlive(server)
    }
  }

  /// PostgreSQL refuses NUL in text (it answered 503), SQLite kept it (404 or stored): both
  /// now answer 400 naming the field before the database sees it.
  @Test(.requires(.postgres), arguments: Engine.allCases)
  func controlCharactersInTextFieldsAre400(_ engine: Engine) async throws {
    let server = try await start(engine)
    try await withShutdown(server) { server in
      let registered = try await call(
        .POST, server, "/v1/beacons", body: #"{"advertisedId":{"type":"eddystone","id":"\#(uid)"}}"#
      )
      #expect(registered.status == 201)
      let beacon = "eddystone!\(uid)"

      expect(
        try await call(
          .POST, server, "/v1/beacons",
          body: """
            {"advertisedId":{"type":"ibeacon","id":"\(String(repeating: "ab", count: 20))"},
             "description":"a\\u0000b"}
            """),
        400, naming: "description")
      expect(
        try await call(
          .POST, server, "/v1/beacons/\(beacon)/attachments",
          body: #"{"namespacedType":"cafe/me\u0000nu","data":""}"#),
        400, naming: "namespacedType")
      expect(
        try await call(
          .POST, server, "/v1/beacons/\(beacon)/attachments",
          body: #"{"namespacedType":"cafe/menu\u0085","data":""}"#),
        400, naming: "namespacedType")
      expect(try await call(.DELETE, server, "/v1/beacons/eddystone!%00"), 400, naming: "name")
      expect(
        try await call(
          .POST, server, "/v1/beacons/a%00b/attachments",
          body: #"{"namespacedType":"a/b","data":""}"#
        ),
        400, naming: "name")
      expect(
        try await call(.DELETE, server, "/v1/beacons/\(beacon)/attachments/x%00"), 400,
        naming: "attachment")
      expect(
        try await call(.DELETE, server, "/v1/beacons/\(beacon)/attachments/x%7F"), 400,
        naming: "attachment")
      expect(
        try await call(
          .POST, server, "/v1/beaconinfo:getforobserved",
          body: #"{"observations":[],"namespacedTypes":["cafe/\u0000"]}"#),
        400, naming: "namespacedTypes[0]")
      expect(
        try await call(
          .POST, server, "/v1/beaconinfo:getforobserved",
          body: """
            {"observations":[{"advertisedId":{"type":"eddystone","id":"\(uid)"},
                              "timestampMs":"1\\u0000"}],"namespacedTypes":["*"]}
            """),
        400, naming: "observations[0].timestampMs")
      let id = UUID().uuidString
      expect(
        try await report(
          server, #"{"publish":[{"id":"\#(id)","message":{"content":"aGk=","type":"a\u0000"}}]}"#),
        400, naming: "publish[0].message.type")
      expect(
        try await report(server, #"{"subscribe":[{"id":"\#(id)","namespace":"n\u0000"}]}"#),
        400, naming: "subscribe[0].namespace")
      expect(
        try await report(server, #"{"subscribe":[{"id":"\#(id)","type":"\u001f"}]}"#),
        400, naming: "subscribe[0].type")
      // A key far longer than any key is no key: 401 without a look-up.
      let key = try await rawRequest(
        .POST, server.url, path: "/v1/devices",
        headers: [ResolverContract.apiKeyHeader: "nk_" + String(repeating: "k", count: 4000)])
      #expect(key.status == 401)
      try await expectAlive(server)
      // Nothing of the above was stored.
      let list = try await call(.GET, server, "/v1/beacons")
      #expect(list.status == 200)
      #expect(!list.body.contains("\\u0000"))
    }
  }

  /// One character of a base letter and thousands of combining marks passed the limits that
  /// counted characters: limits count UTF-8 bytes.
  @Test(.requires(.postgres), arguments: Engine.allCases)
  func combiningMarkFloodsAre422(_ engine: Engine) async throws {
    let server = try await start(engine)
    try await withShutdown(server) { server in
      let flood = "a" + String(repeating: "\u{301}", count: 10_000)
      let id = UUID().uuidString
      expect(
        try await report(
          server, #"{"publish":[{"id":"\#(id)","message":{"content":"aGk=","type":"\#(flood)"}}]}"#),
        422, naming: "publish[0].message.type")
      expect(
        try await report(server, #"{"subscribe":[{"id":"\#(id)","type":"\#(flood)"}]}"#),
        422, naming: "subscribe[0].type")
      expect(
        try await call(
          .POST, server, "/v1/beacons",
          body: """
            {"advertisedId":{"type":"eddystone","id":"\(uid)"},
             "attachments":[{"namespacedType":"cafe/\(flood)","data":""}]}
            """),
        422, naming: "attachments[0].namespacedType")
      expect(
        try await call(
          .POST, server, "/v1/beacons",
          body: #"{"advertisedId":{"type":"eddystone","id":"\#(uid)"},"description":"\#(flood)"}"#),
        422, naming: "description")
      expect(
        try await call(
          .POST, server, "/v1/beaconinfo:getforobserved",
          body: #"{"observations":[],"namespacedTypes":["\#(flood)"]}"#),
        422, naming: "namespacedTypes[0]")
      // 32 bytes of two-byte characters are fine.
      let sixteen = String(repeating: "é", count: 16)
      let fine = try await report(
        server, #"{"publish":[{"id":"\#(id)","message":{"content":"aGk=","type":"\#(sixteen)"}}]}"#)
      #expect(fine.status == 200, "\(fine.body)")
      try await expectAlive(server)
    }
  }

  /// A 4 MiB body carried ~55 000 sightings, each a query: a report's lists are capped, and
  /// one over a cap is refused before any work, naming the list and the limit.
  @Test(.requires(.postgres), arguments: Engine.allCases)
  func reportsOverTheirListLimitsAre422(_ engine: Engine) async throws {
    let server = try await start(engine)
    try await withShutdown(server) { server in
      func sightings(_ count: Int) -> String {
        let one = #"{"token":"00000000000000ff","medium":"ble","time":"2026-11-25T12:00:00Z"}"#
        return #"{"sightings":["# + Array(repeating: one, count: count).joined(separator: ",")
          + "]}"
      }
      expect(try await report(server, sightings(1025)), 422, naming: "sightings")
      let ids = Array(repeating: "\"\(UUID().uuidString)\"", count: 257).joined(separator: ",")
      expect(
        try await report(server, #"{"unsubscribe":["# + ids + "]}"), 422, naming: "unsubscribe")
      let atLimit = try await report(server, sightings(1024))
      #expect(atLimit.status == 200, "\(atLimit.body)")
      try await expectAlive(server)
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func nonCanonicalBase64Is400(_ engine: Engine) async throws {
    let server = try await start(engine)
    try await withShutdown(server) { server in
      for content in ["aGk", "aG k=", "aGl=", "!!!!", "aGk=aGk=", "aGk\\n="] {
        let id = UUID().uuidString
        expect(
          try await report(
            server, #"{"publish":[{"id":"\#(id)","message":{"content":"\#(content)"}}]}"#),
          400, naming: "publish[0].message.content")
      }
      expect(
        try await call(
          .POST, server, "/v1/beacons",
          body: """
            {"advertisedId":{"type":"eddystone","id":"\(uid)"},
             "attachments":[{"namespacedType":"cafe/menu","data":"####"}]}
            """),
        400, naming: "attachments[0].data")
      try await expectAlive(server)
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func hugeAndOddNumbersAre4xx(_ engine: Engine) async throws {
    let server = try await start(engine)
    try await withShutdown(server) { server in
      for ttl in ["1e308", "-0", "0", "86400.0001", "-1e308"] {
        expect(
          try await report(
            server, #"{"subscribe":[{"id":"\#(UUID().uuidString)","strategy":{"ttl":\#(ttl)}}]}"#),
          400, naming: "subscribe[0].strategy.ttl")
      }
      for ttl in ["NaN", "1e400", "Infinity"] {
        let answer = try await report(
          server, #"{"subscribe":[{"id":"\#(UUID().uuidString)","strategy":{"ttl":\#(ttl)}}]}"#)
        #expect(answer.status == 400, "ttl \(ttl): \(answer.body)")
      }
      let token = "0011223344556677"
      func sighting(_ fields: String) -> String {
        #"{"sightings":[{"token":"\#(token)","medium":"ble","time":"2026-01-01T00:00:00Z",\#(fields)}]}"#
      }
      expect(try await report(server, sighting(#""rssi":1e308"#)), 400, naming: "sightings[0].rssi")
      expect(try await report(server, sighting(#""snr":-1e300"#)), 400, naming: "sightings[0].snr")
      expect(
        try await report(server, sighting(#""txPower":99999"#)), 400, naming: "sightings[0].txPower"
      )
      let hugeInt = try await report(server, sighting(#""txPower":1e30"#))
      #expect(hugeInt.status == 400, "\(hugeInt.body)")
      // A time that is not RFC 3339 was a 503 (the date transcoder's error was not a decoding one).
      let badTime = try await report(
        server, #"{"sightings":[{"token":"\#(token)","medium":"ble","time":"yesterday"}]}"#)
      #expect(badTime.status == 400, "\(badTime.body)")
      let fine = try await report(server, sighting(#""rssi":-60,"txPower":-59,"snr":12.5"#))
      #expect(fine.status == 200, "\(fine.body)")

      let eid = String(repeating: "ab", count: 8)
      let key = String(repeating: "00", count: 16)
      for (field, value) in [
        ("eid.clockValue", #""clockValue":99999999999"#),
        ("eid.clockValue", #""clockValue":-1"#),
        ("eid.rotationExponent", #""rotationExponent":1000,"clockValue":0"#),
      ] {
        let parameters =
          value.contains("rotationExponent") ? value : #""rotationExponent":4,\#(value)"#
        expect(
          try await call(
            .POST, server, "/v1/beacons",
            body: """
              {"advertisedId":{"type":"eddystone-eid","id":"\(eid)"},
               "eid":{"identityKey":"\(key)",\(parameters)}}
              """),
          400, naming: field)
      }
      let registered = try await call(.POST, server, "/v1/devices")
      let device = try #require(registered.json["id"])
      let secret = try #require(registered.json["secret"])
      for lastEventID in ["99999999999999999999", "9223372036854775808", "+5", "-1", "1e3"] {
        let answer = try await call(
          .GET, server, "/v1/devices/\(device)/events",
          headers: [ResolverContract.deviceSecretHeader: secret, "Last-Event-ID": lastEventID])
        expect(answer, 400, naming: "Last-Event-ID")
      }
      try await expectAlive(server)
    }
  }
}
