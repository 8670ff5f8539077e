import Foundation
import Testing

/// `nearby namespaces list/set-visibility` against a `nearby server` this test starts (issue 18).
@Suite("Namespaces from the CLI")
struct NamespaceCommandTests {
  @Test func listSetVisibilityAndAnotherProjectRefused() async throws {
    let server = try await CLIServer.start()
    defer { server.stop() }
    let registered = try await server.run(
      ["beacons", "register", "--uid", "00112233445566778899:aabbccddeeff"] + server.common)
    #expect(registered.status == 0, "\(registered.err)")
    let attached = try await server.run(
      [
        "beacons", "attach", "eddystone!00112233445566778899aabbccddeeff", "--type",
        "com.example.offers/coupon", "--data", "10%",
      ] + server.common)
    #expect(attached.status == 0, "\(attached.err)")

    // The attachment made the namespace the project's, unlisted.
    var listed = try await server.run(["namespaces", "list"] + server.common)
    #expect(listed.status == 0, "\(listed.err)")
    #expect(listed.out == "com.example.offers\tunlisted", "\(listed.out)")
    let made = try await server.run(
      ["namespaces", "set-visibility", "com.example.offers", "public", "--json"] + server.common)
    #expect(made.status == 0, "\(made.err)")
    let object = try JSONSerialization.jsonObject(with: Data(made.out.utf8)) as? [String: String]
    #expect(object == ["name": "com.example.offers", "visibility": "public"])
    listed = try await server.run(["namespaces", "list", "--json"] + server.common)
    #expect(listed.out.contains(#""visibility":"public""#), "\(listed.out)")

    // Another project's admin: refused with the server's reason, exit 77.
    let created = try await server.run(
      ["server", "keys", "create", "--project", "other", "--role", "admin", "--json"])
    #expect(created.status == 0, "\(created.err)")
    let otherKey = try #require(
      (try JSONSerialization.jsonObject(with: Data(created.out.utf8)) as? [String: Any])?["key"]
        as? String)
    let refused = try await server.run(
      [
        "namespaces", "set-visibility", "com.example.offers", "unlisted", "--server", server.url,
        "--api-key", otherKey,
      ])
    #expect(refused.status == 77)
    #expect(refused.err.contains("belongs to another project"), "\(refused.err)")

    // Checked before asking: a name the server would refuse, a visibility that is neither.
    let badName = try await server.run(
      ["namespaces", "set-visibility", "bad/name", "public"] + server.common)
    #expect(badName.status == 64)
    #expect(badName.err.contains("[A-Za-z0-9._-]"), "\(badName.err)")
    let badVisibility = try await server.run(
      ["namespaces", "set-visibility", "ok", "everyone"] + server.common)
    #expect(badVisibility.status == 64)
  }
}
