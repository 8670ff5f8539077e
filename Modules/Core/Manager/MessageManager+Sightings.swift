extension MessageManager {
  /// The most sightings sent in one report (what a resolver accepts).
  static let maximumSightingsPerReport = Report.maximumSightings

  /// Sends what the mediums heard, in batches, until the inbox is empty; sightings that arrive
  /// during a report go in the next one.
  func flushSightings() async {
    while true {
      let (batch, dropped) = inbox.take(upTo: Self.maximumSightingsPerReport)
      if dropped > 0 {
        logger.warning(
          "too many sightings waiting for the resolver; the oldest were dropped",
          metadata: ["dropped": "\(dropped)", "capacity": "\(inbox.capacity)"])
      }
      if batch.isEmpty { return }
      guard !isShutDown else { continue }
      do {
        try await send(Report(sightings: batch))
      } catch {
        logger.warning(
          "report of sightings failed; dropped",
          metadata: ["sightings": "\(batch.count)", "error": "\(error)"])
      }
    }
  }
}
