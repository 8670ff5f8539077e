@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Strategy
import Tokens

extension PeerResolver {
  /// Judges one datagram and acts on it: size, project tag, rate limits (the sender's, then
  /// its host's), seal, replay, fragments, body, in that order; whatever fails is dropped and
  /// counted, never thrown.
  ///
  /// The clock window applies to what nothing else vouches for: who-has, queries and unasked
  /// answers. An `iHave` or an answer to a question must match a question still waiting (a
  /// random id drawn moments ago), which no replay can; from an `iHave`, stamped in its
  /// sender's own clock, that clock's offset is learnt, and what is sent to it later is
  /// stamped in its clock. A query outside the
  /// window gets nothing (a capture relayed from a forged source would otherwise be
  /// answered there). A who-has outside it still gets its `iHave`, of its own padded size, so
  /// a peer whose clock is off learns the offset, and nothing else happens.
  ///
  /// A fresh query is answered with publications only when it carries the cookie of its
  /// source address (``AddressCookies``) or came over a transport whose addresses cannot be
  /// forged; otherwise it gets an `iHave` with the cookie, no larger than itself.
  func receive(_ datagram: PeerDatagram, on transport: Int) {
    statistics.received += 1
    let limit = min(PeerLimits.maximumDatagramSize, transports[transport].maximumDatagramSize)
    guard datagram.bytes.count <= limit else {
      statistics.droppedOversized += 1
      return
    }
    guard let sealer else {
      statistics.droppedOtherProject += 1
      return
    }
    let time = now()
    // The cheap header checks first, then the sender's budget (who-has apart), then the seal.
    let kind: PeerMessageKind
    do {
      kind = try PeerHeader(parsing: datagram.bytes, keys: sealer.keys).kind
    } catch {
      count(error)
      return
    }
    let seconds = time.timeIntervalSince1970
    let admitted =
      kind == .whoHas
      ? whoHasRateLimiter.admit(datagram.sender, now: seconds)
      : rateLimiter.admit(datagram.sender, now: seconds)
    guard admitted else {
      statistics.droppedRateLimited += 1
      return
    }
    guard hostRateLimiter.admit(transports[transport].host(of: datagram.sender), now: seconds)
    else {
      statistics.droppedHostRateLimited += 1
      return
    }
    let header: PeerHeader
    let body: [UInt8]
    do {
      (header, body) = try sealer.open(datagram.bytes)
    } catch {
      count(error)
      return
    }
    guard replayGuard.admit(nonce: header.nonce) else {
      statistics.droppedReplayed += 1
      return
    }
    var whole = body
    if header.flags & PeerHeader.fragmentFlag != 0 {
      do {
        guard
          let assembled = try reassembler.add(
            body, kind: header.kind, from: datagram.sender, now: time)
        else {
          // Kept until the rest of its message arrives; an answer on its way keeps the
          // question it answers from being asked again meanwhile.
          statistics.accepted += 1
          exchange.progress(from: datagram.sender, now: time)
          return
        }
        whole = assembled
      } catch {
        count(error)
        return
      }
    }
    let message: PeerMessage
    do {
      message = try PeerMessage(kind: header.kind, body: whole)
    } catch {
      count(error)
      return
    }
    handle(message, from: datagram.sender, sentAt: header.sentAt, now: time)
  }

  private func count(_ error: PeerWireError) {
    switch error {
    case .otherProject: statistics.droppedOtherProject += 1
    case .unauthenticated: statistics.droppedUnauthenticated += 1
    case .stale: statistics.droppedStale += 1
    case .replayed: statistics.droppedReplayed += 1
    case .tooLarge, .truncated, .invalid, .notPeerDatagram: statistics.droppedMalformed += 1
    }
  }

  private func handle(
    _ message: PeerMessage, from sender: PeerAddress, sentAt: UInt64, now time: Date
  ) {
    let nowMilliseconds = PeerClock.milliseconds(time)
    // Stamped in our clock by a sender that knows its offset to us, else in its own.
    let fresh = replayGuard.isFresh(sentAt: sentAt, now: nowMilliseconds)
    switch message {
    case .whoHas(let queryID, let token):
      countFreshness(fresh)
      // Sealed, so a project device's: it shares the segment's who-has rate with ours.
      if fresh { exchange.heardWhoHas(from: sender, now: time) }
      guard localOwner(of: token, at: time) != nil else {
        statistics.ignored += 1
        return
      }
      // The same padded size as the who-has: nothing gained by relaying one from a forged
      // source. The cookie is of use only to whoever receives at `sender`.
      send(
        .iHave(queryID: queryID, token: token, cookie: cookies.cookie(for: sender, now: time)),
        to: sender, now: time)
    case .iHave(let queryID, _, let cookie):
      statistics.accepted += 1
      let actions = exchange.ownerFound(queryID: queryID, at: sender, now: time)
      if actions.isEmpty {
        statistics.ignored += 1
      } else {
        keepCookie(cookie, from: sender)
        clockOffsets.learn(sender, sentAt: sentAt, now: nowMilliseconds)
      }
      perform(actions, now: time)
    case .query(let query):
      countFreshness(fresh)
      guard fresh else { return }
      answer(query, from: sender, now: time)
    case .answer(let answer):
      if answer.queryID == 0 {
        // Unasked: stamped in our clock, or in the owner's whose offset we learnt.
        let offset = clockOffsets.offset(of: sender)
        let shifted = UInt64(clamping: Int64(clamping: nowMilliseconds) &+ offset)
        guard fresh || replayGuard.isFresh(sentAt: sentAt, now: shifted) else {
          statistics.droppedStale += 1
          return
        }
      }
      statistics.accepted += 1
      // Not a lesson in the owner's clock: an answer is stamped in ours as far as the owner
      // knows it, and learning from it would fold the transit time into the next stamps each
      // way, a drift that grows with every refresh until queries fall out of the window.
      if apply(answer, from: sender, sentAt: sentAt, now: time), answer.queryID != 0 {
        keepCookie(answer.cookie, from: sender)
      }
    }
  }

