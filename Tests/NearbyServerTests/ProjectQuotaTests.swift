import Core
import Foundation
import NIOHTTP1
import Resolution
import ServerStorage
import Testing
import TestSupport
import Tokens
import ResolverWire

/// One project's key (which every installed app carries) cannot fill the database: a project
/// keeps at most so many devices, and past its stored-bytes quota it may not publish or attach
/// more (issue 16).
@Suite("Project quotas")
struct ProjectQuotaTests {
  @Test func registrationsStopAtTheDeviceQuota() async throws {
    let server = try await ServerHarness.start { $0.projectQuotas.maximumDevices = 2 }
    try await withShutdown(server) { server in
      var statuses: [Int] = []
      for _ in 0..<3 {
        statuses.append(
          try await rawRequest(
            .POST, server.url, path: "/v1/devices",
            headers: [ResolverContract.apiKeyHeader: server.apiKey]
          ).status)
      }
      #expect(statuses == [201, 201, 422])
      // Another project is not held back by this one.
      let other = try await server.storage.transaction { store in
        try store.apiKeys.createAPIKey(project: "other", role: .client, label: "", now: Date())
      }.key
      let elsewhere = try await rawRequest(
        .POST, server.url, path: "/v1/devices", headers: [ResolverContract.apiKeyHeader: other])
      #expect(elsewhere.status == 201)
    }
  }

  @Test func overItsStoredBytesAProjectMayNotPublishOrAttach() async throws {
    let storage = try SQLiteStorage(
      path: FileManager.default.temporaryDirectory
        .appendingPathComponent("nearby-quota-\(UUID().uuidString)/db.sqlite").path)
    // 3 KiB of attachments before the server starts; the quota is 2 KiB.
    let attachments = try (0..<3).map { _ in
      try NewAttachment(namespacedType: "cafe/menu", data: Array(repeating: 1, count: 1024))
    }
    let id = try BeaconID(kind: .eddystoneUID, hex: String(repeating: "ab", count: 16))
    _ = try await storage.transaction { store in
      try store.beacons.registerBeacon(
        project: "test", advertisedID: id, description: "", attachments: attachments, now: Date())
    }
    let server = try await ServerHarness.start(storage: storage) {
      $0.projectQuotas.maximumStoredBytes = 2048
    }
    try await withShutdown(server) { server in
      let headers = [ResolverContract.apiKeyHeader: server.apiKey]
      let registered = try await rawRequest(
        .POST, server.url, path: "/v1/devices", headers: headers)
      let device = try #require(registered.json["id"])
      let secret = try #require(registered.json["secret"])
      let publish = try await rawRequest(
        .POST, server.url, path: "/v1/devices/\(device)/report",
        headers: headers.merging([ResolverContract.deviceSecretHeader: secret]) { a, _ in a },
        body: #"{"publish":[{"id":"\#(UUID().uuidString)","message":{"content":"aGk="}}]}"#)
      #expect(publish.status == 422)
      #expect(publish.json["message"]?.contains("quota of 2048") == true, "\(publish.body)")
      // Reports that add nothing stored still go through.
      let sightings = try await rawRequest(
        .POST, server.url, path: "/v1/devices/\(device)/report",
        headers: headers.merging([ResolverContract.deviceSecretHeader: secret]) { a, _ in a },
        body: "{}")
      #expect(sightings.status == 200)
      let attach = try await rawRequest(
        .POST, server.url, path: "/v1/beacons/\(id.name)/attachments", headers: headers,
        body: #"{"namespacedType": "cafe/hours", "data": "OS0xNw=="}"#)
      #expect(attach.status == 422)
    }
  }
}
