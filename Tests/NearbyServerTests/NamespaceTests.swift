import Foundation
import NIOHTTP1
import ServerStorage
import Testing
import TestSupport
import ResolverWire

/// Namespaces owned by projects, public or unlisted (issue 18): a project reads another's
/// public namespace when it names it, never an unlisted one, and never writes in a namespace
/// it does not own. On both databases, through HTTP.
@Suite("Namespaces and their visibility")
struct NamespaceTests {
  typealias Engine = HostileInputTests.Engine

  let uid = "0102030405060708090a" + "aabbccddeeff"
  let other = "0102030405060708090a" + "000000000001"

  func start(_ engine: Engine) async throws -> (ServerHarness, admin: String, client: String) {
    let server = try await HostileInputTests().start(engine)
    let (admin, client) = try await server.storage.transaction { store in
      (
        try store.apiKeys.createAPIKey(project: "other", role: .admin, label: "b", now: Date()).key,
        try store.apiKeys.createAPIKey(project: "other", role: .client, label: "b app", now: Date())
          .key
      )
    }
    return (server, admin, client)
  }

  func call(
    _ method: HTTPMethod, _ server: ServerHarness, _ path: String, key: String,
    body: String? = nil
  ) async throws -> RawAnswer {
    try await rawRequest(
      method, server.url, path: path, headers: [ResolverContract.apiKeyHeader: key], body: body)
  }

