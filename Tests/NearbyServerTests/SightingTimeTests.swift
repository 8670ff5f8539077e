import Foundation
import NIOHTTP1
import Testing
import TestSupport
import ResolverWire

/// Over HTTP, a sighting counts by when it was heard: `sentAt` takes the device's clock out
/// (a device an hour off still finds), and a sighting heard long before its report is ignored.
@Suite("Sighting times over HTTP")
struct SightingTimeTests {
  typealias Device = RegisteredDevice

  func register(_ server: ServerHarness) async throws -> Device {
    try await server.registerDevice()
  }

  func report(_ server: ServerHarness, _ device: Device, _ body: String) async throws
    -> [String: Any]
  {
    let answer = try await rawRequest(
      .POST, server.url, path: "/v1/devices/\(device.id)/report",
      headers: [
        ResolverContract.apiKeyHeader: server.apiKey,
        ResolverContract.deviceSecretHeader: device.secret,
      ],
      body: body)
    #expect(answer.status == 200, "\(answer.status) \(answer.body)")
    return try #require(
      try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
  }

  func text(_ date: Date) -> String {
    let format = ISO8601DateFormatter()
    format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return format.string(from: date)
  }

  @Test func aSkewedClockStillFindsAndAStaleSightingDoesNot() async throws {
    let server = try await ServerHarness.start(lostAfter: .seconds(30))
    try await withShutdown(server) { server in
      let a = try await register(server)
      let b = try await register(server)
      let c = try await register(server)
      let published = try await report(
        server, a,
        #"{"publish":[{"id":"\#(UUID().uuidString)","message":{"content":"aGk="},"strategy":{"ttl":3600}}]}"#
      )
      let token = try #require((published["directives"] as? [String: Any])?["token"] as? String)
      for device in [b, c] {
        _ = try await report(
          server, device, #"{"subscribe":[{"id":"\#(UUID().uuidString)","strategy":{"ttl":3600}}]}"#
        )
      }

      // b's clock is an hour ahead: heard 2 s before it sent, by its clock.
      let ahead = Date().addingTimeInterval(3600)
      let skewed = try await report(
        server, b,
        #"{"sentAt":"\#(text(ahead))","sightings":[{"token":"\#(token)","medium":"ble","time":"\#(text(ahead.addingTimeInterval(-2)))"}]}"#
      )
      #expect((skewed["events"] as? [Any])?.count == 1, "\(skewed)")

      // c sends what it heard two minutes before: ignored.
      let now = Date()
      let stale = try await report(
        server, c,
        #"{"sentAt":"\#(text(now))","sightings":[{"token":"\#(token)","medium":"ble","time":"\#(text(now.addingTimeInterval(-120)))"}]}"#
      )
      #expect((stale["events"] as? [Any])?.isEmpty ?? true, "\(stale)")
    }
  }
}
