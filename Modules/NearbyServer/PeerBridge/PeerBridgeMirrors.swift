@_spi(Resolver) import Core
import Foundation
import Tokens

/// What the peer bridge decides, apart from what it does (``PeerBridge`` performs the steps):
/// which of the server's devices have a *mirror* among the peers, which tokens are the
/// server's own, and what each report of a device means for its mirror.
///
/// A mirror is a local device of the bridge's peer resolver that stands for one server device:
/// it holds the device's publications and subscriptions, its tokens resolve to it (aliases,
/// each until the server's binding would run out), and the sightings the device reports of
/// tokens the server does not assign are reported by it, so the peer resolver asks their
/// owners on the LAN. A sighting of a server token is never passed on: the server's own engine
/// resolves it, and passing it on would have the two engines deliver the same message twice.
///
/// A device's sightings are the LAN's work (a who-has each for a token never heard), and any
/// holder of the project's client key can report them: a mirror passes on at most
/// ``tokensPerMirror`` distinct tokens within ``tokenMemory``; sightings of further tokens are
/// refused (counted), those of tokens it passed keep passing.
struct PeerBridgeMirrors {
  /// The most distinct tokens one mirror passes on within ``tokenMemory``: a phone hears a
  /// few devices, not dozens.
  static let tokensPerMirror = 32
  /// How long a token a mirror passed on counts against ``tokensPerMirror`` after its last
  /// sighting, in seconds.
  static let tokenMemory: TimeInterval = 30
  /// The most mirrors at once: a report of a device past it is not passed on (counted).
  static let maximumMirrors = 10_000

  /// What the bridge learned from one report of a server device.
  struct Observation: Sendable, Hashable {
    var device: DeviceID
    /// The report as the device sent it (its own handle ids).
    var report: Report
    /// The token the server gave the device, and until when a sighting of it resolves.
    var token: Token
    var tokenResolvesUntil: Date
  }

  /// A server device's stand-in among the peers.
  struct Mirror: Sendable, Hashable {
    var credentials: DeviceCredentials
    var lastSeen: Date
    /// The device's server tokens, each until its alias runs out.
    var aliases: [Token: Date]
    /// The tokens passed on lately, with their last sighting.
    var heard: [Token: Date] = [:]
    /// The handles the mirror holds (as the device names them): a publish or subscribe of one
    /// of them is not passed on again (the storage's copy, read when the mirror was made, may
    /// already hold a report still queued, with its TTL counted down: the peer engine would
    /// refuse the whole report for the different strategy).
    var publications: Set<PublicationID> = []
    var subscriptions: Set<SubscriptionID> = []
  }

  /// What to do about one observation.
  enum Step: Sendable, Hashable {
    /// Register a mirror, give it the device's handles as the storage holds them now (this
    /// report's changes included), bind the alias, then report `sightings` from it. `replacing`:
    /// a mirror to unregister first (one that may have missed changes).
    case create(
      DeviceID, alias: Token, until: Date, sightings: [Sighting], replacing: Mirror?)
    /// Report `report` (the handle changes and the sightings to pass on) from the mirror, after
    /// binding `alias` when the server gave the device a new token.
    case forward(DeviceID, DeviceCredentials, Report, alias: Token?, until: Date)
    /// Nothing: ``maximumMirrors`` are made already.
    case refused
  }

  private(set) var mirrors: [DeviceID: Mirror] = [:]
  /// Which device each server token belongs to, for as long as its alias lasts.
  private(set) var aliasOwners: [Token: DeviceID] = [:]
  /// Devices whose mirror may have missed a report (the bridge's queue was full): rebuilt
  /// from the storage at their next observation.
  private var stale: Set<DeviceID> = []
  /// A mirror whose device reported nothing for this long is removed (rebuilt when it
  /// reports again).
  let idleLimit: Duration

  init(idleLimit: Duration) {
    self.idleLimit = idleLimit
  }

  /// Sightings refused because their mirror had passed on ``tokensPerMirror`` others.
  private(set) var refusedSightings = 0
  /// Reports not passed on because ``maximumMirrors`` were made.
  private(set) var refusedReports = 0

