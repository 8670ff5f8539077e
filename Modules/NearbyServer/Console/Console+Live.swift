import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServerStorage

/// The live view: the project's found and lost events as server-sent events. The stream
/// wakes when the event hub does (events written here, or notified by PostgreSQL) and reads
/// the log at least every ``livePollInterval``; it checks on every read that the session's
/// key is still active, and ends when it is not.
extension Console {
  static let livePollInterval: Duration = .seconds(1)
  /// How far back the view starts, and the most events one read takes.
  static let liveLookBack: TimeInterval = 60
  static let liveBatch = 100

  func registerLive(on router: Router<AddressedRequestContext>) {
    router.get("console/live") { request, context in
      await signedIn(request, context) { session in
        page(.live, title: "Live events", session: session)
      }
    }
    router.get("console/live/events") { request, context in
      await signedIn(request, context) { session in try await liveEvents(session) }
    }
  }

  /// The live view's event stream.
  /// - Throws: 429 when the project or the session has its most live views open (see
  ///   ``ConsoleConfiguration/liveViewsPerProject``); nobody else's view is closed.
  func liveEvents(_ session: ConsoleSession) async throws -> Response {
    let owner = EventHub.WatcherOwner(
      project: session.project, session: ConsoleSessionSigner.sessionID(of: session))
    guard
      let (watcher, wakeups) = handler.hub.watch(
        owner: owner, perProject: configuration.console.liveViewsPerProject,
        perSession: configuration.console.liveViewsPerSession, pollInterval: Self.livePollInterval)
    else {
      throw APIFailure.rateLimited(
        retryAfter: 10,
        subject:
          "live views: this project keeps at most \(configuration.console.liveViewsPerProject) "
          + "open (\(configuration.console.liveViewsPerSession) a session); close one")
    }
    // Held by the body's writer: the view is let go when the body is done or never written.
    let registration = LiveViewRegistration(hub: handler.hub, id: watcher)
    let (storage, heartbeat, start) = (
      storage, configuration.heartbeat, now.addingTimeInterval(-Self.liveLookBack)
    )
    let (project, keyID) = (session.project, session.keyID)
    var headers = Self.securityHeaders
    headers[.contentType] = "text/event-stream"
    // The body is written by the connection's own task, each write waiting for the client:
    // a slow client holds the view back rather than making it buffer or drop events.
    let body = ResponseBody { writer in
      _ = registration
      var since = start
      var sentAtSince = Set<String>()
      var lastSent = ContinuousClock.now
      try await writer.write(ByteBuffer(string: ": live events of \(project)\n\n"))
      var wakeIterator = wakeups.makeAsyncIterator()
      while !Task.isCancelled {
        let from = since
        let read = try? await storage.read { store -> [ProjectEvent]? in
          guard try store.apiKeys.isActiveAPIKey(id: keyID) else { return nil }
          return try store.projects.projectEvents(
            project: project, since: from, limit: Self.liveBatch)
        }
        // nil: the key was revoked, or the database did not answer (the client reconnects).
        guard let events = read else { break }
        for event in events {
          let key = "\(event.device)/\(event.sequence)"
          if event.createdAt > since {
            since = event.createdAt
            sentAtSince = []
          }
          guard sentAtSince.insert(key).inserted else { continue }
          try await writer.write(ByteBuffer(string: Self.serverSentEvent(event)))
          lastSent = .now
        }
        if lastSent.duration(to: .now) >= heartbeat {
          try await writer.write(ByteBuffer(string: ": keepalive\n\n"))
          lastSent = .now
        }
        guard await wakeIterator.next() != nil else { break }
      }
      try await writer.finish(nil)
    }
    return Response(status: .ok, headers: headers, body: body)
  }

  static func serverSentEvent(_ event: ProjectEvent) -> String {
    let fields: [String: Any] = [
      "time": time(event.createdAt), "device": event.device, "namespace": event.namespace,
      "type": event.type, "bytes": event.contentBytes,
    ]
    let data =
      (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]))
      .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    return "event: \(event.found ? "found" : "lost")\ndata: \(data)\n\n"
  }
}

/// A live view's place in the event hub, given back when the last reference goes (the body's
/// writer is done, or the response was dropped before its body was written).
final class LiveViewRegistration: Sendable {
  let hub: EventHub
  let id: Int

  init(hub: EventHub, id: Int) {
    self.hub = hub
    self.id = id
  }

  deinit { hub.stopWatching(id: id) }
}