  func register(_ server: ServerHarness, key: String, uid: String, attachments: [String])
    async throws
    -> RawAnswer
  {
    let list = attachments.map { #"{"namespacedType": "\#($0)", "data": "c291cA=="}"# }
    return try await call(
      .POST, server, "/v1/beacons", key: key,
      body: """
        {"advertisedId": {"type": "eddystone", "id": "\(uid)"}, "description": "secret words",
         "attachments": [\(list.joined(separator: ","))]}
        """)
  }

  /// The answer's beacons: for each, its name, description and `namespacedType` → shared.
  func observe(_ server: ServerHarness, key: String, uids: [String], filters: [String])
    async throws -> [(name: String, description: String?, attachments: [String: Bool])]
  {
    let observations = uids.map { #"{"advertisedId": {"type": "eddystone", "id": "\#($0)"}}"# }
    let types = filters.map { "\"\($0)\"" }.joined(separator: ",")
    let answer = try await call(
      .POST, server, "/v1/beaconinfo:getforobserved", key: key,
      body:
        #"{"observations": [\#(observations.joined(separator: ","))], "namespacedTypes": [\#(types)]}"#
    )
    #expect(answer.status == 200, "\(answer.body)")
    let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
    let beacons = try #require(object?["beacons"] as? [[String: Any]])
    return beacons.map { beacon in
      let attachments = (beacon["attachments"] as? [[String: Any]]) ?? []
      return (
        beacon["beaconName"] as? String ?? "", beacon["description"] as? String,
        Dictionary(
          attachments.map {
            ($0["namespacedType"] as? String ?? "", $0["shared"] as? Bool ?? false)
          },
          uniquingKeysWith: { a, _ in a })
      )
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func aPublicNamespaceIsReadByAProjectThatNamesIt(_ engine: Engine) async throws {
    let (server, otherAdmin, otherClient) = try await start(engine)
    try await withShutdown(server) { server in
      // Project "test" (A) owns a.menus and a.secret; "other" (B) has a beacon of the same id
      // with an attachment of its own, and A has a second beacon B never registered.
      #expect(
        try await register(server, key: server.apiKey, uid: uid, attachments: ["a.menus/menu"])
          .status == 201)
      #expect(
        try await register(
          server, key: server.apiKey, uid: other, attachments: ["a.menus/menu", "a.secret/key"]
        ).status == 201)
      #expect(
        try await register(server, key: otherAdmin, uid: uid, attachments: ["b.own/note"])
          .status == 201)

      // Unlisted: naming it reads nothing of A's.
      var seen = try await observe(
        server, key: otherClient, uids: [uid, other], filters: ["*", "a.menus/*"])
      #expect(seen.count == 1)
      #expect(seen.first?.attachments == ["b.own/note": false])

      let made = try await call(
        .PATCH, server, "/v1/namespaces/a.menus", key: server.apiKey,
        body: #"{"visibility": "public"}"#)
      #expect(made.status == 200, "\(made.body)")
      #expect(made.json["visibility"] == "public")

      // Public and named: A's attachments in it join B's answer, marked shared; A's other
      // beacon answers with only them, without its description.
      seen = try await observe(
        server, key: otherClient, uids: [uid, other], filters: ["*", "a.menus/*"])
      #expect(seen.count == 2)
      #expect(seen.first?.attachments == ["b.own/note": false, "a.menus/menu": true])
      #expect(seen.last?.name == "eddystone!\(other)")
      #expect(seen.last?.description == nil)
      #expect(seen.last?.attachments == ["a.menus/menu": true])
      // By type too; `*` alone never reaches another project; an unlisted one stays closed.
      seen = try await observe(server, key: otherClient, uids: [other], filters: ["a.menus/menu"])
      #expect(seen.first?.attachments == ["a.menus/menu": true])
      #expect(try await observe(server, key: otherClient, uids: [other], filters: ["*"]).isEmpty)
      #expect(
        try await observe(server, key: otherClient, uids: [other], filters: ["a.secret/*"]).isEmpty)

      // Unlisted again: closed again.
      #expect(
        try await call(
          .PATCH, server, "/v1/namespaces/a.menus", key: server.apiKey,
          body: #"{"visibility": "unlisted"}"#
        ).status == 200)
      #expect(
        try await observe(server, key: otherClient, uids: [other], filters: ["a.menus/*"]).isEmpty)
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func aProjectNeverWritesInANamespaceItDoesNotOwn(_ engine: Engine) async throws {
    let (server, otherAdmin, otherClient) = try await start(engine)
    try await withShutdown(server) { server in
      #expect(
        try await register(server, key: server.apiKey, uid: uid, attachments: ["a.menus/menu"])
          .status == 201)
      // Registering with an attachment in A's namespace: refused, and no beacon is left.
      let registered = try await register(
        server, key: otherAdmin, uid: uid, attachments: ["a.menus/menu"])
      #expect(registered.status == 403, "\(registered.body)")
      #expect(registered.json["message"]?.contains("belongs to another project") == true)
      let theirs = try await server.storage.read { store in
        try store.beacons.beacons(project: "other")
      }
      #expect(theirs.isEmpty)
      // Attaching to B's own beacon in A's namespace, or changing its visibility: refused.
      #expect(try await register(server, key: otherAdmin, uid: uid, attachments: []).status == 201)
      let attached = try await call(
        .POST, server, "/v1/beacons/eddystone!\(uid)/attachments", key: otherAdmin,
        body: #"{"namespacedType": "a.menus/menu", "data": "c291cA=="}"#)
      #expect(attached.status == 403, "\(attached.body)")
      let patched = try await call(
        .PATCH, server, "/v1/namespaces/a.menus", key: otherAdmin,
        body: #"{"visibility": "public"}"#)
      #expect(patched.status == 403, "\(patched.body)")
      // A client key manages no namespace, even of its own project.
      let listedByClient = try await call(.GET, server, "/v1/namespaces", key: otherClient)
      #expect(listedByClient.status == 403)
      // Setting the visibility of a free namespace claims it.
      let claimed = try await call(
        .PATCH, server, "/v1/namespaces/b.claimed", key: otherAdmin,
        body: #"{"visibility": "unlisted"}"#)
      #expect(claimed.status == 200, "\(claimed.body)")

      func listed(_ key: String) async throws -> [String: String] {
        let answer = try await call(.GET, server, "/v1/namespaces", key: key)
        #expect(answer.status == 200, "\(answer.body)")
        let object =
          try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
        let list = try #require(object?["namespaces"] as? [[String: String]])
        return Dictionary(list.map { ($0["name"] ?? "", $0["visibility"] ?? "") }) { a, _ in a }
      }
      #expect(try await listed(server.apiKey) == ["a.menus": "unlisted"])
      #expect(try await listed(otherAdmin) == ["b.claimed": "unlisted"])
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func badNamespaceRequestsAreClientErrors(_ engine: Engine) async throws {
    let (server, _, _) = try await start(engine)
    try await withShutdown(server) { server in
      let cases: [(String, String)] = [
        ("/v1/namespaces/bad%20name", #"{"visibility": "public"}"#),
        ("/v1/namespaces/" + String(repeating: "n", count: 65), #"{"visibility": "public"}"#),
        ("/v1/namespaces/ok", #"{"visibility": "everyone"}"#),
        ("/v1/namespaces/ok", #"{}"#),
      ]
      for (path, body) in cases {
        let answer = try await call(.PATCH, server, path, key: server.apiKey, body: body)
        #expect(answer.status == 400, "\(path) \(body): \(answer.status) \(answer.body)")
      }
      let unclaimed = try await server.storage.read { store in try store.namespaces.namespace("ok")
      }
      #expect(unclaimed == nil)
    }
  }
}
