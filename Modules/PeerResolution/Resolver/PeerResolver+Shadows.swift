@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Tokens

extension PeerResolver {
  /// Creates or updates the shadow of the peer `ephemeral` with what it told us: the full
  /// current set of its publications, and of its subscriptions when given (an answer carries
  /// none). What is missing from the set is removed (its subscribers here get `lost`), what
  /// is new is added with the TTL it has left. Nil for a new peer past
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
    var report = Report()
    var newPublications: [PeerPublication: PublicationID] = [:]
    for publication in publications {
      let identity = publication.identity
      if let id = shadow.publications[identity] ?? newPublications[identity] {
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
        if let id = shadow.subscriptions[identity] ?? newSubscriptions[identity] {
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
    shadows[ephemeral] = shadow
    if report != Report() { reportFromShadow(shadow, report: report, now: time) }
    return shadow
  }

  /// Records that the shadow heard tokens (`sightings`).
  func reportFromShadow(_ shadow: ShadowDevice, sightings: [Sighting], now time: Date) {
    guard !sightings.isEmpty else { return }
    reportFromShadow(shadow, report: Report(sightings: sightings), now: time)
  }

  private func reportFromShadow(_ shadow: ShadowDevice, report: Report, now time: Date) {
    do {
      // The shadow's own events (its answer) are nobody's: its device learns from its engine.
      let (_, deviceEvents) = try engine.report(report, from: shadow.credentials, now: time)
      route(deviceEvents)
    } catch {
      logger.warning(
        "a peer's handles were refused by the engine", metadata: ["error": "\(error)"])
    }
  }

  /// Binds a peer's token to its shadow for as long as the owner said it resolves (plus the
  /// engine's grace for sightings in flight).
  func bind(_ token: Token, to ephemeral: Identifier, validFor milliseconds: UInt32, now time: Date)
  {
    guard var shadow = shadows[ephemeral] else { return }
    let validity = min(Double(milliseconds) / 1000, configuration.shadowExpiry.secondsValue)
    // A token another shadow held is taken from it.
    if let holder = engine.store.device(heard: token, at: time),
      let other = shadowOfDevice[holder], other != ephemeral
    {
      shadows[other]?.tokens.remove(token)
    }
    engine.store.bind(
      token, to: shadow.credentials.id,
      until: time.addingTimeInterval(validity + configuration.resolution.tokenGrace.secondsValue))
    shadow.tokens.insert(token)
    shadows[ephemeral] = shadow
  }

  /// Removes shadows nothing was heard from for ``PeerResolverConfiguration/shadowExpiry``:
  /// their tokens are unbound and the engine forgets them (subscribers here that still had
  /// their messages get `lost`).
  func expireShadows(now time: Date) {
    let limit = time.addingTimeInterval(-configuration.shadowExpiry.secondsValue)
    for (ephemeral, shadow) in shadows.sorted(by: { $0.key < $1.key })
    where shadow.lastContact <= limit {
      shadows[ephemeral] = nil
      shadowOfDevice[shadow.credentials.id] = nil
      for token in shadow.tokens {
        if engine.store.device(heard: token, at: time) == shadow.credentials.id {
          engine.store.unbind(token)
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
