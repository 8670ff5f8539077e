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

/// Two instances on one PostgreSQL database, as two servers behind a load balancer: their
/// transactions run at once (no lock for the whole cluster), each locking the devices it
/// changes, and nothing is lost or doubled.
@Suite("Two instances on one PostgreSQL database")
struct SharedPostgresTests {
  static let configuration = EngineOnStorageTests.configuration

  static func instances() async throws -> [any ResolverStorage] {
    let url = try await TestPostgres.freshDatabase()
    async let first = PostgresStorage(url: url)
    async let second = PostgresStorage(url: url)  // both migrate at once: only one does
    return try await [first, second]
  }

  @Test(.requires(.postgres)) func concurrentReportsFromTwoInstancesLoseNoUpdate() async throws {
    let instances = try await Self.instances()
    defer { for instance in instances { Task { await instance.shutdown() } } }
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let device = try await instances[0].register(
      project: "p", configuration: Self.configuration, now: t0)
    let revisions = try await withThrowingTaskGroup(of: UInt64.self) { group in
      for index in 0..<60 {
        let storage = instances[index % 2]
        group.addTask {
          try await storage.report(
            Report(), from: device, configuration: Self.configuration, now: t0
          ).answer.directives.revision
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    // Each report raised the revision by one, in some order: 1...60, none repeated.
    #expect(revisions.sorted() == Array(1...60))
  }

  /// Six devices each publish and subscribe, then all report hearing all the others at
  /// once, three times over, through both instances; later both instances sweep at once.
  /// Every subscription finds each other device's message exactly once and loses it exactly
  /// once, and every device's event log is numbered 1, 2, 3, … without a gap or a repeat.
  @Test(.requires(.postgres)) func concurrentReportsAboutTheSameDevicesFindAndLoseEachMessageOnce()
    async throws
  {
    let instances = try await Self.instances()
    defer { for instance in instances { Task { await instance.shutdown() } } }
    let configuration = Self.configuration
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let count = 6
    var devices: [DeviceCredentials] = []
    var subscriptions: [SubscriptionID] = []
    var messages: [Message] = []
    var tokens: [Token] = []
    for index in 0..<count {
      let storage = instances[index % 2]
      let device = try await storage.register(
        project: "p", configuration: configuration, now: t0)
      let message = Message(text: "device \(index)", type: "name")
      let subscription = SubscriptionID.random()
      let answer = try await storage.report(
        Report(
          publish: [PublicationSpec(id: .random(), message: message, strategy: .default)],
          subscribe: [SubscriptionSpec(id: subscription, type: "name")]),
        from: device, configuration: configuration, now: t0
      ).answer
      #expect(answer.events.isEmpty)
      devices.append(device)
      subscriptions.append(subscription)
      messages.append(message)
      tokens.append(answer.directives.token)
    }

    let heardAt = t0.addingTimeInterval(1)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for round in 0..<3 {
        for index in 0..<count {
          let storage = instances[(index + round) % 2]
          let sightings = tokens.indices.filter { $0 != index }.map {
            Sighting(token: tokens[$0], medium: .ble, time: heardAt)
          }
          let device = devices[index]
          group.addTask {
            _ = try await storage.report(
              Report(sightings: sightings), from: device, configuration: configuration,
              now: heardAt)
          }
        }
      }
      try await group.waitForAll()
    }
    for index in 0..<count {
      let log = try await Self.log(of: devices[index], in: instances[index % 2])
      #expect(log.map(\.sequence) == Array(1...UInt64(count - 1)), "device \(index)")
      let found = log.compactMap { item -> Message? in
        guard case .found(let subscription, let message) = item.event,
          subscription == subscriptions[index]
        else { return nil }
        return message
      }
      let others = messages.indices.filter { $0 != index }.map { messages[$0] }
      #expect(Set(found) == Set(others) && found.count == others.count, "device \(index)")
    }

    // Silence past lost-after: both instances sweep at once.
    let later = heardAt.addingTimeInterval(Double(configuration.lostAfter.components.seconds) + 1)
    let swept = try await withThrowingTaskGroup(of: [DeviceEvent].self) { group in
      for storage in instances {
        group.addTask { try await storage.sweep(configuration: configuration, now: later) }
      }
      return try await group.reduce(into: []) { $0 += $1 }
    }
    #expect(swept.count == count * (count - 1))
    for index in 0..<count {
      let log = try await Self.log(of: devices[index], in: instances[(index + 1) % 2])
      #expect(log.map(\.sequence) == Array(1...UInt64(2 * (count - 1))), "device \(index)")
      let lost = log.compactMap { item -> Message? in
        guard case .lost(let subscription, let message) = item.event,
          subscription == subscriptions[index]
        else { return nil }
        return message
      }
      let others = messages.indices.filter { $0 != index }.map { messages[$0] }
      #expect(Set(lost) == Set(others) && lost.count == others.count, "device \(index)")
    }
    let counts = try await instances[0].transaction { try $0.resolution.counts() }
    #expect(counts.sightings == 0)
    #expect(counts.deliveries == 0)
  }

  /// Events written through one instance are announced on the other's notifications.
  @Test(.requires(.postgres)) func eventsWrittenOnOneInstanceAreNotifiedOnTheOther() async throws {
    let instances = try await Self.instances()
    defer { for instance in instances { Task { await instance.shutdown() } } }
    let configuration = Self.configuration
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let alice = try await instances[0].register(
      project: "p", configuration: configuration, now: t0)
    let bob = try await instances[0].register(project: "p", configuration: configuration, now: t0)
    let aliceToken = try await instances[0].report(
      Report(
        publish: [
          PublicationSpec(
            id: .random(), message: Message(text: "Alice", type: "name"), strategy: .default)
        ]), from: alice, configuration: configuration, now: t0
    ).answer.directives.token
    _ = try await instances[0].report(
      Report(subscribe: [SubscriptionSpec(id: .random(), type: "name")]), from: bob,
      configuration: configuration, now: t0)

    let notifications = StreamRecorder(try #require(instances[1].eventNotifications()))
    // The listener announces itself once it listens: nothing sent after that is missed.
    #expect(await notifications.first(timeout: .seconds(20)) == .resynchronize)
    _ = try await instances[0].report(
      Report(sightings: [Sighting(token: aliceToken, medium: .ble, time: t0)]), from: bob,
      configuration: configuration, now: t0.addingTimeInterval(1))
    let woken = await notifications.first(timeout: .seconds(20)) { $0 != .resynchronize }
    #expect(woken == .devices([bob.id]))
  }

  static func log(of device: DeviceCredentials, in storage: any ResolverStorage) async throws
    -> [SequencedEvent]
  {
    try await storage.read { try $0.eventLog.events(for: device.id, after: 0, limit: 1000) }
  }
}

/// A report that names another project's token does not lock that project's device: it
/// cannot hold up, or be held up by, another project's work.
@Suite("Projects do not lock each other")
struct CrossProjectLockTests {
  @Test(.requires(.postgres)) func aForeignTokenIsNotWaitedFor() async throws {
    let instances = try await SharedPostgresTests.instances()
    defer { for instance in instances { Task { await instance.shutdown() } } }
    let configuration = SharedPostgresTests.configuration
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let foreign = try await instances[0].register(
      project: "b", configuration: configuration, now: t0)
    let reporter = try await instances[0].register(
      project: "a", configuration: configuration, now: t0)
    let token = try await instances[0].report(
      Report(), from: foreign, configuration: configuration, now: t0
    ).answer.directives.token
    // Another instance holds the foreign device's row until told to let go.
    let lock = await DeviceRowLock.hold(foreign.id, on: instances[1])
    // The report goes through while the row is held (it would wait for it otherwise).
    let answer = try await instances[0].report(
      Report(sightings: [Sighting(token: token, medium: .ble, time: t0)]), from: reporter,
      configuration: configuration, now: t0)
    #expect(!lock.released, "the report waited for another project's device")
    try await lock.end()
    #expect(answer.answer.events.isEmpty)
  }
}
