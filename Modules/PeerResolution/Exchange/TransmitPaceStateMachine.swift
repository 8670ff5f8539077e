@_spi(Resolver) public import Core
public import Foundation
public import Strategy
public import Tokens

/// Decides how often each local device's mediums repeat its token, from who asked about it:
/// the owner's side of "transmit less often once the token has been answered".
///
/// A hearer that heard a token asks its owner, naming the mediums it heard it on, and asks
/// again while it still hears it (unless the owner hears it too and nothing changed: then it
/// refreshes on its own and the owner hears nothing). So an owner that was asked about its
/// token on a medium within ``Configuration/quietAfter`` knows hearers hold it there: the
/// medium may slow down (``TransmitPace/answered(refreshWithin:)``). When no hearer has asked
/// for ``Configuration/quietAfter``, or the token changed, the pace is
/// ``TransmitPace/seeking`` again: there may be no one left, and a newcomer should find the
/// device at the medium's own rate. A hearer that stopped asking because it needs nothing
/// more thus brings the pace back to seeking, the safe side.
///
/// `refreshWithin` is this device's `lostAfter`: peer resolution takes it to be the same
/// across a project (its refresh and question timing already do).
/// A device of the project can keep another answered by asking: that slows the other's
/// audio at most to what its hearers' `lostAfter` allows, at one state update per question
/// (already rate-limited).
///
/// Only questions the resolver accepted count (sealed, fresh, from an address that proved it
/// receives, about the owner's token): a device outside the project cannot slow anyone.
/// A value the ``PeerResolver`` actor owns; it reads no clock.
@_spi(Resolver) public struct TransmitPaceStateMachine: Sendable {
  public struct Configuration: Sendable, Hashable {
    /// The `lostAfter` of the project (this device's): what an answered pace must repeat the
    /// token within.
    public var refreshWithin: Duration
    /// How long after the last question on a medium its pace stays answered: twice
    /// `lostAfter`, so that one hearer's late refresh does not bring the device back to
    /// seeking.
    public var quietAfter: Duration

    public init(refreshWithin: Duration, quietAfter: Duration) {
      self.refreshWithin = refreshWithin
      self.quietAfter = quietAfter
    }

    /// For an engine that loses a device after `lostAfter` of silence.
    public init(lostAfter: Duration) {
      self.init(refreshWithin: lostAfter, quietAfter: lostAfter * 2)
    }
  }

  /// A change to hand to a local device's mediums.
  public struct Change: Sendable, Hashable {
    public var device: DeviceID
    public var change: TransmitPaceChange
  }

  /// One local device: the token asked about, and when each medium was last named.
  private struct Paced: Sendable {
    var token: Token
    /// By a medium's raw value: the last question that named it.
    var lastAsked: [DiscoveryMediums.RawValue: Date] = [:]
  }

  public let configuration: Configuration
  private var devices: [DeviceID: Paced] = [:]

  public init(configuration: Configuration) {
    self.configuration = configuration
  }

  /// A hearer asked `device` about `token`, its current token, having heard it on
  /// `mediums`, at `now`: the mediums that were seeking become answered. (A question about
  /// a token before it would replace the current one's record, which would then never be
  /// told to seek: the caller passes only the current token.)
  public mutating func asked(
    device: DeviceID, token: Token, mediums: DiscoveryMediums, now: Date
  ) -> [Change] {
    guard !mediums.isEmpty else { return [] }
    var paced = devices[device].flatMap { $0.token == token ? $0 : nil } ?? Paced(token: token)
    var slowed = DiscoveryMediums()
    for medium in mediums.elements {
      if paced.lastAsked.updateValue(now, forKey: medium.rawValue) == nil {
        slowed.insert(medium)
      }
    }
    devices[device] = paced
    guard !slowed.isEmpty else { return [] }
    return [
      Change(
        device: device,
        change: TransmitPaceChange(
          token: token, mediums: slowed,
          pace: .answered(refreshWithin: configuration.refreshWithin)))
    ]
  }

  /// What is due at `now`: mediums nobody named for ``Configuration/quietAfter`` go back to
  /// seeking.
  public mutating func tick(now: Date) -> [Change] {
    let quiet = configuration.quietAfter.seconds
    var changes: [Change] = []
    for (device, var paced) in devices {
      var seeking = DiscoveryMediums()
      for (raw, asked) in paced.lastAsked where now.timeIntervalSince(asked) >= quiet {
        seeking.insert(DiscoveryMediums(rawValue: raw))
        paced.lastAsked[raw] = nil
      }
      guard !seeking.isEmpty else { continue }
      devices[device] = paced.lastAsked.isEmpty ? nil : paced
      changes.append(
        Change(
          device: device,
          change: TransmitPaceChange(token: paced.token, mediums: seeking, pace: .seeking)))
    }
    return changes
  }

  /// The device is gone: nothing more to say about it.
  public mutating func remove(_ device: DeviceID) {
    devices[device] = nil
  }
}
