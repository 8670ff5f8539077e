@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Strategy
import Tokens

extension PeerResolver {
  /// Carries out what the exchange decided.
  func perform(_ actions: [PeerExchangeStateMachine.Action], now time: Date) {
    for action in actions {
      switch action {
      case .sendWhoHas(let queryID, let key):
        statistics.whoHasSent += 1
        send(.whoHas(queryID: queryID, token: key.token), to: nil, now: time)
      case .probe(let queryID, let key, let address):
        // A query with no cookie, no mediums and no handles: the owner can only answer it
        // with an iHave carrying the cookie (no larger than the probe), and learns nothing
        // from it. A who-has would do as much, but would spend the who-has budget that a
        // flood under this device's address may have emptied.
        guard let sender = ephemeralID(of: key.local) else { continue }
        statistics.probes += 1
        send(
          .query(
            PeerQuery(
              queryID: queryID, token: key.token, mediums: [], sender: sender,
              handles: PeerHandles())), to: address, now: time)
      case .sendQuery(let queryID, let key, let mediums, let address):
        guard let sender = ephemeralID(of: key.local) else { continue }
        // Only what the owner does not hold: its answer's publications while their digest
        // stands (held in the owner's shadow here), our handles while the owner holds them.
        let mine = handles(of: key.local, now: time)
        let mineDigest = sealer?.keys.digest(of: mine, owner: key.token, hearer: sender, at: time)
        let leftOut = mineDigest != nil && exchange.ownerHolds(key) == mineDigest
        let known = exchange.answeredDigest(of: key).flatMap { digest in
          exchange.owner(of: key).flatMap { shadows[$0]?.answeredFor }
            == AnsweredPublications(local: key.local, digest: digest) ? digest : nil
        }
        if leftOut { statistics.handlesLeftOut += 1 }
        let query = PeerQuery(
          queryID: queryID, cookie: ownerCookies[address] ?? 0, token: key.token,
          mediums: mediums, sender: sender, knownDigest: known, handlesDigest: mineDigest,
          handles: leftOut ? nil : mine)
        send(.query(query), to: address, now: time)
      case .forget(let key, let owner):
        logger.debug(
          "token no longer heard",
          metadata: ["token": "\(key.token.hex)", "owner": "\(owner.map { "\($0)" } ?? "-")"])
      case .refreshedLocally(let key, let owner):
        // The answer still holds: the owner's shadow and its token's binding are as fresh as
        // if it had answered again (the binding lasts at most the shadow expiry, well under
        // a token's life).
        statistics.localRefreshes += 1
        shadows[owner]?.lastContact = time
        if let until = shadows[owner]?.validUntil[key.token], until > time {
          let milliseconds = min(until.timeIntervalSince(time) * 1000, Double(UInt32.max))
          bind(key.token, to: owner, validFor: UInt32(milliseconds), now: time)
        }
      }
    }
  }

  /// Answers `hearer` (asked with `queryID`, or 0 for an update) with the publications of
  /// `owner` its subscriptions accept, and the mediums `owner` hears it on itself; returns
  /// those mediums. With `known`, the digest the hearer holds while its subscriptions are
  /// those it held then (its question left its handles out), an owner whose digest is still
  /// `known` sends no publications: they stand.
  @discardableResult
  func sendAnswer(
    queryID: UInt64, owner: DeviceID, token: Token, to address: PeerAddress, hearer: Identifier,
    known: HandlesDigest? = nil, now time: Date
  ) -> DiscoveryMediums {
    let hears = mediums(hearing: hearer, by: owner, now: time)
    sendAnswer(
      queryID: queryID, owner: owner, token: token, to: address,
      wanted: shadows[hearer]?.lastSubscriptions ?? [], hearsYou: hears,
      yours: shadows[hearer]?.handlesDigest, known: known, now: time)
    return hears
  }

  /// Answers at `address` with the publications of `owner` that `wanted` accept (none when
  /// its digest is `known`), the digest of its handles, `hearsYou` and `yours`.
  func sendAnswer(
    queryID: UInt64, owner: DeviceID, token: Token, to address: PeerAddress,
    wanted: [PeerSubscription], hearsYou: DiscoveryMediums = [], yours: HandlesDigest? = nil,
    known: HandlesDigest? = nil, now time: Date
  ) {
    guard let ephemeral = ephemeralID(of: owner) else { return }
    let all = handles(of: owner, now: time)
    let digest = sealer?.keys.digest(token: token, handles: all, at: time)
    let unchanged = known != nil && known == digest
    let publications =
      unchanged
      ? []
      : all.publications.filter { publication in
        wanted.contains { $0.accepts(publication.message) }
      }
    if unchanged { statistics.unchangedAnswers += 1 }
    let until = engine.store.devices.binding(of: token) ?? time
    let validFor = UInt32(min(max(until.timeIntervalSince(time) * 1000, 0), Double(UInt32.max)))
    send(
      .answer(
        PeerAnswer(
          queryID: queryID, token: token, sender: ephemeral,
          cookie: cookies.cookie(for: address, now: time), tokenValidFor: validFor,
          publications: publications, digest: digest, hearsYou: hearsYou, yours: yours,
          unchanged: unchanged)), to: address, now: time)
  }

