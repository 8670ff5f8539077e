import AsyncHTTPClient
import Foundation
import NearbyServer
import ResolverWire
import ServerStorage
import ServerTestSupport
import Synchronization
import Testing
import TestSupport
import NearbyTesting

/// Issue 39: revoking a key ends its open event streams within 5 s (the API key cache's
/// lifetime, the delay `nearby-server keys revoke` promises) on every instance that shares the
/// database. A stream used to notice only at its next wake or heartbeat: 13 s after the key
/// was revoked it was still open.
@Suite("Revoked keys")
struct KeyRevocationTests {
  typealias Engine = ServerHarness.Engine

  /// Streams of the revoked key on every instance (two over one PostgreSQL database; on
  /// SQLite, one server: a file is served by one process), revoked from another storage on the
  /// same database, as `nearby-server keys revoke` does; another key's stream stays open.
  @Test(.requires(.postgres), arguments: Engine.allCases)
  func revokingAKeyEndsItsStreamsOnEveryInstance(_ engine: Engine) async throws {
    let open: () async throws -> any ResolverStorage
    switch engine {
    case .sqlite:
      let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("nearby-server-\(UUID().uuidString)/db.sqlite").path
      open = { try SQLiteStorage(path: path) }
    case .postgres:
      let url = try await TestPostgres.freshDatabase()
      open = { try await PostgresStorage(url: url) }
    }
    // No stream reads on its own before the heartbeat (15 s): only the revocation ends them.
    let configure: (inout ResolverServerConfiguration) -> Void = {
      $0.eventPollInterval = .seconds(60)
    }
    var started = [try await ServerHarness.start(storage: try await open(), configure: configure)]
    if engine == .postgres {
      started.append(
        try await ServerHarness.start(storage: try await open(), configure: configure))
    }
    let (servers, keys) = (started, try await open())
    try await withTeardown {
      for server in servers { await server.shutdown() }
      await keys.shutdown()
    } _: {
      let (revoked, kept) = try await keys.transaction { store in
        (
          try store.apiKeys.createAPIKey(
            project: "test", role: .client, label: "revoked", now: Date()),
          try store.apiKeys.createAPIKey(project: "test", role: .client, label: "kept", now: Date())
        )
      }
      // The revoked key's streams tell one signal when they end, which the wait below heeds.
      let ends = ChangeSignal()
      var streams: [EventStream] = []
      for server in servers {
        streams.append(try await EventStream.open(server, key: revoked.key, signalling: ends))
      }
      let other = try await EventStream.open(servers[0], key: kept.key)
      let revokedStreams = streams
      let id = revoked.record.id
      #expect(
        try await keys.transaction { store in try store.apiKeys.revokeAPIKey(id: id, now: Date()) })
      let start = ContinuousClock.now
      let ended = await ends.wait() { revokedStreams.allSatisfy(\.hasEnded) }
      #expect(ended, "still open \(start.duration(to: .now)) after the key was revoked")
      #expect(!other.hasEnded, "another key's stream ended too")
      for stream in revokedStreams + [other] { stream.reader.cancel() }
    }
  }
}

/// A device's event stream, read until it ends.
struct EventStream: Sendable {
  let reader: Task<Void, Never>
  private let ended: Flag

  var hasEnded: Bool { ended.isSet }

  /// Registers a device with `key` and opens its stream on `server` (its answer's head read);
  /// its end is told to `changes`.
  static func open(
    _ server: ServerHarness, key: String, signalling changes: ChangeSignal = ChangeSignal()
  ) async throws -> EventStream {
    let device = try await server.registerDevice(key: key)
    var request = HTTPClientRequest(
      url: server.url.absoluteString + "/v1/devices/\(device.id)/events")
    request.headers.add(name: ResolverContract.apiKeyHeader, value: key)
    request.headers.add(name: ResolverContract.deviceSecretHeader, value: device.secret)
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
    #expect(response.status.code == 200)
    let ended = Flag(signalling: changes)
    let reader = Task {
      do { for try await _ in response.body {} } catch {}
      ended.set()
    }
    return EventStream(reader: reader, ended: ended)
  }

  /// Set once when the stream ends; tells `changes` then.
  final class Flag: Sendable {
    private let value = Mutex(false)
    private let changes: ChangeSignal
    init(signalling changes: ChangeSignal) { self.changes = changes }
    var isSet: Bool { value.withLock { $0 } }
    func set() {
      value.withLock { $0 = true }
      changes.changed()
    }
  }
}
