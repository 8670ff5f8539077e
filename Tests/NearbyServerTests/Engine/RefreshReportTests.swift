@_spi(Resolver) import Core
import Dispatch
import Foundation
@_spi(Resolver) import Resolution
@_spi(Resolver) import NearbyServer
@_spi(Resolver) import ServerStorage
import ServerTestSupport
import Strategy
import Synchronization
import Testing
import TestSupport
import Tokens
import NearbyTesting

/// Which reports may be refreshes, judged from the report and the authenticated device
/// alone: no database.
@Suite("Refresh reports: the route")
struct RefreshRouteTests {
  static let configuration = EngineOnStorageTests.configuration
  static let now = Date(timeIntervalSince1970: 1_800_000_000)

  static func route(_ report: Report) -> RefreshReport.Route {
    RefreshReport.route(report, from: .random(), configuration: configuration, now: now)
  }

  @Test func handleChangesTakeTheGeneralPath() {
    let publication = PublicationSpec(
      id: .random(), message: Message(text: "m", type: "t"), strategy: .default)
    for report in [
      Report(publish: [publication]), Report(unpublish: [.random()]),
      Report(subscribe: [SubscriptionSpec(id: .random())]), Report(unsubscribe: [.random()]),
    ] {
      #expect(Self.route(report) == .general(.changesHandles))
    }
  }

  /// The engine refuses a sighting of no medium, of two, or of one it does not know: its
  /// path answers that.
  @Test func aSightingOfNoSingleKnownMediumTakesTheGeneralPath() {
    for medium: DiscoveryMediums in [[], [.ble, .audio], DiscoveryMediums(rawValue: 1 << 20)] {
      let report = Report(sightings: [Sighting(token: .random(), medium: medium, time: Self.now)])
      #expect(Self.route(report) == .general(.invalidMedium), "\(medium)")
    }
  }

  /// Sightings heard before the window or too far ahead are left out (the engine ignores
  /// them); the rest go to the statement with their bits, times and mediums.
  @Test func sightingsCountByTheEnginesTimeRule() throws {
    let window = Self.configuration.sightingWindow.components.seconds
    let inside = Sighting(token: Token(value: .max), medium: .ble, time: Self.now)
    let report = Report(sightings: [
      inside,
      Sighting(
        token: .random(), medium: .ble, time: Self.now.addingTimeInterval(-Double(window) - 1)),
      Sighting(token: .random(), medium: .ble, time: Self.now.addingTimeInterval(3)),
      Sighting(token: .random(), medium: .audio, time: Self.now.addingTimeInterval(2)),
    ])
    guard case .refresh(let refresh) = Self.route(report) else {
      Issue.record("not a refresh")
      return
    }
    #expect(refresh.heard.count == 2)
    #expect(
      refresh.heard.first
        == RefreshReport.Heard(
          token: -1, heardAt: Self.now.timeIntervalSince1970,
          medium: Int64(DiscoveryMediums.ble.rawValue)))
    #expect(refresh.heard.last?.medium == Int64(DiscoveryMediums.audio.rawValue))
    #expect(refresh.freshFor == 10 - 0.001)
    #expect(Self.route(Report()) != .general(.changesHandles))
  }

  /// A secret kept from before digests, or a token due (or within a millisecond of it), is
  /// the engine's to handle.
  @Test func theDevicesRowCanSendItTheGeneralWay() throws {
    guard case .refresh(let refresh) = Self.route(Report()) else {
      Issue.record("not a refresh")
      return
    }
    var device = DeviceRecord(
      id: refresh.device, project: "p", secretDigest: DeviceRecord.digest(ofSecret: "s"),
      token: .random(), tokenExpiresAt: Self.now.addingTimeInterval(1))
    #expect(refresh.detour(for: device) == nil)
    device.tokenExpiresAt = Self.now.addingTimeInterval(0.0005)
    #expect(refresh.detour(for: device) == .tokenDue)
    device.tokenExpiresAt = Self.now
    #expect(refresh.detour(for: device) == .tokenDue)
    device.tokenExpiresAt = Self.now.addingTimeInterval(60)
    device.secretDigest = "plain"
    #expect(refresh.detour(for: device) == .plainSecret)
  }
}

