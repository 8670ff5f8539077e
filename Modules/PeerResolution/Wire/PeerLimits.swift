/// Hard limits of the peer exchange. A datagram past any of them is dropped and counted.
public enum PeerLimits {
  /// The largest datagram sent or accepted: the largest UDP payload over IPv4 (a transport
  /// with a smaller limit lowers it).
  public static let maximumDatagramSize = 65_507
  /// The most publications one query or answer carries.
  public static let maximumPublications = 64
  /// The most subscriptions one query carries.
  public static let maximumSubscriptions = 64
  /// How far a datagram's send time may be from the receiver's clock: 30 s.
  public static let clockWindowMilliseconds: UInt64 = 30_000
}