  /// What an observation of a device asks for.
  mutating func observe(_ observation: Observation, now: Date) -> Step {
    let foreign = observation.report.sightings.filter { aliasOwners[$0.token] == nil }
    guard var mirror = mirrors[observation.device], !stale.contains(observation.device) else {
      stale.remove(observation.device)
      // The old mirror is gone from here at once: if making the new one fails, the next
      // report tries again rather than forwarding to a mirror unregistered.
      let replacing = forget(observation.device)
      guard replacing != nil || mirrors.count < Self.maximumMirrors else {
        refusedReports += 1
        return .refused
      }
      var heard: [Token: Date] = [:]
      return .create(
        observation.device, alias: observation.token, until: observation.tokenResolvesUntil,
        sightings: admit(foreign, into: &heard, now: now), replacing: replacing)
    }
    let passed = admit(foreign, into: &mirror.heard, now: now)
    var report = observation.report
    report.sightings = passed
    report.publish.removeAll { mirror.publications.contains($0.id) }
    report.subscribe.removeAll { mirror.subscriptions.contains($0.id) }
    mirror.publications.formUnion(report.publish.map(\.id))
    mirror.publications.subtract(report.unpublish)
    mirror.subscriptions.formUnion(report.subscribe.map(\.id))
    mirror.subscriptions.subtract(report.unsubscribe)
    mirror.lastSeen = now
    let isNew = mirror.aliases[observation.token] == nil
    mirror.aliases[observation.token] = observation.tokenResolvesUntil
    mirrors[observation.device] = mirror
    aliasOwners[observation.token] = observation.device
    return .forward(
      observation.device, mirror.credentials, report, alias: isNew ? observation.token : nil,
      until: observation.tokenResolvesUntil)
  }

  /// Records the mirror made for a ``Step/create(_:alias:until:sightings:replacing:)``, which
  /// passed on `sightings` and the handles `publications` and `subscriptions`.
  mutating func created(
    _ device: DeviceID, credentials: DeviceCredentials, alias: Token, until: Date,
    sightings: [Sighting] = [], publications: [PublicationID] = [],
    subscriptions: [SubscriptionID] = [], now: Date
  ) {
    if let old = mirrors[device] { forgetAliases(of: old, device: device) }
    var mirror = Mirror(credentials: credentials, lastSeen: now, aliases: [alias: until])
    for sighting in sightings { mirror.heard[sighting.token] = now }
    mirror.publications = Set(publications)
    mirror.subscriptions = Set(subscriptions)
    mirrors[device] = mirror
    aliasOwners[alias] = device
  }

  /// The sightings of tokens already in `heard`, and of new ones while `heard` holds fewer
  /// than ``tokensPerMirror``; the others are counted in ``refusedSightings``.
  private mutating func admit(_ sightings: [Sighting], into heard: inout [Token: Date], now: Date)
    -> [Sighting]
  {
    sightings.filter { sighting in
      guard heard[sighting.token] != nil || heard.count < Self.tokensPerMirror else {
        refusedSightings += 1
        return false
      }
      heard[sighting.token] = now
      return true
    }
  }

  /// Marks a device whose report the bridge could not queue or pass on: its mirror is made
  /// again from the storage at its next report.
  mutating func markStale(_ device: DeviceID) {
    if mirrors[device] != nil { stale.insert(device) }
  }

  /// Removes a device's mirror (the device unregistered); returns it, to unregister.
  mutating func forget(_ device: DeviceID) -> Mirror? {
    stale.remove(device)
    guard let mirror = mirrors.removeValue(forKey: device) else { return nil }
    forgetAliases(of: mirror, device: device)
    return mirror
  }

  /// What time removes: mirrors idle past ``idleLimit`` (to unregister) and aliases that ran
  /// out (to unbind).
  mutating func tick(now: Date) -> (idle: [Mirror], expired: [Token]) {
    let idleSince = now.addingTimeInterval(-idleLimit.seconds)
    var idle: [Mirror] = []
    for (device, mirror) in mirrors where mirror.lastSeen <= idleSince {
      idle.append(mirror)
      _ = forget(device)
    }
    var expired: [Token] = []
    let forgetHeard = now.addingTimeInterval(-Self.tokenMemory)
    for (device, mirror) in mirrors {
      var kept = mirror
      kept.heard = mirror.heard.filter { $0.value > forgetHeard }
      let gone = mirror.aliases.filter { $0.value <= now }.keys
      for token in gone {
        kept.aliases[token] = nil
        if aliasOwners[token] == device { aliasOwners[token] = nil }
        expired.append(token)
      }
      mirrors[device] = kept
    }
    return (idle, expired)
  }

  private mutating func forgetAliases(of mirror: Mirror, device: DeviceID) {
    for token in mirror.aliases.keys where aliasOwners[token] == device {
      aliasOwners[token] = nil
    }
  }
}
