@_spi(Resolver) import Core
import ServerTestSupport
import Dispatch
import Foundation
@_spi(Resolver) import Resolution
@_spi(Resolver) import ServerStorage
import Testing
import TestSupport

/// A message body is stored once, in `messages`, and the found and lost events of every
/// subscriber refer to it; pruning the events frees the messages nobody refers to any more.
@Suite("Messages stored once")
struct MessageStoreTests {
  static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func fiftySubscribersFindingOneMessageStoreItsBodyOnce(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let big = Message(content: Data(repeating: 7, count: 100 * 1024), type: "t", namespace: "n")
      let small = Message(text: "hello", type: "t")
      let subscription = SubscriptionID.random()
      let devices = (0..<50).map { _ in DeviceID.random() }
      var events: [DeviceEvent] = []
      for device in devices {
        events += [
          DeviceEvent(device: device, sequence: 1, event: .found(subscription, big)),
          DeviceEvent(device: device, sequence: 2, event: .found(subscription, small)),
          DeviceEvent(device: device, sequence: 3, event: .lost(subscription, big)),
          DeviceEvent(device: device, sequence: 4, event: .subscriptionExpired(subscription)),
        ]
      }
      let (messages, storedBytes, largestEvent, replays) = try await storage.transaction {
        [events] store in
        try store.eventLog.appendEvents(events, at: Self.t0)
        return (
          try store.sql.queryFirst("SELECT COUNT(*) FROM messages", [])?.integer(0),
          try store.sql.queryFirst("SELECT SUM(LENGTH(content)) FROM messages", [])?.integer(0),
          try store.sql.queryFirst("SELECT MAX(LENGTH(body)) FROM events", [])?.integer(0),
          try devices.map { try store.eventLog.events(for: $0, after: 0, limit: 10) }
        )
      }
      #expect(messages == 2)
      #expect(storedBytes == Int64(100 * 1024 + 5))
      #expect((largestEvent ?? .max) < 200)  // a subscription id, not a body
      let expected = events.prefix(4).map(\.sequenced)
      #expect(replays.count == 50)
      for replay in replays { #expect(replay == expected) }
    }
  }

  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func pruningTheLastEventOfAMessageForgetsItsBody(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let old = Message(text: "old", type: "t")
      let kept = Message(text: "kept", type: "t")
      let (device, subscription) = (DeviceID.random(), SubscriptionID.random())
      let (pruned, bodies, left) = try await storage.transaction { store in
        try store.eventLog.appendEvents(
          [
            DeviceEvent(device: device, sequence: 1, event: .found(subscription, old)),
            DeviceEvent(device: device, sequence: 2, event: .found(subscription, kept)),
          ], at: Self.t0)
        try store.eventLog.appendEvents(
          [DeviceEvent(device: device, sequence: 3, event: .lost(subscription, kept))],
          at: Self.t0.addingTimeInterval(100))
        let pruned = try store.eventLog.pruneEvents(before: Self.t0.addingTimeInterval(50))
        return (
          pruned,
          try store.sql.query("SELECT namespace, type, content FROM messages", []).map {
            Message(content: Data(try $0.blob(2)), type: try $0.text(1), namespace: try $0.text(0))
          },
          try store.eventLog.events(for: device, after: 0, limit: 10)
        )
      }
      #expect(pruned == 2)
      #expect(bodies == [kept])
      #expect(left == [SequencedEvent(sequence: 3, event: .lost(subscription, kept))])
    }
  }

  /// A large log is pruned a chunk per transaction; the messages go after the last chunk.
  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func theLogIsPrunedInChunks(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let (device, subscription) = (DeviceID.random(), SubscriptionID.random())
      let old = (1...5).map {
        DeviceEvent(
          device: device, sequence: UInt64($0),
          event: .found(subscription, Message(text: "old \($0)", type: "t")))
      }
      let kept = DeviceEvent(
        device: device, sequence: 6, event: .lost(subscription, Message(text: "kept", type: "t")))
      let (first, messagesAfterFirst) = try await storage.transaction { store in
        try store.eventLog.appendEvents(old, at: Self.t0)
        try store.eventLog.appendEvents([kept], at: Self.t0.addingTimeInterval(100))
        let first = try store.eventLog.pruneEvents(before: Self.t0.addingTimeInterval(50), limit: 2)
        return (first, try store.sql.queryFirst("SELECT COUNT(*) FROM messages", [])?.integer(0))
      }
      #expect(first == 2)
      #expect(messagesAfterFirst == 6)  // not the last chunk: messages wait
      let rest = try await storage.pruneEvents(before: Self.t0.addingTimeInterval(50), chunk: 2)
      #expect(rest == 3)
      let (left, messages) = try await storage.read { store in
        (
          try store.eventLog.events(for: device, after: 0, limit: 10),
          try store.sql.queryFirst("SELECT COUNT(*) FROM messages", [])?.integer(0)
        )
      }
      #expect(left == [kept.sequenced])
      #expect(messages == 1)
    }
  }

  /// A log written before messages were stored apart (schema 3) holds whole events; they
  /// still read back.
  @Test(.requires(.postgres), arguments: StorageKind.allCases)
  func eventsLoggedWithTheirWholeMessageStillRead(_ kind: StorageKind) async throws {
    let storage = try await StorageFixture.make(kind)
    try await withShutdown(storage) { storage in
      let (device, subscription) = (DeviceID.random(), SubscriptionID.random())
      let event = ResolverEvent.found(subscription, Message(text: "before", type: "t"))
      let body = String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
      let replay = try await storage.transaction { store in
        try store.sql.execute(
          "INSERT INTO events (device, sequence, created_at, body) VALUES (?, 1, ?, ?)",
          [.text(device.description), SQLValue(Self.t0), .text(body)])
        return try store.eventLog.events(for: device, after: 0, limit: 10)
      }
      #expect(replay == [SequencedEvent(sequence: 1, event: event)])
    }
  }

  /// PostgreSQL: a prune that runs while another transaction appends an event about a
  /// message leaves that message alone (the appender holds it), and neither waits for the
  /// other.
  @Test(.requires(.postgres)) func aPruneLeavesAMessageThatAConcurrentAppendHolds() async throws {
    let storage = try await StorageFixture.make(.postgres)
    try await withShutdown(storage) { storage in
      let message = Message(text: "shared", type: "t")
      let (first, second) = (DeviceID.random(), DeviceID.random())
      let subscription = SubscriptionID.random()
      try await storage.transaction { store in
        try store.eventLog.appendEvents(
          [DeviceEvent(device: first, sequence: 1, event: .found(subscription, message))],
          at: Self.t0)
      }
      let appended = DispatchSemaphore(value: 0)
      let pruned = DispatchSemaphore(value: 0)
      async let append = storage.transaction { store in
        try store.eventLog.appendEvents(
          [DeviceEvent(device: second, sequence: 1, event: .found(subscription, message))],
          at: Self.t0.addingTimeInterval(100))
        appended.signal()
        // Held open until the prune has committed: a prune that waited for this transaction
        // would wait the full 30 s, and this would say so.
        return pruned.wait(timeout: .now() + 30) == .success
      }
      await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
          appended.wait()
          continuation.resume()
        }
      }
      let count = try await storage.transaction { store in
        try store.eventLog.pruneEvents(before: Self.t0.addingTimeInterval(50))
      }
      pruned.signal()
      #expect(try await append, "the prune waited for the appending transaction")
      #expect(count == 1)
      let replay = try await storage.transaction { store in
        try store.eventLog.events(for: second, after: 0, limit: 10)
      }
      #expect(replay == [SequencedEvent(sequence: 1, event: .found(subscription, message))])
    }
  }
}