/// A refresh report in one statement on PostgreSQL gives the answer, the events and the
/// database the engine's path gives, takes the general path for whatever it cannot decide,
/// and keeps the locking rules.
@Suite("Refresh reports in one statement", .requires(.postgres))
struct RefreshReportTests {
  static let configuration = EngineOnStorageTests.configuration
  static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

  /// Devices of project "p" that publish and subscribe to each other's names, and one of
  /// project "q"; their tokens.
  struct Fleet: Sendable {
    var alice: DeviceCredentials
    var bob: DeviceCredentials
    var carol: DeviceCredentials
    var dave: DeviceCredentials
    var eve: DeviceCredentials
    var tokens: [DeviceID: Token]

    func token(_ device: DeviceCredentials) -> Token { tokens[device.id]! }
  }

  /// Registers the fleet at `t0`: alice, bob, carol and dave publish their names and
  /// subscribe to names; eve (project "q") too.
  static func fleet(_ storage: any ResolverStorage) async throws -> Fleet {
    var devices: [DeviceCredentials] = []
    var tokens: [DeviceID: Token] = [:]
    for (index, project) in ["p", "p", "p", "p", "q"].enumerated() {
      let device = try await storage.register(
        project: project, configuration: configuration, now: t0)
      let answer = try await storage.report(
        Report(
          publish: [
            PublicationSpec(
              id: .random(), message: Message(text: "device \(index)", type: "name"),
              strategy: .default)
          ],
          subscribe: [SubscriptionSpec(id: .random(), type: "name")]),
        from: device, configuration: configuration, now: t0
      ).answer
      devices.append(device)
      tokens[device.id] = answer.directives.token
    }
    return Fleet(
      alice: devices[0], bob: devices[1], carol: devices[2], dave: devices[3], eve: devices[4],
      tokens: tokens)
  }

  static func routes(_ storage: any ResolverStorage) throws -> ReportRoutes {
    try #require(storage as? PostgresStorage).reportRoutes
  }

  /// The tables a report can change, every row in a fixed order.
  static func dump(_ storage: any ResolverStorage) async throws -> [String: [SQLRow]] {
    try await storage.read { store in
      var dump: [String: [SQLRow]] = [:]
      for (table, order) in [
        ("devices", "id"), ("tokens", "token"), ("sightings", "hearer, heard, medium"),
        ("deliveries", "subscription, publication"), ("deadlines", "id"),
        ("events", "device, sequence"), ("messages", "digest"), ("publications", "id"),
        ("subscriptions", "id"),
      ] {
        dump[table] = try store.sql.query("SELECT * FROM \(table) ORDER BY \(order)", [])
      }
      return dump
    }
  }

  /// A copy of the database at `url` (which nothing may be connected to), and its URL.
  static func copy(of url: String) async throws -> String {
    var components = try #require(URLComponents(string: url))
    let name = String(components.path.dropFirst())
    let copy = name + "_copy"
    // The storage that used the database may still be closing its connections.
    let made = await eventually(timeout: .seconds(20), interval: .milliseconds(50)) {
      (try? await TestPostgres.execute("CREATE DATABASE \(copy) TEMPLATE \(name)")) != nil
    }
    try #require(made, "could not copy \(name)")
    components.path = "/" + copy
    return try #require(components.string)
  }

  /// Runs `body` with two instances on one fresh database, then shuts both down.
  static func withTwoInstances(_ body: ([PostgresStorage]) async throws -> Void) async throws {
    let url = try await TestPostgres.freshDatabase()
    let first = try await PostgresStorage(url: url)
    try await withTeardown({ await first.shutdown() }) {
      let second = try await PostgresStorage(url: url)
      try await withTeardown({ await second.shutdown() }) { try await body([first, second]) }
    }
  }

