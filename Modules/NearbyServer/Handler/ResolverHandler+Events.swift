@_spi(Resolver) import Core
import Foundation
import OpenAPIRuntime
@_spi(Resolver) import Resolution
import ResolverAPI
@_spi(Resolver) import ResolverWire
@_spi(Resolver) import ServerStorage

extension ResolverHandler {
  /// The device's event log as Server-Sent Events, from `Last-Event-ID` on, for as long as the
  /// client reads. Events are read from the database when the hub wakes the stream (events for
  /// the device written by this instance, or notified by the database), and at the latest
  /// every poll interval or heartbeat.
  func events(_ input: Operations.Events.Input) async throws -> Operations.Events.Output {
    let credentials = try deviceCredentials(input.path.id)
    let project = try RequestContext.required().project
    var after: UInt64 = 0
    if let text = input.headers.lastEventID {
      // Digits only (UInt64.init also takes a sign), at most Int64.max: sequences are int64.
      guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
        let value = Int64(text), value >= 0
      else {
        throw APIFailure.badRequest(
          "Last-Event-ID must be an event sequence number (0 to \(Int64.max)), got "
            + "'\(TextRules.printable(String(text.prefix(40))))'")
      }
      after = UInt64(value)
    }
    let resolution = configuration.resolution
    do {
      let authorize = authorizeDevice(project: project)
      try await storage.read { store in
        let engine = ResolutionEngine(store: store.resolution, configuration: resolution)
        try authorize(engine.authenticate(credentials))
      }
    } catch let error as ResolverError {
      throw Self.failure(for: error)
    } catch let failure as APIFailure {
      throw failure
    } catch {
      throw APIFailure.unavailable("the database did not answer; try again")
    }
    let apiKeyID = try RequestContext.required().apiKeyID
    let lease = try streams.open(
      key: apiKeyID, address: ClientAddress.current.text, project: project)
    let (listenerID, wakeups) = hub.listen(
      to: credentials.id, key: apiKeyID,
      pollInterval: min(configuration.eventPollInterval, configuration.heartbeat))
    let listener = EventStreamListener(
      hub: hub, device: credentials.id, id: listenerID, lease: lease)
    metrics.eventStreams.increment()
    let sequence = DeviceEventSequence(
      storage: storage, device: credentials.id, project: project,
      apiKeyID: apiKeyID, after: after, wakeups: wakeups,
      listener: listener, heartbeat: configuration.heartbeat, metrics: metrics,
      activity: activity)
    return .ok(
      .init(
        body: .textEventStream(
          HTTPBody(
            sequence.asEncodedServerSentEvents(), length: .unknown, iterationBehavior: .single))
      ))
  }
}

/// Keeps a stream's hub registration (its wake-ups and its poll) and its place among the open
/// streams (``EventStreamCounts``); ends both when the stream goes away (the client
/// disconnected and the body stopped being read).
final class EventStreamListener: Sendable {
  let hub: EventHub
  let device: DeviceID
  let id: Int
  let lease: EventStreamCounts.Lease

  init(hub: EventHub, device: DeviceID, id: Int, lease: EventStreamCounts.Lease) {
    self.hub = hub
    self.device = device
    self.id = id
    self.lease = lease
  }

  deinit {
    let (hub, device, id) = (hub, device, id)
    hub.stopListening(to: device, id: id)
  }
}

/// Reads the log lazily: the client's reading pace is the backpressure, so a slow client never
/// makes the server drop or buffer events without bound.
struct DeviceEventSequence: AsyncSequence, Sendable {
  typealias Element = ServerSentEvent

  let storage: any ResolverStorage
  let device: DeviceID
  /// The project and API key the stream was opened with: checked again on every read, so a
  /// removed device ends the stream at its next wake or heartbeat. A revoked key's streams
  /// are also ended by the sweeper, which checks the keys of the open streams (`Sweeper`).
  let project: String
  let apiKeyID: String
  let after: UInt64
  let wakeups: AsyncStream<Void>
  let listener: EventStreamListener
  let heartbeat: Duration
  let metrics: ServerMetrics
  let activity: ProjectActivity

  func makeAsyncIterator() -> Iterator {
    Iterator(sequence: self, last: after, wakeups: wakeups.makeAsyncIterator())
  }

  struct Iterator: AsyncIteratorProtocol {
    let sequence: DeviceEventSequence
    var last: UInt64
    var wakeups: AsyncStream<Void>.Iterator
    var pending: [SequencedEvent] = []
    var lastSent = ContinuousClock.now
    let batch = 256
    /// What one read holds at most (plus one event): a stream of large messages does not
    /// hold 256 of them in memory at once.
    let byteBudget = 1 << 20

    mutating func next() async throws -> ServerSentEvent? {
      while true {
        if !pending.isEmpty {
          let item = pending.removeFirst()
          last = item.sequence
          lastSent = .now
          sequence.metrics.eventsStreamed.increment()
          sequence.activity.streamed(project: sequence.project)
          return Self.serverSentEvent(item)
        }
        let (storage, device, after, limit, budget) = (
          sequence.storage, sequence.device, last, batch, byteBudget
        )
        let (project, keyID) = (sequence.project, sequence.apiKeyID)
        let read = try await storage.read { store -> [SequencedEvent]? in
          guard try store.apiKeys.isActiveAPIKey(id: keyID),
            try store.resolution.devices.device(device)?.project == project
          else { return nil }
          return try store.eventLog.events(
            for: device, after: after, limit: limit, byteBudget: budget)
        }
        guard let read else { return nil }  // the key was revoked or the device removed
        pending = read
        if !pending.isEmpty { continue }
        if lastSent.duration(to: .now) >= sequence.heartbeat {
          lastSent = .now
          return ServerSentEvent(event: "keepalive")
        }
        // `sequence` holds the listener, so the hub registration lives as long as this
        // iterator.
        guard await wakeups.next() != nil, !Task.isCancelled else { return nil }
      }
    }

    static func serverSentEvent(_ item: SequencedEvent) -> ServerSentEvent {
      let wire = Components.Schemas.Event(item)
      let data = (try? JSONEncoder().encode(wire)).map { String(decoding: $0, as: UTF8.self) }
      return ServerSentEvent(id: String(item.sequence), event: wire.kind.rawValue, data: data)
    }
  }
}
