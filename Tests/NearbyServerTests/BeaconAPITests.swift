import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TestSupport
import ResolverWire

/// Beacons and attachments over HTTP: registration, attachments, getforobserved with its
/// filters, the limits, and isolation between projects.
@Suite("Beacon API")
struct BeaconAPITests {
  let uid = "0102030405060708090a" + "aabbccddeeff"
  let ibeacon = String(repeating: "ab", count: 16) + "0001" + "0002"

  func call(
    _ method: HTTPMethod, _ server: ServerHarness, _ path: String, key: String? = nil,
    body: String? = nil
  ) async throws -> RawAnswer {
    try await rawRequest(
      method, server.url, path: path,
      headers: [ResolverContract.apiKeyHeader: key ?? server.apiKey],
      body: body)
  }

  func json(_ answer: RawAnswer) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
  }

  @Test func registerAttachAndGetForObserved() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let menu = Data("soup of the day".utf8).base64EncodedString()
      let registered = try await call(
        .POST, server, "/v1/beacons",
        body: """
          {"advertisedId": {"type": "eddystone", "id": "\(uid)"}, "description": "door",
           "attachments": [{"namespacedType": "cafe/menu", "data": "\(menu)"}]}
          """)
      #expect(registered.status == 201)
      let beaconName = try #require(try json(registered)["beaconName"] as? String)
      #expect(beaconName == "eddystone!\(uid)")
      let again = try await call(
        .POST, server, "/v1/beacons",
        body: #"{"advertisedId": {"type": "eddystone", "id": "\#(uid)"}}"#)
      #expect(again.status == 409)

      let added = try await call(
        .POST, server, "/v1/beacons/\(beaconName)/attachments",
        body: #"{"namespacedType": "cafe/hours", "data": "OS0xNw=="}"#)
      #expect(added.status == 201)
      let attachmentName = try #require(try json(added)["attachmentName"] as? String)

      func observed(_ types: String) async throws -> [String] {
        let answer = try await call(
          .POST, server, "/v1/beaconinfo:getforobserved",
          body: """
            {"observations": [{"advertisedId": {"type": "eddystone", "id": "\(uid)"}},
                              {"advertisedId": {"type": "ibeacon", "id": "\(ibeacon)"}}],
             "namespacedTypes": \(types)}
            """)
        #expect(answer.status == 200)
        let beacons = try #require(try json(answer)["beacons"] as? [[String: Any]])
        return beacons.flatMap { beacon in
          (beacon["attachments"] as? [[String: Any]] ?? []).compactMap {
            $0["namespacedType"] as? String
          }
        }
      }
      #expect(try await observed(#"["*"]"#) == ["cafe/menu", "cafe/hours"])
      #expect(try await observed(#"["cafe/hours"]"#) == ["cafe/hours"])
      #expect(try await observed(#"["cafe/*"]"#) == ["cafe/menu", "cafe/hours"])
      #expect(try await observed(#"["shop/*"]"#).isEmpty)

      let removed = try await call(
        .DELETE, server, "/v1/beacons/\(beaconName)/attachments/\(attachmentName)")
      #expect(removed.status == 204)
      #expect(try await observed(#"["*"]"#) == ["cafe/menu"])
      let list = try await call(.GET, server, "/v1/beacons")
      #expect((try json(list)["beacons"] as? [Any])?.count == 1)
      #expect(try await call(.DELETE, server, "/v1/beacons/\(beaconName)").status == 204)
      #expect(try await call(.DELETE, server, "/v1/beacons/\(beaconName)").status == 404)
      #expect(try await observed(#"["*"]"#).isEmpty)
    }
  }

  @Test func limitsAndMalformedIDsAreNamed() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let short = try await call(
        .POST, server, "/v1/beacons", body: #"{"advertisedId": {"type": "ibeacon", "id": "abcd"}}"#)
      #expect(short.status == 400)
      #expect(short.json["message"]?.contains("20 bytes") == true)
      let big = Data(count: 1025).base64EncodedString()
      let tooBig = try await call(
        .POST, server, "/v1/beacons",
        body: """
          {"advertisedId": {"type": "eddystone", "id": "\(uid)"},
           "attachments": [{"namespacedType": "cafe/menu", "data": "\(big)"}]}
          """)
      #expect(tooBig.status == 422)
      #expect(tooBig.json["message"]?.contains("1024") == true)
      let badType = try await call(
        .POST, server, "/v1/beacons",
        body: """
          {"advertisedId": {"type": "eddystone", "id": "\(uid)"},
           "attachments": [{"namespacedType": "no-slash", "data": ""}]}
          """)
      #expect(badType.status == 400)
      let unknown = try await call(
        .POST, server, "/v1/beacons/eddystone!00/attachments",
        body: #"{"namespacedType": "a/b", "data": ""}"#)
      #expect(unknown.status == 404)
    }
  }

  @Test func aProjectNeverSeesAnothersBeacons() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let other = try await server.storage.transaction { store in
        try store.apiKeys.createAPIKey(project: "other", role: .admin, label: "", now: Date())
      }.key
      let registered = try await call(
        .POST, server, "/v1/beacons",
        body: """
          {"advertisedId": {"type": "eddystone", "id": "\(uid)"},
           "attachments": [{"namespacedType": "cafe/menu", "data": "aGk="}]}
          """)
      #expect(registered.status == 201)
      let seenByOther = try await call(
        .POST, server, "/v1/beaconinfo:getforobserved", key: other,
        body: """
          {"observations": [{"advertisedId": {"type": "eddystone", "id": "\(uid)"}}],
           "namespacedTypes": ["*"]}
          """)
      #expect(seenByOther.status == 200)
      #expect((try json(seenByOther)["beacons"] as? [Any])?.isEmpty == true)
      let list = try await call(.GET, server, "/v1/beacons", key: other)
      #expect((try json(list)["beacons"] as? [Any])?.isEmpty == true)
      let delete = try await call(.DELETE, server, "/v1/beacons/eddystone!\(uid)", key: other)
      #expect(delete.status == 404)
      // The other project may register the same id for itself.
      let own = try await call(
        .POST, server, "/v1/beacons", key: other,
        body: #"{"advertisedId": {"type": "eddystone", "id": "\#(uid)"}}"#)
      #expect(own.status == 201)
    }
  }
}
