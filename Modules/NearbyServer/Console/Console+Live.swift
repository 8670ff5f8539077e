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
        perSession: configuration.console.liveViewsPerSession)
    else {
      throw APIFailure.rateLimited(
        retryAfter: 10,
        subject:
          "live views: this project keeps at most \(configuration.console.liveViewsPerProject) "
          + "open (\(configuration.console.liveViewsPerSession) a session); close one")
    }
    let (stream, continuation) = AsyncStream.makeStream(
      of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(Self.liveBatch * 2))
    let (storage, hub, heartbeat, start) = (
      storage, handler.hub, configuration.heartbeat, now.addingTimeInterval(-Self.liveLookBack)
    )
    let (project, keyID) = (session.project, session.keyID)
    let task = Task {
      let ticker = Task {
        while !Task.isCancelled {
          try? await Task.sleep(for: Self.livePollInterval)
          hub.nudge(watcher: watcher)
        }
      }
      defer {
        ticker.cancel()
        continuation.finish()
        hub.stopWatching(id: watcher)
      }
      var since = start
      var sentAtSince = Set<String>()
      var lastSent = ContinuousClock.now
      continuation.yield(ByteBuffer(string: ": live events of \(project)\n\n"))
      var wakeIterator = wakeups.makeAsyncIterator()
      while !Task.isCancelled {
        let from = since
        let read = try? await storage.read { store -> [ProjectEvent]? in
          guard try store.apiKeys.isActiveAPIKey(id: keyID) else { return nil }
          return try store.projects.projectEvents(
            project: project, since: from, limit: Self.liveBatch)
        }
        // nil: the key was revoked, or the database did not answer (the client reconnects).
        guard let events = read else { return }
        for event in events {
          let key = "\(event.device)/\(event.sequence)"
          if event.createdAt > since {
            since = event.createdAt
            sentAtSince = []
          }
          guard sentAtSince.insert(key).inserted else { continue }
          continuation.yield(ByteBuffer(string: Self.serverSentEvent(event)))
          lastSent = .now
        }
        if lastSent.duration(to: .now) >= heartbeat {
          continuation.yield(ByteBuffer(string: ": keepalive\n\n"))
          lastSent = .now
        }
        guard await wakeIterator.next() != nil else { return }
      }
    }
    continuation.onTermination = { _ in task.cancel() }
    var headers = Self.securityHeaders
    headers[.contentType] = "text/event-stream"
    return Response(status: .ok, headers: headers, body: .init(asyncSequence: stream))
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