  /// Counts a who-has or query as accepted, or as stale when outside the clock window.
  private func countFreshness(_ fresh: Bool) {
    if fresh { statistics.accepted += 1 } else { statistics.droppedStale += 1 }
  }

  /// The owner's side: with the cookie of `sender` (or over a transport that cannot be
  /// forged), learn the hearer (its handles, and that it heard us), then answer; without it,
  /// only send the cookie.
  private func answer(_ query: PeerQuery, from sender: PeerAddress, now time: Date) {
    guard let owner = localOwner(of: query.token, at: time),
      let ownerEphemeral = ephemeralID(of: owner), query.sender != ownerEphemeral,
      !isLocalEphemeral(query.sender)
    else {
      statistics.ignored += 1
      return
    }
    guard isVerified(sender) || cookies.isValid(query.cookie, for: sender, now: time) else {
      // Its source has not proven it receives: the cookie only, no larger than the query.
      statistics.challenged += 1
      send(
        .iHave(
          queryID: query.queryID, token: query.token,
          cookie: cookies.cookie(for: sender, now: time)), to: sender, now: time)
      return
    }
    let shadow: ShadowDevice
    if let handles = query.handles {
      guard
        var taken = updateShadow(
          query.sender, publications: handles.publications,
          subscriptions: handles.subscriptions, now: time)
      else { return }
      taken.handlesDigest = query.handlesDigest
      // Its whole set, not an answer's: no answer's digest stands for it.
      taken.answeredFor = nil
      shadows[query.sender] = taken
      shadow = taken
    } else {
      // Left out: the hearer holds that we hold them. We may not (forgotten, or another
      // digest): it is to ask again with them, and nothing else of the question counts.
      guard var held = shadows[query.sender], let digest = query.handlesDigest,
        held.handlesDigest == digest
      else {
        send(
          .answer(
            PeerAnswer(
              queryID: query.queryID, token: query.token, sender: ownerEphemeral,
              cookie: cookies.cookie(for: sender, now: time), tokenValidFor: 0, publications: [],
              handlesWanted: true)), to: sender, now: time)
        return
      }
      held.lastContact = time
      shadows[query.sender] = held
      shadow = held
    }
    // The hearer heard our token on each of these mediums: a sighting by its shadow.
    let sightings = query.mediums.elements.map {
      Sighting(token: query.token, medium: $0, time: time)
    }
    reportFromShadow(shadow, sightings: sightings, now: time)
    // Heard, and asking: the owner's mediums there may repeat the token less often. Only its
    // current token: a late question about the one before would replace the record of the
    // one transmitted, which would then never be told to seek again.
    if engine.store.devices.device(owner)?.token == query.token {
      pace(pacing.asked(device: owner, token: query.token, mediums: query.mediums, now: time))
    }
    // "Unchanged" only for a question whose subscriptions (what filters the publications)
    // are those of the answer it holds: one that carries handles gets them all.
    let told = sendAnswer(
      queryID: query.queryID, owner: owner, token: query.token, to: sender, hearer: query.sender,
      known: query.handles == nil ? query.knownDigest : nil, now: time)
    hearers[owner, default: [:]][query.sender] = RecentHearer(
      address: sender, token: query.token, until: time + configuration.hearerMemory,
      toldHears: told)
  }

