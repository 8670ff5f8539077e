import Foundation
import Tokens

/// What a beacon subscription asks for: which beacons and which of their attachments.
struct BeaconInterest: Sendable, Hashable {
  /// Attachments of this namespace only (the project's own, or another project's public
  /// one); `""`: every namespace of the project (never another project's).
  var namespace: String
  /// Attachments of this type only; `nil`: every type.
  var type: String?
  /// Whether iBeacons count.
  var includeIBeacons: Bool
  /// Beacons matching one of these only; empty: every beacon.
  var filters: [BeaconFilter]

  /// Whether a beacon advertising `id` is one this subscription hears.
  func accepts(_ id: BeaconID) -> Bool {
    if case .iBeacon = id, !includeIBeacons { return false }
    return filters.isEmpty || filters.contains { $0.matches(id) }
  }

  /// Whether this subscription wants the attachment.
  func wants(_ attachment: BeaconAttachment) -> Bool {
    (namespace.isEmpty ? !attachment.isShared : attachment.namespace == namespace)
      && (type == nil || attachment.type == type)
  }
}

/// Follows the beacons a manager hears and turns them into subscription events: found once
/// per (subscription, beacon, attachment) until lost, lost when the beacon has been silent for
/// ``Settings/lostAfter`` (or the attachment is gone from the resolver's answer), and distance
/// and signal changes in between.
///
/// A value owned by ``BeaconTracking``; every call gets the time from its caller, so that
/// tests can replay a timeline.
///
/// **Signal.** Each observed id's RSSI goes through an `RSSISmoother` (windowed median,
/// ``Settings/smoothingWindow``); the distance comes from the smoothed power, its spread and
/// the frame's declared power through ``Settings/model`` (`PathLossModel`). A beacon
/// that rotates its id (Eddystone-EID) keeps its attachments found, and its smoothing window,
/// across rotations: once resolved, found state and signal are keyed by the registered
/// beacon name.
struct BeaconTracker {
  struct Settings: Sendable {
    var lostAfter: Duration
    var smoothingWindow: Duration
    var model: PathLossModel
  }

  /// One event for one subscription.
  struct Event: Sendable, Hashable {
    var subscription: SubscriptionID
    var event: SubscriptionEvent
  }

  private struct Signal {
    var smoother: RSSISmoother<NearbyClock.Instant>
    var reference: ReferencePower?
    var lastHeard: NearbyClock.Instant
  }

  private struct Heard {
    var lastHeard: NearbyClock.Instant
    var latestID: BeaconID
  }

  private struct AttachmentKey: Hashable {
    var beaconName: String
    var attachmentName: String
  }

  private struct Found {
    var message: Message
    var distance: DistanceEstimate?
    var signal: BeaconSignal?
  }

  /// A distance change is reported when it is at least this (metres) and at least
  /// ``relativeDistanceStep`` of the last distance reported.
  static let distanceStep = 0.5
  static let relativeDistanceStep = 0.1
  /// A smoothed RSSI change smaller than this (dB) is not reported.
  static let signalStep = 2.0

  let settings: Settings
  private var signals: [BeaconID: Signal] = [:]
  private var beacons: [String: Heard] = [:]
  /// The registered name of each id resolved (so that a sighting keeps its beacon present
  /// even while the resolver's answer is being refreshed).
  private var names: [BeaconID: String] = [:]
  /// The signal of each registered beacon, over all the ids it advertised: an Eddystone-EID
  /// keeps its smoothing window across a rotation.
  private var beaconSignals: [String: Signal] = [:]
  private var found: [SubscriptionID: [AttachmentKey: Found]] = [:]

  init(settings: Settings) { self.settings = settings }

  /// How many attachments are found, over every subscription (for tests and logs).
  var foundCount: Int { found.values.reduce(0) { $0 + $1.count } }

  /// Notes a beacon frame's signal, heard at `time`; returns the id it advertises (`nil` for
  /// telemetry and URL frames, which identify nothing).
  mutating func record(_ sighting: BeaconSighting, at time: NearbyClock.Instant) -> BeaconID? {
    guard let id = BeaconID(frame: sighting.frame) else { return nil }
    var signal =
      signals[id]
      ?? Signal(
        smoother: RSSISmoother(window: settings.smoothingWindow), reference: nil,
        lastHeard: time)
    if let rssi = sighting.rssi { signal.smoother.add(rssi: rssi, at: time) }
    signal.reference = sighting.frame.referencePower ?? signal.reference
    signal.lastHeard = max(signal.lastHeard, time)
    signals[id] = signal
    if let name = names[id] {
      if let heard = beacons[name], heard.lastHeard < signal.lastHeard {
        beacons[name] = Heard(lastHeard: signal.lastHeard, latestID: id)
      }
      if var named = beaconSignals[name] {
        if let rssi = sighting.rssi { named.smoother.add(rssi: rssi, at: time) }
        named.reference = signal.reference
        named.lastHeard = max(named.lastHeard, time)
        beaconSignals[name] = named
      }
    }
    return id
  }