  /// The mediums on which the local device `local` heard one of `hearer`'s tokens within the
  /// last ``PeerExchangeStateMachine/Configuration/refreshInterval``: where its own hearing
  /// keeps `hearer`'s side of the nearness fresh here. None unless that hearing qualifies
  /// every pair the engine could match between them: a pair of `local`'s subscription and
  /// `hearer`'s publication counts our hearing only when the subscription scans and the
  /// publication broadcasts, and the hearer's (its questions) only the other way round.
  func mediums(
    hearing hearer: Identifier, by local: DeviceID, localScans: Bool? = nil, now time: Date
  ) -> DiscoveryMediums {
    guard let shadow = shadows[hearer],
      shadow.publications.keys.allSatisfy({ $0.strategy.mode.contains(.broadcast) }),
      localScans ?? scansOnly(local)
    else { return [] }
    let tokens = shadow.tokens
    let since = time.addingTimeInterval(-exchange.configuration.refreshInterval.seconds)
    return tokens.reduce(into: []) { mediums, token in
      mediums.formUnion(exchange.heardMediums(.init(local: local, token: token), since: since))
    }
  }

  /// Whether every subscription of the local device `local` scans (see
  /// ``mediums(hearing:by:localScans:now:)``).
  func scansOnly(_ local: DeviceID) -> Bool {
    engine.store.handles.subscriptions(on: local).allSatisfy { $0.strategy.mode.contains(.scan) }
  }

  /// The digest of `local`'s handles under `token`, for its directives (nil before any
  /// registration gave the keys).
  func digest(of local: DeviceID, token: Token, now time: Date) -> HandlesDigest? {
    sealer?.keys.digest(token: token, handles: handles(of: local, now: time), at: time)
  }

  /// Keeps the recent hearers of every local device: one told that this device heard it,
  /// and no longer heard on one of those mediums, gets an unasked update saying on which it is
  /// heard now (it then asks again, which keeps its side fresh here), again every refresh
  /// interval until it asks (the update may be lost); one still heard on them is kept past
  /// its memory; the rest are forgotten once their memory ran out.
  func reviewHearers(now time: Date) {
    let interval = exchange.configuration.refreshInterval.seconds
    for local in hearers.keys.sorted(by: { $0.description < $1.description }) {
      // Changed in place, unsorted (hundreds of hearers on a crowded segment, at every
      // tick); only the updates go out in a fixed order.
      guard var recent = hearers.removeValue(forKey: local) else { continue }
      // Asked once per local device, not once per hearer.
      let localScans = scansOnly(local)
      var lapsed: [(hearer: Identifier, entry: RecentHearer)] = []
      for hearer in Array(recent.keys) {
        guard let entry = recent[hearer] else { continue }
        if !entry.toldHears.isEmpty {
          let hears = mediums(hearing: hearer, by: local, localScans: localScans, now: time)
          if entry.toldHears.isSubset(of: hears) {
            recent[hearer]!.until = max(entry.until, time + configuration.hearerMemory)
            recent[hearer]!.lapseToldAt = nil
          } else if entry.lapseToldAt.map({ time.timeIntervalSince($0) >= interval }) ?? true {
            // Told until it asks: its query replaces this entry with what is heard then.
            statistics.hearingLapses += 1
            recent[hearer]!.lapseToldAt = time
            lapsed.append((hearer, entry))
          }
        }
        if recent[hearer]!.until <= time { recent[hearer] = nil }
      }
      hearers[local] = recent
      for (hearer, entry) in lapsed.sorted(by: { $0.hearer < $1.hearer }) {
        sendAnswer(
          queryID: 0, owner: local, token: entry.token, to: entry.address, hearer: hearer,
          now: time)
      }
    }
  }

  /// Tells the devices that asked `owner` lately that its publications changed.
  func sendUpdates(from owner: DeviceID, now time: Date) {
    for (hearer, recent) in (hearers[owner] ?? [:]).sorted(by: { $0.key < $1.key })
    where recent.until > time {
      sendAnswer(
        queryID: 0, owner: owner, token: recent.token, to: recent.address, hearer: hearer,
        now: time)
    }
  }