  /// Two identical databases, one answering refreshes in one statement and one (`refresh=off`)
  /// through the engine: the same reports give the same answers (byte for byte), the same
  /// events and the same rows, whichever way each went on the first.
  @Test func aRefreshGivesWhatTheEngineGives() async throws {
    let url = try await TestPostgres.freshDatabase()
    let first = try await PostgresStorage(url: url)
    let fleet = try await withShutdown(first as any ResolverStorage) { storage in
      let fleet = try await Self.fleet(storage)
      // Bob and carol come near alice and each other: found events, through the engine.
      for (hearer, heard) in [(fleet.bob, [fleet.alice, fleet.carol]), (fleet.carol, [fleet.bob])] {
        _ = try await storage.report(
          Report(
            sightings: heard.map {
              Sighting(token: fleet.token($0), medium: .ble, time: Self.t0.addingTimeInterval(1))
            }), from: hearer, configuration: Self.configuration,
          now: Self.t0.addingTimeInterval(1))
      }
      return fleet
    }
    let copy = try await Self.copy(of: url)
    let fast = try await PostgresStorage(url: url)
    try await withShutdown(fast as any ResolverStorage) { fast in
      let engine = try await PostgresStorage(url: copy + "?refresh=off")
      try await withShutdown(engine as any ResolverStorage) { engine in
        #expect(try await Self.dump(fast) == Self.dump(engine))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let t = { (seconds: Double) in Self.t0.addingTimeInterval(seconds) }
        let cases: [(String, DeviceCredentials, Report, Date, ReportRoutes.Way)] = [
          (
            "bob refreshes alice and carol, with sightings that do not count", fleet.bob,
            Report(sightings: [
              Sighting(token: fleet.token(fleet.alice), medium: .ble, time: t(3)),
              Sighting(token: fleet.token(fleet.carol), medium: .ble, time: t(2.5)),
              Sighting(token: fleet.token(fleet.carol), medium: .ble, time: t(2.9)),
              Sighting(token: fleet.token(fleet.bob), medium: .ble, time: t(3)),
              Sighting(token: fleet.token(fleet.eve), medium: .ble, time: t(3)),
              Sighting(token: .random(), medium: .ble, time: t(3)),
              Sighting(token: fleet.token(fleet.dave), medium: .ble, time: t(-40)),
            ]), t(4), .refreshed
          ),
          ("alice asks for directives", fleet.alice, Report(), t(4), .refreshed),
          (
            "carol refreshes bob and comes near dave", fleet.carol,
            Report(sightings: [
              Sighting(token: fleet.token(fleet.bob), medium: .ble, time: t(5)),
              Sighting(token: fleet.token(fleet.dave), medium: .ble, time: t(5)),
            ]), t(5), .general(.startsNearness)
          ),
          (
            "bob hears alice on a medium he had not", fleet.bob,
            Report(sightings: [
              Sighting(token: fleet.token(fleet.alice), medium: .audio, time: t(6))
            ]), t(6), .general(.startsNearness)
          ),
          (
            "carol refreshes bob and dave", fleet.carol,
            Report(sightings: [
              Sighting(token: fleet.token(fleet.bob), medium: .ble, time: t(7)),
              Sighting(token: fleet.token(fleet.dave), medium: .ble, time: t(7)),
            ]), t(7), .refreshed
          ),
          (
            "bob hears alice again after lost-after (no sweep in between)", fleet.bob,
            Report(sightings: [
              Sighting(token: fleet.token(fleet.alice), medium: .ble, time: t(20))
            ]), t(20), .general(.startsNearness)
          ),
          (
            "dave unsubscribes", fleet.dave, Report(unsubscribe: [.random()]), t(21),
            .general(.changesHandles)
          ),
        ]
        for (name, device, report, now, way) in cases {
          let before = try Self.routes(fast).count(way)
          let viaFast = try await fast.report(
            report, from: device, configuration: Self.configuration, now: now)
          let viaEngine = try await engine.report(
            report, from: device, configuration: Self.configuration, now: now)
          #expect(try Self.routes(fast).count(way) == before + 1, "\(name)")
          #expect(viaFast.answer == viaEngine.answer, "\(name)")
          #expect(
            try encoder.encode(viaFast.answer) == encoder.encode(viaEngine.answer), "\(name)")
          #expect(viaFast.deviceEvents == viaEngine.deviceEvents, "\(name)")
          #expect(try await Self.dump(fast) == Self.dump(engine), "\(name)")
        }
        // The engine's copy took no refresh at all.
        #expect(try Self.routes(engine).all.isEmpty)
      }
    }
  }

  /// A refresh changes the sightings' times and the device's last report and revision, and
  /// nothing else; its answer carries no events.
  @Test func aRefreshWritesOnlyTheSightingsAndTheDevice() async throws {
    let storage = try await StorageFixture.make(.postgres)
    try await withShutdown(storage) { storage in
      let fleet = try await Self.fleet(storage)
      let heard = Report(sightings: [
        Sighting(token: fleet.token(fleet.alice), medium: .ble, time: Self.t0)
      ])
      let found = try await storage.report(
        heard, from: fleet.bob, configuration: Self.configuration, now: Self.t0)
      #expect(found.answer.events.count == 1)
      let before = try await Self.dump(storage)
      let later = Self.t0.addingTimeInterval(5)
      let refreshed = try await storage.report(
        Report(sightings: [
          Sighting(token: fleet.token(fleet.alice), medium: .ble, time: later)
        ]), from: fleet.bob, configuration: Self.configuration, now: later)
      #expect(try Self.routes(storage).count(.refreshed) == 1)
      #expect(refreshed.answer.events.isEmpty && refreshed.deviceEvents.isEmpty)
      #expect(refreshed.answer.directives.revision == found.answer.directives.revision + 1)
      #expect(refreshed.answer.directives.tokenExpiresIn == 895)
      let after = try await Self.dump(storage)
      for table in before.keys where !["devices", "sightings"].contains(table) {
        #expect(after[table] == before[table], "\(table)")
      }
      let times = try await storage.read { store in
        try store.sql.query(
          "SELECT hearer, seen_at FROM sightings ORDER BY hearer", []
        ).map { try $0.text(0) + " " + String($0.real(1)) }
      }
      #expect(times == ["\(fleet.bob.id) \(later.timeIntervalSince1970)"])
      let bob = try await storage.read { try $0.resolution.devices.device(fleet.bob.id) }
      #expect(bob?.lastReportAt == later)
      #expect(bob?.revision == refreshed.answer.directives.revision)
    }
  }

  /// Each thing the statement cannot decide sends the report the engine's way, with the
  /// engine's outcome: a secret from before digests is replaced, a token due rotates, a bad
  /// medium is refused, bad credentials are refused before anything.
  @Test func whatTheStatementCannotDecideGoesTheGeneralWay() async throws {
    let storage = try await StorageFixture.make(.postgres)
    try await withShutdown(storage) { storage in
      let fleet = try await Self.fleet(storage)
      let routes = try Self.routes(storage)
      // A secret kept before digests.
      try await storage.transaction { store in
        try store.sql.execute(
          "UPDATE devices SET secret = ? WHERE id = ?",
          [.text(fleet.alice.secret), .text(fleet.alice.id.description)])
      }
      _ = try await storage.report(
        Report(), from: fleet.alice, configuration: Self.configuration, now: Self.t0)
      #expect(routes.count(.general(.plainSecret)) == 1)
      let stored = try await storage.read {
        try $0.resolution.devices.device(fleet.alice.id)?.secretDigest
      }
      #expect(stored == DeviceRecord.digest(ofSecret: fleet.alice.secret))
      _ = try await storage.report(
        Report(), from: fleet.alice, configuration: Self.configuration, now: Self.t0)
      #expect(routes.count(.refreshed) == 1)

      // A token due rotates.
      let late = Self.t0.addingTimeInterval(900)
      let rotated = try await storage.report(
        Report(), from: fleet.alice, configuration: Self.configuration, now: late)
      #expect(routes.count(.general(.tokenDue)) == 1)
      #expect(rotated.answer.directives.token != fleet.token(fleet.alice))
      #expect(rotated.answer.directives.tokenExpiresIn == 900)

      // A sighting of no single medium is refused, as the engine refuses it.
      await #expect(throws: ResolverError.self) {
        _ = try await storage.report(
          Report(sightings: [Sighting(token: .random(), medium: [.ble, .audio], time: late)]),
          from: fleet.alice, configuration: Self.configuration, now: late)
      }
      #expect(routes.count(.general(.invalidMedium)) == 1)

      // Bad credentials: refused, nothing applied, no route taken.
      let all = routes.all
      await #expect(throws: ResolverError.wrongSecret(fleet.bob.id)) {
        _ = try await storage.report(
          Report(), from: DeviceCredentials(id: fleet.bob.id, secret: "x"),
          configuration: Self.configuration, now: late)
      }
      let unknown = DeviceID.random()
      await #expect(throws: ResolverError.unknownDevice(unknown)) {
        _ = try await storage.report(
          Report(), from: DeviceCredentials(id: unknown, secret: "x"),
          configuration: Self.configuration, now: late)
      }
      #expect(routes.all == all)
      let bob = try await storage.read { try $0.resolution.devices.device(fleet.bob.id) }
      #expect(bob?.revision == 1)
    }
  }

  /// `authorize` runs once, before anything changes, whichever way the report goes; what it
  /// throws ends the report with nothing applied.
  @Test func authorizeRunsOnceBeforeAnyChange() async throws {
    let storage = try await StorageFixture.make(.postgres)
    try await withShutdown(storage) { storage in
      let fleet = try await Self.fleet(storage)
      let calls = Mutex(0)
      let count: @Sendable (DeviceRecord) throws -> Void = { _ in calls.withLock { $0 += 1 } }
      // A refresh; one that starts a nearness (the statement, then the engine).
      for (report, time) in [
        (Report(), 1.0),
        (
          Report(sightings: [
            Sighting(token: fleet.token(fleet.alice), medium: .ble, time: Self.t0)
          ]), 2.0
        ),
      ] {
        _ = try await storage.report(
          report, from: fleet.bob, configuration: Self.configuration,
          now: Self.t0.addingTimeInterval(time), authorize: count)
      }
      #expect(calls.withLock { $0 } == 2)
      #expect(try Self.routes(storage).count(.refreshed) == 1)
      #expect(try Self.routes(storage).count(.general(.startsNearness)) == 1)
      struct Refused: Error {}
      await #expect(throws: Refused.self) {
        _ = try await storage.report(
          Report(), from: fleet.bob, configuration: Self.configuration,
          now: Self.t0.addingTimeInterval(3), authorize: { _ in throw Refused() })
      }
      let bob = try await storage.read { try $0.resolution.devices.device(fleet.bob.id) }
      #expect(bob?.revision == 3)
      #expect(bob?.lastReportAt == Self.t0.addingTimeInterval(2))
    }
  }

  /// The function itself: a secret other than the one authenticated (the device changed
  /// since it was read), or a sighting heard within a millisecond of its token's binding's
  /// end, changes nothing and says why.
  @Test func theStatementChangesNothingWhenItCannotDecide() async throws {
    let storage = try await StorageFixture.make(.postgres)
    try await withShutdown(storage) { storage in
      let fleet = try await Self.fleet(storage)
      _ = try await storage.report(
        Report(sightings: [
          Sighting(token: fleet.token(fleet.alice), medium: .ble, time: Self.t0)
        ]), from: fleet.bob, configuration: Self.configuration, now: Self.t0)
      let before = try await Self.dump(storage)
      let (secret, validUntil) = try await storage.read { store in
        (
          try #require(try store.resolution.devices.device(fleet.bob.id)).secretDigest,
          try #require(
            try store.sql.queryFirst(
              "SELECT valid_until FROM tokens WHERE token = ?",
              [SQLValue(bits: fleet.token(fleet.alice).value)])
          ).real(0)
        )
      }
      let call = """
        SELECT outcome FROM nearby_refresh_report(
          ?, ?, ?, 0.001, 9.999, ARRAY[?]::BIGINT[], ARRAY[?]::DOUBLE PRECISION[],
          ARRAY[1]::BIGINT[])
        """
      let now = Self.t0.timeIntervalSince1970 + 1
      for (given, heardAt, expected) in [
        (DeviceRecord.digest(ofSecret: "another"), now, "deviceChanged"),
        (secret, validUntil - 0.0005, "bindingEdge"),
        (secret, validUntil + 0.0005, "bindingEdge"),
      ] {
        let outcome = try await storage.transaction { store in
          try store.sql.queryFirst(
            call,
            [
              .text(fleet.bob.id.description), .text(given), .real(now),
              SQLValue(bits: fleet.token(fleet.alice).value), .real(heardAt),
            ])?.text(0)
        }
        #expect(outcome == expected)
      }
      #expect(try await Self.dump(storage) == before)
    }
  }

  /// A refresh locks the reporter alone: another transaction holding the heard device's row
  /// does not hold it up (it writes only its own sightings' rows).
  @Test func aRefreshWaitsForNoOtherDevice() async throws {
    try await Self.withTwoInstances { instances in
      let fleet = try await Self.fleet(instances[0])
      _ = try await instances[0].report(
        Report(sightings: [
          Sighting(token: fleet.token(fleet.alice), medium: .ble, time: Self.t0)
        ]), from: fleet.bob, configuration: Self.configuration, now: Self.t0)
      // The other instance holds alice's row until told to let go.
      let lock = await DeviceRowLock.hold(fleet.alice.id, on: instances[1])
      let later = Self.t0.addingTimeInterval(2)
      let answer = try await instances[0].report(
        Report(sightings: [Sighting(token: fleet.token(fleet.alice), medium: .ble, time: later)]),
        from: fleet.bob, configuration: Self.configuration, now: later)
      #expect(!lock.released, "the refresh waited for the heard device")
      try await lock.end()
      #expect(answer.answer.events.isEmpty)
      #expect(instances[0].reportRoutes.count(.refreshed) == 1)
    }
  }

  /// A refresh waits for the reporter's own row: a transaction holding it (another report
  /// of the same device, on another instance) finishes first, and the refresh sees what it
  /// wrote.
  @Test func aRefreshWaitsForItsDevice() async throws {
    try await Self.withTwoInstances { instances in
      let fleet = try await Self.fleet(instances[0])
      let lock = await DeviceRowLock.hold(fleet.bob.id, on: instances[1]) { store in
        try store.sql.execute(
          "UPDATE devices SET revision = revision + 10 WHERE id = ?",
          [.text(fleet.bob.id.description)])
      }
      let report = Task {
        try await instances[0].report(
          Report(), from: fleet.bob, configuration: Self.configuration, now: Self.t0)
      }
      // The refresh waits on the row lock.
      let waiting = await eventually {
        let waiters = try? await instances[1].read { store in
          try store.sql.queryFirst(
            """
            SELECT COUNT(*) FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query LIKE '%nearby_refresh_report%'
            """, [])?.integer(0)
        }
        return waiters == 1
      }
      #expect(waiting)
      try await lock.end()
      let answer = try await report.value.answer
      #expect(answer.directives.revision == 1 + 10 + 1)
      #expect(instances[0].reportRoutes.count(.refreshed) == 1)
    }
  }

  /// The row an instance keeps of a device that authenticated (so its next refresh is one
  /// round trip) is never the authority: a secret not the device's is refused whatever is
  /// kept; a device whose stored secret changed, or that was removed, through another
  /// instance is refused as the engine refuses it; a token rotated through another instance
  /// sends one report the engine's way, and the next refreshes again.
  @Test func aKeptRowIsCheckedByTheStatement() async throws {
    try await Self.withTwoInstances { instances in
      let fleet = try await Self.fleet(instances[0])
      let (first, second) = (instances[0], instances[1])
      let configuration = Self.configuration
      let t = { (seconds: Double) in Self.t0.addingTimeInterval(seconds) }
      for device in [fleet.alice, fleet.bob, fleet.carol] {
        _ = try await first.report(Report(), from: device, configuration: configuration, now: t(1))
      }
      #expect(first.reportRoutes.count(.refreshed) == 3)
      #expect(first.authenticatedDevices.count == 3)

      await #expect(throws: ResolverError.wrongSecret(fleet.bob.id)) {
        _ = try await first.report(
          Report(), from: DeviceCredentials(id: fleet.bob.id, secret: "x"),
          configuration: configuration, now: t(2))
      }
      // Bob's stored secret changes through the second instance: the first still keeps the
      // old one, and the statement refuses it.
      try await second.transaction { store in
        try store.sql.execute(
          "UPDATE devices SET secret = ? WHERE id = ?",
          [.text(DeviceRecord.digest(ofSecret: "new")), .text(fleet.bob.id.description)])
      }
      await #expect(throws: ResolverError.wrongSecret(fleet.bob.id)) {
        _ = try await first.report(
          Report(), from: fleet.bob, configuration: configuration, now: t(2))
      }
      #expect(first.reportRoutes.count(.general(.deviceChanged)) == 1)
      let renewed = DeviceCredentials(id: fleet.bob.id, secret: "new")
      _ = try await first.report(Report(), from: renewed, configuration: configuration, now: t(3))
      #expect(first.reportRoutes.count(.refreshed) == 4)

      // Carol is unregistered through the second instance.
      _ = try await second.unregister(fleet.carol, configuration: configuration, now: t(3))
      await #expect(throws: ResolverError.unknownDevice(fleet.carol.id)) {
        _ = try await first.report(
          Report(), from: fleet.carol, configuration: configuration, now: t(4))
      }
      #expect(first.reportRoutes.count(.general(.deviceChanged)) == 2)

      // Alice's token rotates through the second instance.
      let rotated = try await second.report(
        Report(), from: fleet.alice, configuration: configuration, now: t(900)
      ).answer.directives
      #expect(rotated.token != fleet.token(fleet.alice))
      let late = try await first.report(
        Report(), from: fleet.alice, configuration: configuration, now: t(901)
      ).answer.directives
      #expect(first.reportRoutes.count(.general(.tokenDue)) == 1)
      #expect(late.token == rotated.token && late.tokenExpiresIn == 899)
      _ = try await first.report(
        Report(), from: fleet.alice, configuration: configuration, now: t(902))
      #expect(first.reportRoutes.count(.refreshed) == 5)
    }
  }

  /// Two instances, four devices that keep hearing each other, round after round, each
  /// reporting through both instances at once, and one of them changing its handles every
  /// time (the engine's path, which locks its neighbours): every report raises its device's
  /// revision by one, every event log stays gapless, and from the second round on the three
  /// others' reports are refreshes.
  @Test func refreshesOnTwoInstancesKeepTheRules() async throws {
    try await Self.withTwoInstances { instances in
      let fleet = try await Self.fleet(instances[0])
      let near = [fleet.alice, fleet.bob, fleet.carol, fleet.dave]
      let configuration = Self.configuration
      let rounds = 6
      var revisions: [DeviceID: [UInt64]] = [:]
      for round in 0..<rounds {
        let now = Self.t0.addingTimeInterval(Double(round) * 0.5)
        let answers = try await withThrowingTaskGroup(of: (DeviceID, UInt64).self) { group in
          for (index, device) in near.enumerated() {
            let sightings = near.filter { $0.id != device.id }.map {
              Sighting(token: fleet.token($0), medium: .ble, time: now)
            }
            for storage in instances {
              var report = Report(sightings: sightings)
              if index == 3 {
                // Dave publishes a new name each time: his neighbours are locked with him.
                report.publish = [
                  PublicationSpec(
                    id: .random(), message: Message(text: "dave \(round) \(UUID())", type: "name"),
                    strategy: .default)
                ]
              }
              let sent = report
              group.addTask {
                let answer = try await storage.report(
                  sent, from: device, configuration: configuration, now: now
                ).answer
                return (device.id, answer.directives.revision)
              }
            }
          }
          return try await group.reduce(into: []) { $0.append($1) }
        }
        for (device, revision) in answers { revisions[device, default: []].append(revision) }
      }
      for device in near {
        // Registration's report was revision 1.
        #expect(
          revisions[device.id]?.sorted() == Array(2...UInt64(2 * rounds + 1)), "\(device.id)")
        let log = try await SharedPostgresTests.log(of: device, in: instances[0])
        #expect(
          !log.isEmpty && log.map(\.sequence) == Array(1..<UInt64(log.count + 1)), "\(device.id)")
      }
      // Round 0 makes the sightings (a device's second report of it may refresh them).
      let refreshed = instances.map { $0.reportRoutes.count(.refreshed) }.reduce(0, +)
      #expect((3 * 2 * (rounds - 1))...(3 * 2 * rounds) ~= refreshed)
    }
  }
}
