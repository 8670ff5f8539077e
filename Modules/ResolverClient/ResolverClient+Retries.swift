@_spi(Resolver) import Core
import Logging

/// Retries: what the server could not take is kept (bounded, see ``PendingReport``) and sent
/// with backoff once it answers again.
extension ResolverClient {
  /// Keeps what can be sent later, and makes sure a flush is scheduled.
  func keepForLater(_ report: Report, from device: DeviceCredentials) {
    pending.keep(report)
    let dropped = pending.takeDroppedCount()
    if dropped > 0 {
      logger.warning(
        "the server is unreachable and too many sightings are waiting; the oldest were dropped",
        metadata: ["dropped": "\(dropped)", "kept": "\(pending.sightings.count)"])
    }
    schedulePendingFlush(from: device)
  }

  /// Starts sending what is pending, unless that is under way.
  func schedulePendingFlush(from device: DeviceCredentials) {
    guard !flushRuns, !isClosed else { return }
    flushRuns = true
    work.start { [weak self] in await self?.flushPending(from: device) }
  }

  /// Sends what is pending once the server answers again; events of the answers go to the
  /// event stream (the manager drops any it already has).
  func flushPending(from device: DeviceCredentials) async {
    var backoff = Backoff(
      initial: configuration.initialBackoff, maximum: configuration.maximumBackoff)
    defer { flushRuns = false }
    while !pending.isEmpty, !Task.isCancelled, !isClosed {
      // The backoff, or a 429's Retry-After if that is longer.
      try? await clock.sleep(for: max(backoff.next(), retryDelay))
      guard !pending.isEmpty, !Task.isCancelled else { return }
      let outgoing = pending.merged(into: Report())
      do {
        let answer = try await send(outgoing, from: device)
        for event in answer.events { eventContinuation?.yield(event) }
        // The server answers: the rest (more than one report carries) goes without backing off.
        backoff.reset()
        logger.info(
          "the server answers again; sent what was kept",
          metadata: [
            "sightings": "\(outgoing.sightings.count)",
            "unpublish": "\(outgoing.unpublish.count)",
            "unsubscribe": "\(outgoing.unsubscribe.count)",
          ])
      } catch let error as ResolverError {
        guard case .unavailable = error else {
          logger.warning("kept report refused; dropped", metadata: ["error": "\(error)"])
          return
        }
        pending.keep(outgoing)
      } catch {
        pending.keep(outgoing)
      }
    }
  }
}