  /// The hearer's side: take the owner's publications, bind its token, and record the
  /// sightings that waited for it. False when the answer matched nothing here, or is an
  /// unasked answer sent before the newest answer taken from that owner (older news: it
  /// would remove a publication that answer brought).
  @discardableResult
  private func apply(
    _ answer: PeerAnswer, from sender: PeerAddress, sentAt: UInt64, now time: Date
  ) -> Bool {
    let local: DeviceID
    var heard: [(medium: DiscoveryMediums, time: Date)] = []
    if answer.handlesWanted {
      // Our question left our handles out and the owner does not hold them.
      guard answer.queryID != 0, let key = exchange.key(ofQuery: answer.queryID),
        key.token == answer.token
      else {
        statistics.ignored += 1
        return false
      }
      statistics.handlesWanted += 1
      perform(exchange.handlesWanted(queryID: answer.queryID, from: sender, now: time), now: time)
      return true
    }
    if answer.queryID == 0 {
      // An update nobody asked: only from a peer we know, about a token bound to it, from
      // the address its answers come from (another key holder cannot speak for it, nor
      // bounce its updates through another source), and never "unchanged" (that answers a
      // question naming a digest).
      guard !answer.unchanged, let shadow = shadows[answer.sender],
        shadow.tokens.contains(answer.token),
        sentAt >= shadow.newestAnswer,
        let key = exchangeKey(token: answer.token, owner: answer.sender, from: sender)
      else {
        statistics.ignored += 1
        return false
      }
      local = key.local
      perform(
        exchange.updated(
          key, digest: answer.digest, hearsYou: answer.hearsYou, holds: answer.yours, now: time),
        now: time)
    } else {
      // "Unchanged" stands for the publications of the answer we hold: only from its owner,
      // about the digest we hold now (an update may have replaced it meanwhile), while the
      // shadow still holds what that answer set.
      guard let key = exchange.key(ofQuery: answer.queryID), key.token == answer.token,
        !answer.unchanged
          || (exchange.owner(of: key) == answer.sender
            && exchange.answeredDigest(of: key) == answer.digest
            && answer.digest.map { AnsweredPublications(local: key.local, digest: $0) }
              == shadows[answer.sender]?.answeredFor),
        let resolution = exchange.answered(
          queryID: answer.queryID, sender: answer.sender, from: sender, digest: answer.digest,
          hearsYou: answer.hearsYou, holds: answer.yours, now: time)
      else {
        statistics.ignored += 1
        return false
      }
      local = resolution.key.local
      heard = resolution.heard.map { ($0.key, $0.value) }
    }
    guard locals[local] != nil, ephemeralID(of: local) != answer.sender,
      !isLocalEphemeral(answer.sender)
    else { return true }
    let shadow: ShadowDevice
    if answer.unchanged {
      guard var held = shadows[answer.sender] else { return true }
      held.lastContact = time
      shadows[answer.sender] = held
      shadow = held
    } else {
      guard
        var taken = updateShadow(
          answer.sender, publications: answer.publications, subscriptions: nil, now: time)
      else {
        // Refused: what the shadow holds is not this answer's.
        shadows[answer.sender]?.answeredFor = nil
        return true
      }
      taken.answeredFor = answer.digest.map { AnsweredPublications(local: local, digest: $0) }
      shadows[answer.sender] = taken
      shadow = taken
    }
    shadows[answer.sender]?.newestAnswer = max(shadow.newestAnswer, sentAt)
    // Sightings of a token already bound here were recorded when they were reported; only
    // those that could not resolve before are recorded again (recording one again would
    // refresh its nearness as if it had just been heard).
    let wasBound =
      engine.store.devices.device(heard: answer.token, at: time) == shadow.credentials.id
    bind(answer.token, to: answer.sender, validFor: answer.tokenValidFor, now: time)
    guard !wasBound else { return true }
    // The sightings that could not resolve before, heard within the sighting window.
    let earliest = configuration.resolution.earliestHeard(now: time)
    let sightings = heard.filter { $0.time >= earliest }.sorted {
      $0.medium.rawValue < $1.medium.rawValue
    }
    .map { Sighting(token: answer.token, medium: $0.medium, time: $0.time) }
    guard !sightings.isEmpty, let credentials = locals[local]?.credentials else { return true }
    do {
      let (reply, deviceEvents) = try engine.report(
        Report(sightings: sightings), from: credentials, now: time)
      for event in reply.events { stream(event, to: local) }
      route(deviceEvents)
    } catch {
      logger.error("recording a resolved sighting failed", metadata: ["error": "\(error)"])
    }
    return true
  }

  /// Whether `ephemeral` is one of this resolver's own devices (a datagram of ours, looped
  /// back): a local device is never a peer's shadow here.
  private func isLocalEphemeral(_ ephemeral: Identifier) -> Bool {
    locals.values.contains { $0.ephemeral == ephemeral }
  }

  /// The key of the exchange entry that follows `owner`'s `token` and whose owner answers
  /// from `address`, if any.
  private func exchangeKey(token: Token, owner: Identifier, from address: PeerAddress)
    -> PeerExchangeStateMachine.Key?
  {
    for local in locals.keys.sorted(by: { $0.description < $1.description }) {
      let key = PeerExchangeStateMachine.Key(local: local, token: token)
      if exchange.owner(of: key) == owner, exchange.confirmedAddress(of: key) == address {
        return key
      }
    }
    return nil
  }
}
