public import Strategy
public import Tokens

/// How often a medium that shares one air among every transmitter (audio: one frame at a
/// time can be heard) repeats the token it transmits.
///
/// Peer resolution knows what the medium cannot: whether anyone heard the token. A hearer
/// that heard it asks its owner; once hearers asked, each holds the token, and a frame per
/// `refreshWithin` is all that keeps the nearness, so the air is left to devices still to be
/// found. See ``Medium/setPace(_:for:)``.
public enum TransmitPace: Sendable, Hashable {
  /// Nobody is known to hold the token: the medium's own rate, so that a newcomer finds it
  /// soon.
  case seeking
  /// Hearers asked about the token on this medium lately: one frame at least every
  /// `refreshWithin` (the project's `lostAfter`) keeps it near to them.
  case answered(refreshWithin: Duration)
}

/// A resolver's word on how often the token of a device should be repeated on some mediums
/// (``TransmitPaceSource``).
@_spi(Resolver) public struct TransmitPaceChange: Sendable, Hashable {
  /// The token the pace is for: a medium transmitting another one ignores it.
  public var token: Token
  /// The kinds of medium the pace is for (those the token was heard on).
  public var mediums: DiscoveryMediums
  public var pace: TransmitPace

  public init(token: Token, mediums: DiscoveryMediums, pace: TransmitPace) {
    self.token = token
    self.mediums = mediums
    self.pace = pace
  }
}

/// A resolver that learns when a device's token was heard (peer resolution: the hearer asks
/// the owner) and says how often the device's mediums should repeat it. A ``MessageManager``
/// whose resolver is one reads ``transmitPaces(for:)`` and hands each change to its mediums of
/// the kinds named (``Medium/setPace(_:for:)``).
@_spi(Resolver) public protocol TransmitPaceSource: Resolver {
  /// The pace changes for `device`, from now on: one consumer per device; a second call
  /// finishes the first stream.
  /// - Throws: ``ResolverError`` for unknown devices or a wrong secret.
  func transmitPaces(for device: DeviceCredentials) async throws -> AsyncStream<TransmitPaceChange>
}
