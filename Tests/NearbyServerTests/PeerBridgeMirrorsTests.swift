@_spi(Resolver) import Core
import Foundation
@testable import NearbyServer
import Testing
import Tokens

/// The peer bridge's decisions, on instants: which device gets a mirror, which sightings pass
/// to the peers, when aliases and idle mirrors go.
@Suite struct PeerBridgeMirrorsTests {
  let start = Date(timeIntervalSince1970: 1_800_000_000)
  let phone = DeviceID.random()
  let other = DeviceID.random()
  let mirror = DeviceCredentials(id: .random(), secret: "s")

  func observation(
    _ device: DeviceID, token: Token, at time: Date, sightings: [Token] = [],
    publish: [PublicationSpec] = []
  ) -> PeerBridgeMirrors.Observation {
    PeerBridgeMirrors.Observation(
      device: device,
      report: Report(
        publish: publish,
        sightings: sightings.map { Sighting(token: $0, medium: .audio, time: time) }),
      token: token, tokenResolvesUntil: time.addingTimeInterval(130))
  }

  /// The phone's first report, and its mirror made (as ``mirror``).
  func withMirror(_ mirrors: inout PeerBridgeMirrors, token: Token) {
    _ = mirrors.observe(observation(phone, token: token, at: start), now: start)
    mirrors.created(
      phone, credentials: mirror, alias: token, until: start.addingTimeInterval(130), now: start)
  }

  @Test func aDeviceGetsItsMirrorOnceThenItsReportsAreForwarded() throws {
    var mirrors = PeerBridgeMirrors(idleLimit: .seconds(600))
    let token = Token.random()
    let heard = Token.random()
    guard
      case .create(let device, let alias, _, let sightings, let replacing) = mirrors.observe(
        observation(phone, token: token, at: start, sightings: [heard]), now: start)
    else { Issue.record("the first report made no mirror"); return }
    #expect(device == phone && alias == token && replacing == nil)
    #expect(sightings.map(\.token) == [heard])
    mirrors.created(
      phone, credentials: mirror, alias: token, until: start.addingTimeInterval(130), now: start)

    let spec = PublicationSpec(
      id: .random(), message: Message(text: "hi", type: "name"), strategy: .default)
    let later = start.addingTimeInterval(2)
    guard
      case .forward(let device2, let credentials, let report, let newAlias, _) = mirrors.observe(
        observation(phone, token: token, at: later, sightings: [heard], publish: [spec]),
        now: later)
    else { Issue.record("a second report was not forwarded"); return }
    #expect(device2 == phone && credentials == mirror && newAlias == nil)
    #expect(report.publish == [spec] && report.sightings.map(\.token) == [heard])

    // The server rotated the device's token: the new one becomes an alias too.
    let rotated = Token.random()
    guard
      case .forward(_, _, _, let alias3, _) = mirrors.observe(
        observation(phone, token: rotated, at: later), now: later)
    else { Issue.record("a third report was not forwarded"); return }
    #expect(alias3 == rotated)
    #expect(mirrors.aliasOwners[token] == phone && mirrors.aliasOwners[rotated] == phone)
  }

  /// A server device hearing another server device: the server's engine resolves it, so the
  /// sighting is not passed to the peers (both engines would deliver the message).
  @Test func sightingsOfTheServersOwnTokensStayWithTheServer() throws {
    var mirrors = PeerBridgeMirrors(idleLimit: .seconds(600))
    let phoneToken = Token.random()
    let otherToken = Token.random()
    let peerToken = Token.random()
    for (device, token) in [(phone, phoneToken), (other, otherToken)] {
      _ = mirrors.observe(observation(device, token: token, at: start), now: start)
      mirrors.created(
        device, credentials: DeviceCredentials(id: .random(), secret: "s"), alias: token,
        until: start.addingTimeInterval(130), now: start)
    }
    guard
      case .forward(_, _, let report, _, _) = mirrors.observe(
        observation(phone, token: phoneToken, at: start, sightings: [otherToken, peerToken]),
        now: start)
    else { Issue.record("not forwarded"); return }
    #expect(report.sightings.map(\.token) == [peerToken])
  }

