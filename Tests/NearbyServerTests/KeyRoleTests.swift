import Foundation
import NIOHTTP1
import ServerStorage
import Testing
import TestSupport
import ResolverWire

/// A client key (the one every installed app carries) registers devices, reports, reads events
/// and asks for observed beacons' attachments, and nothing else; an admin key does all of it.
@Suite("API key roles")
struct KeyRoleTests {
  let uid = "0102030405060708090a" + "aabbccddeeff"

  @Test func aClientKeyCannotManageTheProject() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let client = try await server.storage.transaction { store in
        try store.apiKeys.createAPIKey(project: "test", role: .client, label: "app", now: Date())
      }.key
      let admin = server.apiKey

      func call(_ method: HTTPMethod, _ path: String, key: String, body: String? = nil)
        async throws -> RawAnswer
      {
        try await rawRequest(
          method, server.url, path: path, headers: [ResolverContract.apiKeyHeader: key], body: body)
      }

      // The client's own work.
      let registered = try await call(.POST, "/v1/devices", key: client)
      #expect(registered.status == 201)
      let device = try #require(registered.json["id"])
      let secret = try #require(registered.json["secret"])
      let report = try await rawRequest(
        .POST, server.url, path: "/v1/devices/\(device)/report",
        headers: [
          ResolverContract.apiKeyHeader: client, ResolverContract.deviceSecretHeader: secret,
        ], body: "{}")
      #expect(report.status == 200, "\(report.body)")
      let beaconBody = #"{"advertisedId": {"type": "eddystone", "id": "\#(uid)"}}"#
      let observed = try await call(
        .POST, "/v1/beaconinfo:getforobserved", key: client,
        body: #"{"observations": [\#(beaconBody)], "namespacedTypes": ["*"]}"#)
      #expect(observed.status == 200, "\(observed.body)")

      // Managing the project is refused, with the fix named, and changes nothing.
      let name = "eddystone!\(uid)"
      let attachment = #"{"namespacedType": "cafe/menu", "data": "c291cA=="}"#
      let adminOnly: [(HTTPMethod, String, String?)] = [
        (.POST, "/v1/beacons", beaconBody),
        (.GET, "/v1/beacons", nil),
        (.DELETE, "/v1/beacons/\(name)", nil),
        (.POST, "/v1/beacons/\(name)/attachments", attachment),
        (.DELETE, "/v1/beacons/\(name)/attachments/a1", nil),
      ]
      for (method, path, body) in adminOnly {
        let answer = try await call(method, path, key: client, body: body)
        #expect(answer.status == 403, "\(method) \(path): \(answer.status) \(answer.body)")
        #expect(answer.json["error"] == "forbidden")
        #expect(answer.json["message"]?.contains("--role admin") == true, "\(answer.body)")
      }
      let beacons = try await server.storage.read { store in
        try store.beacons.beacons(project: "test")
      }
      #expect(beacons.isEmpty)

      // The admin key does all of it, and a device's work too.
      #expect(try await call(.POST, "/v1/beacons", key: admin, body: beaconBody).status == 201)
      #expect(try await call(.GET, "/v1/beacons", key: admin).status == 200)
      #expect(
        try await call(.POST, "/v1/beacons/\(name)/attachments", key: admin, body: attachment)
          .status == 201)
      #expect(try await call(.DELETE, "/v1/beacons/\(name)", key: admin).status == 204)
      #expect(try await call(.POST, "/v1/devices", key: admin).status == 201)
    }
  }

  @Test func rolesAreStoredAndListed() async throws {
    let server = try await ServerHarness.start()
    try await withShutdown(server) { server in
      let keys = try await server.storage.transaction { store in
        _ = try store.apiKeys.createAPIKey(project: "roles", role: .client, label: "", now: Date())
        return try store.apiKeys.apiKeys(project: "roles")
      }
      #expect(keys.map(\.role) == [.client])
      #expect(APIKeyRole.admin.includes(.client) && APIKeyRole.admin.includes(.admin))
      #expect(APIKeyRole.client.includes(.client) && !APIKeyRole.client.includes(.admin))
    }
  }
}