  /// Applies what the resolver knows of `id` (heard recently, see ``record(_:)``) to every
  /// subscription: new attachments are found, gone ones lost, and found ones get distance and
  /// signal changes. `info == nil` (a beacon the resolver does not know) changes nothing.
  mutating func apply(
    _ info: BeaconInfo?, for id: BeaconID, interests: [SubscriptionID: BeaconInterest],
    now: NearbyClock.Instant
  ) -> [Event] {
    guard let info, let heard = signals[id]?.lastHeard else { return [] }
    let name = info.beaconName
    if names[id] == nil, beaconSignals[name] == nil, let signal = signals[id] {
      // The beacon's first id: its window so far becomes the beacon's.
      beaconSignals[name] = signal
    }
    names[id] = name
    if beacons[name].map({ $0.lastHeard <= heard }) ?? true {
      beacons[name] = Heard(lastHeard: heard, latestID: id)
    }
    let (distance, signal) = estimate(name, now: now)
    var events: [Event] = []
    for (subscription, interest) in interests {
      guard interest.accepts(id) else { continue }
      var current = found[subscription] ?? [:]
      var wanted: Set<AttachmentKey> = []
      for attachment in info.attachments where interest.wants(attachment) {
        let key = AttachmentKey(beaconName: name, attachmentName: attachment.name)
        if let limit = current[key] == nil ? attachment.maxDistance : attachment.leaveDistance {
          // In range: found only with a distance within the limit; once found, kept until the
          // distance is past the leave distance (an unknown distance keeps it as it is).
          let within = distance.map { $0.metres <= limit } ?? (current[key] != nil)
          guard within else { continue }
        }
        wanted.insert(key)
        var entry = current[key] ?? Found(message: attachment.message)
        if current[key] == nil {
          events.append(Event(subscription: subscription, event: .found(entry.message)))
        }
        if let distance, Self.moved(from: entry.distance, to: distance) {
          entry.distance = distance
          events.append(
            Event(subscription: subscription, event: .distanceChanged(entry.message, distance)))
        }
        if let signal, Self.changed(from: entry.signal, to: signal) {
          entry.signal = signal
          events.append(
            Event(subscription: subscription, event: .signalChanged(entry.message, signal)))
        }
        current[key] = entry
      }
      for (key, entry) in current where key.beaconName == name && !wanted.contains(key) {
        current[key] = nil
        events.append(Event(subscription: subscription, event: .lost(entry.message)))
      }
      found[subscription] = current.isEmpty ? nil : current
    }
    return events
  }

  /// Loses every attachment of the beacons not heard for ``Settings/lostAfter`` before `now`
  /// and forgets their signals.
  mutating func sweep(now: NearbyClock.Instant) -> [Event] {
    let oldest = now.advanced(by: .zero - settings.lostAfter)
    let silent = Set(beacons.filter { $0.value.lastHeard < oldest }.keys)
    signals = signals.filter { $0.value.lastHeard >= oldest }
    names = names.filter { signals[$0.key] != nil }
    guard !silent.isEmpty else { return [] }
    for name in silent {
      beacons[name] = nil
      beaconSignals[name] = nil
    }
    var events: [Event] = []
    for (subscription, entries) in found {
      let gone = entries.filter { silent.contains($0.key.beaconName) }
      guard !gone.isEmpty else { continue }
      for (_, entry) in gone.sorted(by: { $0.key.attachmentName < $1.key.attachmentName }) {
        events.append(Event(subscription: subscription, event: .lost(entry.message)))
      }
      let kept = entries.filter { !silent.contains($0.key.beaconName) }
      found[subscription] = kept.isEmpty ? nil : kept
    }
    return events
  }

  /// Forgets a subscription's found attachments (it stopped or paused; no events).
  mutating func remove(_ subscription: SubscriptionID) { found[subscription] = nil }

  /// Whether anything is being followed (the sweep can stop when not).
  var isIdle: Bool {
    signals.isEmpty && beacons.isEmpty && names.isEmpty && beaconSignals.isEmpty
  }

  private func estimate(_ name: String, now: NearbyClock.Instant) -> (
    DistanceEstimate?, BeaconSignal?
  ) {
    guard let id = beacons[name]?.latestID, var signal = beaconSignals[name] ?? signals[id],
      let smoothed = signal.smoother.value(at: now)
    else { return (nil, nil) }
    let power = signal.reference.map { settings.model.powerAtOneMetre($0) }
    let beaconSignal = BeaconSignal(rssi: smoothed.rssi, spread: smoothed.spread, txPower: power)
    let distance = signal.reference.map { settings.model.distance(smoothed, reference: $0) }
    return (distance, beaconSignal)
  }

  static func moved(from old: DistanceEstimate?, to new: DistanceEstimate) -> Bool {
    guard let old else { return true }
    let change = abs(new.metres - old.metres)
    return change >= distanceStep && change >= relativeDistanceStep * old.metres
  }

  static func changed(from old: BeaconSignal?, to new: BeaconSignal) -> Bool {
    guard let old else { return true }
    return abs(new.rssi - old.rssi) >= signalStep
  }
}
