import TestSupport
import Core
import MediumTestKit
import Resolution
import Strategy
import Testing
import NearbyTesting

/// Found and lost per subscription, from handlers running on 50 managers' actors.
private final class Tally: Sendable {
  struct Counts: Sendable {
    var found: [Int: [String: Int]] = [:]
    var lost: [Int: [String: Int]] = [:]
    var totalFound = 0
    var totalLost = 0
  }
  let counts = Watched(Counts())

  func found(_ subscription: Int, _ message: Message) {
    counts.withLock {
      $0.found[subscription, default: [:]][message.text ?? "", default: 0] += 1
      $0.totalFound += 1
    }
  }
  func lost(_ subscription: Int, _ message: Message) {
    counts.withLock {
      $0.lost[subscription, default: [:]][message.text ?? "", default: 0] += 1
      $0.totalLost += 1
    }
  }
}

/// Handles kept alive until the test releases them.
private actor Handles {
  var publications: [Int: Publication] = [:]
  var subscriptions: [Int: Subscription] = [:]
  func keep(publication: Publication, at index: Int) { publications[index] = publication }
  func keep(subscription: Subscription, at index: Int) { subscriptions[index] = subscription }
  func takePublications() -> [Int: Publication] {
    defer { publications = [:] }
    return publications
  }
  func takeSubscriptions() -> [Int: Subscription] {
    defer { subscriptions = [:] }
    return subscriptions
  }
}

@Suite("Concurrency")
struct ConcurrencyTests {
  static let devices = 50
  static let publications = 1_000
  static let subscriptions = 1_000
  static let types = 10

  static func publicationDevice(_ index: Int) -> Int { index % devices }
  static func subscriptionDevice(_ index: Int) -> Int { (index * 7) % devices }

  /// The messages subscription `index` must find: same type, another device.
  static func expected(for index: Int) -> Set<String> {
    Set(
      (0..<publications).filter {
        $0 % types == index % types && publicationDevice($0) != subscriptionDevice(index)
      }.map { "p\($0)" })
  }

  @Test("1 000 publications and 1 000 subscriptions on 50 devices: every found gets its lost")
  func manyHandles() async throws {
    let world = try AirWorld(lostAfter: .seconds(60), advertiseInterval: .milliseconds(500))
    var managers: [MessageManager] = []
    for index in 0..<Self.devices { managers.append(try await world.device("d\(index)")) }
    let tally = Tally()
    let handles = Handles()
    let managersCopy = managers

    // Create everything from many tasks at once.
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<Self.subscriptions {
        group.addTask {
          let manager = managersCopy[Self.subscriptionDevice(index)]
          let subscription = try await manager.subscribe(
            onFound: { tally.found(index, $0) }, onLost: { tally.lost(index, $0) },
            configure: { $0.type = "k\(index % Self.types)" })
          await handles.keep(subscription: subscription, at: index)
        }
      }
      for index in 0..<Self.publications {
        group.addTask {
          let manager = managersCopy[Self.publicationDevice(index)]
          let publication = try await manager.publish(
            Message(text: "p\(index)", type: "k\(index % Self.types)"))
          await handles.keep(publication: publication, at: index)
        }
      }
      try await group.waitForAll()
    }

    let expectedTotal = (0..<Self.subscriptions).reduce(0) { $0 + Self.expected(for: $1).count }
    let allFound = await tally.counts.until(timeout: .seconds(120)) {
      $0.totalFound >= expectedTotal
    }
    #expect(allFound, "found \(tally.counts.withLock { $0.totalFound }) of \(expectedTotal)")
    tally.counts.withLock { counts in
      for index in 0..<Self.subscriptions {
        let found = counts.found[index] ?? [:]
        #expect(Set(found.keys) == Self.expected(for: index), "subscription \(index)")
        #expect(found.values.allSatisfy { $0 == 1 }, "found more than once: \(index)")
      }
    }

    // Cancel half the publications and release the other half, from many tasks.
    let publications = await handles.takePublications()
    await withTaskGroup(of: Void.self) { group in
      for (index, publication) in publications where index.isMultiple(of: 2) {
        group.addTask { await publication.cancel() }
      }
    }
    _ = consume publications
    let allLost = await tally.counts.until(timeout: .seconds(120)) {
      $0.totalLost >= expectedTotal
    }
    #expect(allLost, "lost \(tally.counts.withLock { $0.totalLost }) of \(expectedTotal)")
    tally.counts.withLock { counts in
      #expect(counts.totalLost == counts.totalFound)
      for index in 0..<Self.subscriptions {
        #expect(counts.lost[index] ?? [:] == counts.found[index] ?? [:], "subscription \(index)")
      }
    }

    // Release the subscriptions: nothing may be left anywhere.
    _ = await handles.takeSubscriptions()
    let empty = await eventually(timeout: .seconds(30)) {
      let counts = await world.resolver.counts()
      return counts.publications == 0 && counts.subscriptions == 0 && counts.deliveries == 0
    }
    let remaining = await world.resolver.counts()
    #expect(empty, "resolver still holds \(remaining)")
    for manager in managers {
      #expect(await manager.publicationCount == 0)
      #expect(await manager.subscriptionCount == 0)
      await manager.shutdown()
    }
    let counts = await world.resolver.counts()
    #expect(counts.devices == 0 && counts.sightings == 0 && counts.tokens == 0)
  }
}