  /// A local device's publications and subscriptions as the wire carries them, with their
  /// remaining TTL (those already expired left out). Past the wire's limits, the same ones
  /// are left out every time (sorted by id first), so a peer does not see them come and go.
  func handles(of local: DeviceID, now time: Date) -> PeerHandles {
    func remaining(_ strategy: Strategy, _ expiresAt: Date?) -> Strategy? {
      var strategy = strategy
      guard let expiresAt else { return strategy }
      guard let ttl = try? TTL(seconds: expiresAt.timeIntervalSince(time)) else { return nil }
      strategy.ttl = ttl
      return strategy
    }
    let publications = engine.store.handles.publications(on: local).sorted {
      $0.id.identifier < $1.id.identifier
    }.compactMap {
      record in
      remaining(record.strategy, record.expiresAt).map {
        PeerPublication(message: record.message, strategy: $0)
      }
    }
    let subscriptions = engine.store.handles.subscriptions(on: local).sorted {
      $0.id.identifier < $1.id.identifier
    }.compactMap {
      record in
      remaining(record.strategy, record.expiresAt).map {
        PeerSubscription(
          namespace: record.namespace, type: record.type, strategy: $0,
          deviceTypes: record.deviceTypes)
      }
    }
    return PeerHandles(
      publications: Array(publications.prefix(PeerLimits.maximumPublications)),
      subscriptions: Array(subscriptions.prefix(PeerLimits.maximumSubscriptions)))
  }

  /// Seals `message` and queues it for `address` (nil: every device): one datagram when it
  /// fits, else up to ``PeerLimits/maximumFragments`` fragments. A message too large even for
  /// that loses publications (then subscriptions) from its end until it fits.
  func send(_ message: PeerMessage, to address: PeerAddress?, now time: Date) {
    guard let sealer else { return }
    let limit = min(
      PeerLimits.maximumDatagramSize,
      transports.filter { address == nil || $0.kind == address?.transport }
        .map(\.maximumDatagramSize).min() ?? 0)
    var message = message
    while true {
      let body = message.body
      let parts: [(flags: UInt8, body: [UInt8])]?
      if body.count + PeerHeader.overhead <= limit {
        parts = [(0, body)]
      } else {
        parts = Fragments.split(body, datagramLimit: limit, messageID: .random(in: 1...(.max)))
          .map { $0.map { (PeerHeader.fragmentFlag, $0) } }
      }
      if let parts {
        let cost = parts.reduce(0) {
          $0 + PeerPadding.size(of: $1.body.count + PeerHeader.overhead, limit: limit)
        }
        if let address,
          !destinationBudget.admit(
            host(of: address), cost: Double(cost), now: time.timeIntervalSince1970)
        {
          statistics.refusedSends += 1
          logger.debug(
            "a peer message over its address's byte budget; not sent",
            metadata: ["address": "\(address)", "bytes": "\(cost)"])
          return
        }
        // Stamped in the receiver's clock as far as we know it, never before the last stamp
        // it got from us (see PeerClockOffsets); an iHave in ours: it answers a question (no
        // window applies to it), and it is what the asker learns our clock from.
        let milliseconds = PeerClock.milliseconds(time)
        let stamp =
          message.kind == .iHave
          ? milliseconds
          : address.map { clockOffsets.stamp(for: $0, now: milliseconds) } ?? milliseconds
        do {
          for part in parts {
            let bytes = try sealer.seal(
              kind: message.kind, flags: part.flags, body: part.body, sentAt: stamp, limit: limit)
            queue(Outgoing(bytes: bytes, address: address))
          }
        } catch {
          logger.error("sealing failed", metadata: ["error": "\(error)"])
        }
        return
      }
      guard let smaller = message.trimmed() else {
        logger.warning("a peer message does not fit the transport; not sent")
        return
      }
      logger.warning(
        "a peer message is larger than its fragments carry; handles left out",
        metadata: ["limit": "\(limit)", "fragments": "\(PeerLimits.maximumFragments)"])
      message = smaller
    }
  }
}

extension PeerResolver {
  /// Queues `outgoing` for the sender, counting the oldest dropped from a full outbox.
  func queue(_ outgoing: Outgoing) {
    switch outboxContinuation.yield(outgoing) {
    case .enqueued: queued += 1
    case .dropped:
      queued += 1
      statistics.outboxOverflows += 1
    case .terminated: break
    @unknown default: break
    }
  }
}

extension PeerMessage {
  /// The message with its last publication (or, with none, its last subscription) left out;
  /// nil when there is nothing to leave out.
  fileprivate func trimmed() -> PeerMessage? {
    switch self {
    case .whoHas, .iHave: return nil
    case .query(var query):
      guard var handles = query.handles else { return nil }
      // The digest named the whole set: what is left no longer has it.
      query.handlesDigest = nil
      if !handles.publications.isEmpty {
        handles.publications.removeLast()
      } else if !handles.subscriptions.isEmpty {
        handles.subscriptions.removeLast()
      } else {
        return nil
      }
      query.handles = handles
      return .query(query)
    case .answer(var answer):
      guard !answer.publications.isEmpty else { return nil }
      answer.publications.removeLast()
      // The digest names the whole set: a hearer holding less must never hear "unchanged".
      answer.digest = nil
      return .answer(answer)
    }
  }
}
