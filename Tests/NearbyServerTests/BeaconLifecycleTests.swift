import Foundation
import NIOHTTP1
import Resolution
import ServerStorage
import Testing
import TestSupport
import Tokens
import ResolverWire

/// The beacon lifecycle and metadata (issue 18): active, inactive and decommissioned beacons,
/// updates, and listings in pages with filters. On both databases, through HTTP.
@Suite("Beacon lifecycle and metadata")
struct BeaconLifecycleTests {
  typealias Engine = HostileInputTests.Engine

  func call(
    _ method: HTTPMethod, _ server: ServerHarness, _ path: String, body: String? = nil
  ) async throws -> RawAnswer {
    try await rawRequest(
      method, server.url, path: path, headers: [ResolverContract.apiKeyHeader: server.apiKey],
      body: body)
  }

  func uid(_ index: Int) -> String { "0102030405060708090a" + String(format: "%012x", index) }

  func object(_ answer: RawAnswer) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
  }

  /// The attachments' `namespacedType`s answered for an observed UID.
  func served(_ server: ServerHarness, _ index: Int) async throws -> [String] {
    let answer = try await call(
      .POST, server, "/v1/beaconinfo:getforobserved",
      body:
        #"{"observations": [{"advertisedId": {"type": "eddystone", "id": "\#(uid(index))"}}], "namespacedTypes": ["*"]}"#
    )
    #expect(answer.status == 200, "\(answer.body)")
    let beacons = try object(answer)["beacons"] as? [[String: Any]] ?? []
    return beacons.flatMap {
      ($0["attachments"] as? [[String: Any]] ?? []).compactMap { $0["namespacedType"] as? String }
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func inactiveIsKeptButNotServedAndDecommissionedIsFinal(_ engine: Engine) async throws {
    let server = try await HostileInputTests().start(engine)
    try await withShutdown(server) { server in
      let registered = try await call(
        .POST, server, "/v1/beacons",
        body: """
          {"advertisedId": {"type": "eddystone", "id": "\(uid(1))"}, "status": "inactive",
           "attachments": [{"namespacedType": "cafe/menu", "data": "c291cA=="}],
           "properties": {"floor": "2", "owner": "cafe"}, "place": "Hall B",
           "latLng": {"latitude": 48.8584, "longitude": 2.2945}, "indoorLevel": "2",
           "expectedStability": "stable"}
          """)
      #expect(registered.status == 201, "\(registered.body)")
      let beacon = try object(registered)
      #expect(beacon["status"] as? String == "inactive")
      #expect(beacon["properties"] as? [String: String] == ["floor": "2", "owner": "cafe"])
      #expect(beacon["place"] as? String == "Hall B")
      #expect((beacon["latLng"] as? [String: Double])?["latitude"] == 48.8584)
      #expect(beacon["expectedStability"] as? String == "stable")
      let name = "eddystone!\(uid(1))"

      // Inactive: kept, not served. Active again: served.
      #expect(try await served(server, 1).isEmpty)
      let activated = try await call(
        .PATCH, server, "/v1/beacons/\(name)", body: #"{"status": "active", "place": "Hall C"}"#)
      #expect(activated.status == 200, "\(activated.body)")
      #expect(try object(activated)["place"] as? String == "Hall C")
      #expect(try object(activated)["indoorLevel"] as? String == "2", "untouched fields stay")
      #expect(try await served(server, 1) == ["cafe/menu"])

      // Decommissioned: attachments gone, never served, never registered again, never changed.
      let retired = try await call(
        .PATCH, server, "/v1/beacons/\(name)", body: #"{"status": "decommissioned"}"#)
      #expect(retired.status == 200, "\(retired.body)")
      #expect((try object(retired)["attachments"] as? [Any])?.isEmpty == true)
      #expect(try await served(server, 1).isEmpty)
      let again = try await call(
        .POST, server, "/v1/beacons",
        body: #"{"advertisedId": {"type": "eddystone", "id": "\#(uid(1))"}}"#)
      #expect(again.status == 409)
      #expect(again.json["message"]?.contains("never be registered again") == true, "\(again.body)")
      #expect(
        try await call(.PATCH, server, "/v1/beacons/\(name)", body: #"{"status": "active"}"#)
          .status == 409)
      #expect(try await call(.DELETE, server, "/v1/beacons/\(name)").status == 409)
      let attached = try await call(
        .POST, server, "/v1/beacons/\(name)/attachments",
        body: #"{"namespacedType": "cafe/menu", "data": "c291cA=="}"#)
      #expect(attached.status == 404)
      #expect(
        try await call(.PATCH, server, "/v1/beacons/eddystone!\(uid(9))", body: "{}").status == 404)
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func anInactiveEIDBeaconIsNotResolved(_ engine: Engine) async throws {
    let server = try await HostileInputTests().start(engine)
    try await withShutdown(server) { server in
      let key = String(repeating: "0a", count: 16)
      let generator = try EddystoneEIDGenerator(
        identityKey: Array(Hex.decode(key) ?? []), rotationExponent: 10)
      let eid = Hex.encode(generator.eid(beaconTime: 66036))
      let registered = try await call(
        .POST, server, "/v1/beacons",
        body: """
          {"advertisedId": {"type": "eddystone-eid", "id": "\(eid)"},
           "eid": {"identityKey": "\(key)", "rotationExponent": 10, "clockValue": 66036},
           "attachments": [{"namespacedType": "cafe/menu", "data": "c291cA=="}]}
          """)
      #expect(registered.status == 201, "\(registered.body)")
      func resolved() async throws -> Int {
        let answer = try await call(
          .POST, server, "/v1/beaconinfo:getforobserved",
          body:
            #"{"observations": [{"advertisedId": {"type": "eddystone-eid", "id": "\#(eid)"}}], "namespacedTypes": ["*"]}"#
        )
        return (try object(answer)["beacons"] as? [Any])?.count ?? -1
      }
      #expect(try await resolved() == 1)
      let path = "/v1/beacons/eddystone-eid!\(eid)"
      #expect(try await call(.PATCH, server, path, body: #"{"status": "inactive"}"#).status == 200)
      #expect(try await resolved() == 0)
      #expect(try await call(.PATCH, server, path, body: #"{"status": "active"}"#).status == 200)
      #expect(try await resolved() == 1)
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func listingsComeInPagesAndFilter(_ engine: Engine) async throws {
    let server = try await HostileInputTests().start(engine)
    try await withShutdown(server) { server in
      for index in 1...5 {
        let attachment = index % 2 == 0 ? "cafe/menu" : "shop/price"
        let answer = try await call(
          .POST, server, "/v1/beacons",
          body: """
            {"advertisedId": {"type": "eddystone", "id": "\(uid(index))"},
             "status": "\(index == 5 ? "inactive" : "active")",
             "properties": {"floor": "\(index % 3)"},
             "attachments": [{"namespacedType": "\(attachment)", "data": "c291cA=="}]}
            """)
        #expect(answer.status == 201, "\(answer.body)")
      }
      func list(_ query: String) async throws -> (names: [String], next: String?, status: Int) {
        let answer = try await call(.GET, server, "/v1/beacons?\(query)")
        guard answer.status == 200 else { return ([], nil, answer.status) }
        let page = try object(answer)
        let names = (page["beacons"] as? [[String: Any]] ?? []).compactMap {
          ($0["beaconName"] as? String)?.suffix(1).description
        }
        return (names, page["nextPageToken"] as? String, 200)
      }
      // Pages of 2: 1 2, 3 4, 5.
      var pages: [[String]] = []
      var token: String?
      repeat {
        let page = try await list("pageSize=2" + (token.map { "&pageToken=\($0)" } ?? ""))
        pages.append(page.names)
        token = page.next
      } while token != nil && pages.count < 5
      #expect(pages == [["1", "2"], ["3", "4"], ["5"]])
      #expect(try await list("status=inactive").names == ["5"])
      #expect(try await list("property=floor%3D1").names == ["1", "4"])
      #expect(try await list("attachmentType=cafe/*").names == ["2", "4"])
      #expect(try await list("attachmentType=shop/price&status=active").names == ["1", "3"])
      #expect(try await list("registeredAfter=2000-01-01T00:00:00Z").names.count == 5)
      #expect(try await list("registeredAfter=2999-01-01T00:00:00Z").names.isEmpty)
      // Malformed: 400, never 5xx.
      for query in [
        "pageToken=bm90LWEtdG9rZW4", "property=nokey", "attachmentType=bad", "pageSize=0",
        "registeredAfter=yesterday", "status=lost",
      ] {
        #expect(try await list(query).status == 400, "\(query)")
      }
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func attachmentsAreListedAndDeletedByType(_ engine: Engine) async throws {
    let server = try await HostileInputTests().start(engine)
    try await withShutdown(server) { server in
      let types = ["cafe/menu", "cafe/menu", "cafe/price", "shop/price"]
      let list = types.map { #"{"namespacedType": "\#($0)", "data": "c291cA=="}"# }
      #expect(
        try await call(
          .POST, server, "/v1/beacons",
          body:
            #"{"advertisedId": {"type": "eddystone", "id": "\#(uid(1))"}, "attachments": [\#(list.joined(separator: ","))]}"#
        ).status == 201)
      let path = "/v1/beacons/eddystone!\(uid(1))/attachments"
      func listed(_ query: String) async throws -> [String] {
        let answer = try await call(.GET, server, path + query)
        #expect(answer.status == 200, "\(answer.body)")
        return (try object(answer)["attachments"] as? [[String: Any]] ?? []).compactMap {
          $0["namespacedType"] as? String
        }
      }
      #expect(try await listed("").sorted() == types.sorted())
      #expect(try await listed("?namespacedType=cafe/menu") == ["cafe/menu", "cafe/menu"])
      #expect(
        try await listed("?namespacedType=cafe/*").sorted() == [
          "cafe/menu", "cafe/menu", "cafe/price",
        ])
      let deleted = try await call(.POST, server, path + ":batchDelete?namespacedType=cafe/*")
      #expect(deleted.status == 200, "\(deleted.body)")
      #expect(try object(deleted)["deletedCount"] as? Int == 3)
      #expect(try await listed("") == ["shop/price"])
      let all = try await call(.POST, server, path + ":batchDelete")
      #expect(try object(all)["deletedCount"] as? Int == 1)
      #expect(try await listed("").isEmpty)
      #expect(try await call(.GET, server, path + "?namespacedType=bad").status == 400)
      #expect(
        try await call(.POST, server, "/v1/beacons/eddystone!\(uid(2))/attachments:batchDelete")
          .status == 404)
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func anAttachmentsRangeIsKeptServedAndBounded(_ engine: Engine) async throws {
    let server = try await HostileInputTests().start(engine)
    try await withShutdown(server) { server in
      #expect(
        try await call(
          .POST, server, "/v1/beacons",
          body: #"{"advertisedId": {"type": "eddystone", "id": "\#(uid(1))"}}"#
        ).status == 201)
      let path = "/v1/beacons/eddystone!\(uid(1))/attachments"
      let added = try await call(
        .POST, server, path,
        body: #"{"namespacedType": "cafe/door", "data": "aGk=", "maxDistanceMeters": 2.5}"#)
      #expect(added.status == 201, "\(added.body)")
      #expect(try object(added)["maxDistanceMeters"] as? Double == 2.5)
      for distance in ["0.05", "1000.5", "-1"] {
        let refused = try await call(
          .POST, server, path,
          body:
            #"{"namespacedType": "cafe/door", "data": "aGk=", "maxDistanceMeters": \#(distance)}"#
        )
        #expect(refused.status == 400, "\(distance): \(refused.body)")
        #expect(refused.json["message"]?.contains("maxDistanceMeters") == true, "\(refused.body)")
      }
      let listed = try object(try await call(.GET, server, path))
      let attachments = try #require(listed["attachments"] as? [[String: Any]])
      #expect(attachments.map { $0["maxDistanceMeters"] as? Double } == [2.5])
      let answer = try await call(
        .POST, server, "/v1/beaconinfo:getforobserved",
        body:
          #"{"observations": [{"advertisedId": {"type": "eddystone", "id": "\#(uid(1))"}}], "namespacedTypes": ["cafe/*"]}"#
      )
      let beacon = try #require((try object(answer)["beacons"] as? [[String: Any]])?.first)
      let served = try #require((beacon["attachments"] as? [[String: Any]])?.first)
      #expect(served["maxDistanceMeters"] as? Double == 2.5)
    }
  }

  @Test(.requires(.postgres), arguments: Engine.allCases)
  func metadataIsBounded(_ engine: Engine) async throws {
    let server = try await HostileInputTests().start(engine)
    try await withShutdown(server) { server in
      #expect(
        try await call(
          .POST, server, "/v1/beacons",
          body: #"{"advertisedId": {"type": "eddystone", "id": "\#(uid(1))"}}"#
        ).status == 201)
      let path = "/v1/beacons/eddystone!\(uid(1))"
      let many = (0...32).map { "\"k\($0)\": \"v\"" }.joined(separator: ",")
      let cases: [(String, Int)] = [
        (#"{"properties": {\#(many)}}"#, 422),
        (#"{"latLng": {"latitude": 91, "longitude": 0}}"#, 400),
        (#"{"place": "\#(String(repeating: "p", count: 257))"}"#, 422),
        (#"{"indoorLevel": "a\u0001b"}"#, 400),
        (#"{"properties": {"a=b": "c"}}"#, 400),
        (#"{"expectedStability": "sometimes"}"#, 400),
      ]
      for (body, status) in cases {
        let answer = try await call(.PATCH, server, path, body: body)
        #expect(answer.status == status, "\(body): \(answer.status) \(answer.body)")
      }
      let unchanged = try await server.storage.read { store in
        try store.beacons.beacon(project: "test", name: "eddystone!\(uid(1))")
      }
      #expect(unchanged?.metadata == BeaconMetadata())
    }
  }
}