  /// Any holder of the client key can report sightings: a mirror passes on a bounded number
  /// of distinct tokens (each a who-has on the LAN), and keeps passing those it passed.
  @Test func aMirrorPassesOnABoundedNumberOfTokens() throws {
    var mirrors = PeerBridgeMirrors(idleLimit: .seconds(600))
    let token = Token.random()
    let flood = (0..<(PeerBridgeMirrors.tokensPerMirror + 10)).map { _ in Token.random() }
    guard
      case .create(_, _, _, let first, _) = mirrors.observe(
        observation(phone, token: token, at: start, sightings: flood), now: start)
    else { Issue.record("no mirror"); return }
    #expect(first.count == PeerBridgeMirrors.tokensPerMirror)
    #expect(mirrors.refusedSightings == 10)
    mirrors.created(
      phone, credentials: mirror, alias: token, until: start.addingTimeInterval(130),
      sightings: first, now: start)
    let fresh = Token.random()
    guard
      case .forward(_, _, let report, _, _) = mirrors.observe(
        observation(phone, token: token, at: start, sightings: [flood[0], fresh]), now: start)
    else { Issue.record("not forwarded"); return }
    #expect(report.sightings.map(\.token) == [flood[0]])
    // Once the tokens are forgotten (no sighting for the memory's length), new ones pass.
    let later = start.addingTimeInterval(PeerBridgeMirrors.tokenMemory + 1)
    _ = mirrors.tick(now: later)
    guard
      case .forward(_, _, let again, _, _) = mirrors.observe(
        observation(phone, token: token, at: later, sightings: [fresh]), now: later)
    else { Issue.record("not forwarded"); return }
    #expect(again.sightings.map(\.token) == [fresh])
  }

  /// The storage's copy a mirror was made from may already hold a report still queued: its
  /// handles are not passed on again (the peer engine would refuse the whole report).
  @Test func handlesTheMirrorHoldsAreNotPassedOnAgain() throws {
    var mirrors = PeerBridgeMirrors(idleLimit: .seconds(600))
    let token = Token.random()
    let held = PublicationSpec(
      id: .random(), message: Message(text: "held", type: "name"), strategy: .default)
    let fresh = PublicationSpec(
      id: .random(), message: Message(text: "new", type: "name"), strategy: .default)
    _ = mirrors.observe(observation(phone, token: token, at: start), now: start)
    mirrors.created(
      phone, credentials: mirror, alias: token, until: start.addingTimeInterval(130),
      publications: [held.id], now: start)
    guard
      case .forward(_, _, let report, _, _) = mirrors.observe(
        observation(phone, token: token, at: start, publish: [held, fresh]), now: start)
    else { Issue.record("not forwarded"); return }
    #expect(report.publish == [fresh])
  }

  /// A failed rebuild leaves no mirror behind to forward to: the next report makes one.
  @Test func aRebuildTakesTheOldMirrorAwayAtOnce() throws {
    var mirrors = PeerBridgeMirrors(idleLimit: .seconds(600))
    let token = Token.random()
    withMirror(&mirrors, token: token)
    mirrors.markStale(phone)
    _ = mirrors.observe(observation(phone, token: token, at: start), now: start)
    #expect(mirrors.mirrors[phone] == nil && mirrors.aliasOwners[token] == nil)
    guard
      case .create(_, _, _, _, let replacing) = mirrors.observe(
        observation(phone, token: token, at: start), now: start)
    else { Issue.record("no new mirror after a failed rebuild"); return }
    #expect(replacing == nil)
  }

  @Test func idleMirrorsAndSpentAliasesGo() throws {
    var mirrors = PeerBridgeMirrors(idleLimit: .seconds(600))
    let token = Token.random()
    withMirror(&mirrors, token: token)
    let rotated = Token.random()
    let later = start.addingTimeInterval(120)
    _ = mirrors.observe(observation(phone, token: rotated, at: later), now: later)

    let (idle, expired) = mirrors.tick(now: start.addingTimeInterval(131))
    #expect(idle.isEmpty && expired == [token])
    #expect(mirrors.aliasOwners[token] == nil && mirrors.aliasOwners[rotated] == phone)

    let (idle2, _) = mirrors.tick(now: later.addingTimeInterval(600))
    #expect(idle2.map(\.credentials) == [mirror])
    #expect(mirrors.mirrors.isEmpty && mirrors.aliasOwners.isEmpty)
  }

  /// A device whose report the bridge could not queue has its mirror made again from the
  /// storage, the old one replaced; an unregistered device's mirror goes.
  @Test func aStaleMirrorIsRebuiltAndAForgottenOneRemoved() throws {
    var mirrors = PeerBridgeMirrors(idleLimit: .seconds(600))
    let token = Token.random()
    withMirror(&mirrors, token: token)
    mirrors.markStale(phone)
    guard
      case .create(_, _, _, _, let replacing) = mirrors.observe(
        observation(phone, token: token, at: start), now: start)
    else { Issue.record("a stale mirror was not rebuilt"); return }
    #expect(replacing?.credentials == mirror)
    let fresh = DeviceCredentials(id: .random(), secret: "t")
    mirrors.created(
      phone, credentials: fresh, alias: token, until: start.addingTimeInterval(130), now: start)
    #expect(mirrors.forget(phone)?.credentials == fresh)
    #expect(mirrors.mirrors.isEmpty && mirrors.aliasOwners.isEmpty)
    #expect(mirrors.forget(phone) == nil)
  }
}
