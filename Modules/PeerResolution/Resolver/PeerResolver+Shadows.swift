@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Tokens

extension PeerResolver {
  /// Creates or updates the shadow of the peer `ephemeral` with what it told us: the full
  /// current set of its publications, and of its subscriptions when given (an answer carries
  /// none). What is missing from the set is removed (its subscribers here get `lost`), what
  /// is new is added with the TTL it has left. A handle whose engine record is gone (its TTL
  /// ran out) counts as new, so one republished after its expiry is added again. The shadow
  /// is saved with the new handles only once the engine took them. Nil for a new peer past
  /// ``PeerResolverConfiguration/maximumShadows`` (counted) or when the engine refused.
  @discardableResult
  func updateShadow(
    _ ephemeral: Identifier, publications: [PeerPublication],
    subscriptions: [PeerSubscription]?, now time: Date
  ) -> ShadowDevice? {
    var shadow: ShadowDevice
    if let existing = shadows[ephemeral] {
      shadow = existing
    } else {
      guard shadows.count < configuration.maximumShadows else {
        statistics.refusedPeers += 1
        return nil
      }
      guard let credentials = try? engine.register(project: Self.project, now: time) else {
        return nil
      }
      shadow = ShadowDevice(credentials: credentials, lastContact: time)
      shadowOfDevice[credentials.id] = ephemeral
    }
    shadow.lastContact = time
    let before = shadow
    var report = Report()
    var newPublications: [PeerPublication: PublicationID] = [:]
    for publication in publications {
      let identity = publication.identity
      let expiry = publication.strategy.ttl.seconds.map { time.addingTimeInterval($0) }
      if let id = newPublications[identity]
        ?? shadow.publications[identity].flatMap({
          holdsPublication($0, expiring: expiry, at: time) ? $0 : nil
        })
      {
        newPublications[identity] = id
        continue
      }
      let id = PublicationID.random()
      newPublications[identity] = id
      report.publish.append(
        PublicationSpec(id: id, message: publication.message, strategy: publication.strategy))
    }
    report.unpublish = shadow.publications.filter { newPublications[$0.key] == nil }.map(\.value)
    shadow.publications = newPublications
    if let subscriptions {
      var newSubscriptions: [PeerSubscription: SubscriptionID] = [:]
      for subscription in subscriptions {
        let identity = subscription.identity
        if let id = newSubscriptions[identity]
          ?? shadow.subscriptions[identity].flatMap({
            holdsSubscription($0, at: time) ? $0 : nil
          })
        {
          newSubscriptions[identity] = id
          continue
        }
        let id = SubscriptionID.random()
        newSubscriptions[identity] = id
        report.subscribe.append(
          SubscriptionSpec(
            id: id, namespace: subscription.namespace, type: subscription.type,
            strategy: subscription.strategy, deviceTypes: subscription.deviceTypes))
      }
      report.unsubscribe = shadow.subscriptions.filter { newSubscriptions[$0.key] == nil }
        .map(\.value)
      shadow.subscriptions = newSubscriptions
      shadow.lastSubscriptions = subscriptions
    }
    guard report == Report() || reportFromShadow(shadow, report: report, now: time) else {
      // The engine holds what it held before: so does the shadow.
      var kept = before
      kept.lastContact = time
      shadows[ephemeral] = kept
      return nil
    }
    shadows[ephemeral] = shadow
    return shadow
  }

  /// Whether the engine still holds publication `id`, unexpired at `time`, expiring when the
  /// peer says it does (within 2 s: the TTL on the wire is in milliseconds, and the answer
  /// took its time); one renewed with a new TTL is added anew.
  private func holdsPublication(_ id: PublicationID, expiring expiry: Date?, at time: Date)
    -> Bool
  {
    guard let record = engine.store.handles.publication(id) else { return false }
    switch (record.expiresAt, expiry) {
    case (nil, nil): return true
    case (let held?, let said?): return held > time && abs(held.timeIntervalSince(said)) <= 2
    default: return false
    }
  }

  /// Whether the engine still holds subscription `id`, unexpired at `time`.
  private func holdsSubscription(_ id: SubscriptionID, at time: Date) -> Bool {
    guard let record = engine.store.handles.subscription(id) else { return false }
    return record.expiresAt.map { $0 > time } ?? true
  }

  /// Records that the shadow heard tokens (`sightings`).
  func reportFromShadow(_ shadow: ShadowDevice, sightings: [Sighting], now time: Date) {
    guard !sightings.isEmpty else { return }
    reportFromShadow(shadow, report: Report(sightings: sightings), now: time)
  }

  /// Reports for the shadow; false (logged) when the engine refused the report.
  @discardableResult
  private func reportFromShadow(_ shadow: ShadowDevice, report: Report, now time: Date) -> Bool {
    do {
      // The shadow's own events (its answer) are nobody's: its device learns from its engine.
      let (_, deviceEvents) = try engine.report(report, from: shadow.credentials, now: time)
      route(deviceEvents)
      return true
    } catch {
      logger.warning(
        "a peer's handles were refused by the engine", metadata: ["error": "\(error)"])
      return false
    }
  }

  /// Binds a peer's token to its shadow for as long as the owner said it resolves (plus the
  /// engine's grace for sightings in flight).
  func bind(_ token: Token, to ephemeral: Identifier, validFor milliseconds: UInt32, now time: Date)
  {
    guard var shadow = shadows[ephemeral] else { return }
    let validity = min(Double(milliseconds) / 1000, configuration.shadowExpiry.seconds)
    // A token another shadow held is taken from it.
    if let holder = engine.store.devices.device(heard: token, at: time),
      let other = shadowOfDevice[holder], other != ephemeral
    {
      shadows[other]?.tokens.remove(token)
    }
    engine.store.devices.bind(
      token, to: shadow.credentials.id,
      until: time.addingTimeInterval(validity + configuration.resolution.tokenGrace.seconds))
    shadow.tokens.insert(token)
    shadow.validUntil[token] = time.addingTimeInterval(Double(milliseconds) / 1000)
    shadows[ephemeral] = shadow
  }

  /// Removes shadows nothing was heard from for ``PeerResolverConfiguration/shadowExpiry``:
  /// their tokens are unbound and the engine forgets them (subscribers here that still had
  /// their messages get `lost`).
  func expireShadows(now time: Date) {
    let limit = time.addingTimeInterval(-configuration.shadowExpiry.seconds)
    // The few gone quiet, in a fixed order; not every shadow sorted at every tick.
    let quiet = shadows.compactMap { $0.value.lastContact <= limit ? $0.key : nil }.sorted()
    for ephemeral in quiet {
      guard let shadow = shadows[ephemeral] else { continue }
      shadows[ephemeral] = nil
      shadowOfDevice[shadow.credentials.id] = nil
      for token in shadow.tokens {
        if engine.store.devices.device(heard: token, at: time) == shadow.credentials.id {
          engine.store.devices.unbind(token)
        }
      }
      do {
        route(try engine.unregister(shadow.credentials, now: time))
      } catch {
        logger.error("removing a peer failed", metadata: ["error": "\(error)"])
      }
    }
  }
}
