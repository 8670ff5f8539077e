extension MessageManager {
  /// Delivers events in the order the resolver numbered them (``EventSequencer``).
  func deliver(_ events: [SequencedEvent]) {
    let (release, skipped) = eventSequencer.receive(events)
    if skipped > 0 {
      logger.warning(
        "events from the resolver missing; delivering the ones after them",
        metadata: ["missing": "\(skipped)", "held": "\(EventSequencer.holdLimit)"])
    }
    var handlesExpired = false
    for event in release { handlesExpired = dispatch(event) || handlesExpired }
    // An expiry changes which mediums must broadcast or scan: ask for new directives.
    if handlesExpired { request(.requestDirectives) }
  }

  /// Hands one event to its subscription or publication; true for an expiry.
  private func dispatch(_ event: ResolverEvent) -> Bool {
    switch event {
    case .found(let id, let message):
      guard let record = subscriptions[id] else { return false }
      record.onFound?(message)
      record.continuation.yield(.found(message))
    case .lost(let id, let message):
      guard let record = subscriptions[id] else { return false }
      record.onLost?(message)
      record.continuation.yield(.lost(message))
    case .subscriptionExpired(let id):
      guard let record = subscriptions.removeValue(forKey: id) else { return false }
      pausing.removeSubscription(id)
      logger.debug("subscription expired", metadata: ["subscription": "\(id)"])
      if record.beacons != nil {
        beaconTracking.forget(id)
        request(.reconcileBeaconScanning)
      }
      // Inactive before anyone hears of the expiry.
      record.cell.set(.inactive)
      record.expiredHandler?()
      record.continuation.yield(.expired)
      record.continuation.finish()
      return true
    case .publicationExpired(let id):
      guard let record = publications.removeValue(forKey: id) else { return false }
      pausing.removePublication(id)
      logger.debug("publication expired", metadata: ["publication": "\(id)"])
      record.cell.set(.inactive)
      record.expiredHandler?()
      return true
    }
    return false
  }
}
