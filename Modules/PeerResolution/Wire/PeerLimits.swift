/// Hard limits of the peer exchange. A datagram past any of them is dropped and counted.
public enum PeerLimits {
  /// The largest datagram sent or accepted: the largest UDP payload over IPv4 (a transport
  /// with a smaller limit lowers it).
  public static let maximumDatagramSize = 65_507
  /// The most publications one query or answer carries.
  public static let maximumPublications = 64
  /// The most subscriptions one query carries.
  public static let maximumSubscriptions = 64
  /// The most datagrams one message is split into when it does not fit one (a message of
  /// the full 100 KiB over the LAN takes two).
  public static let maximumFragments = 8
  /// The most split messages being put back together at once; a new one past it replaces
  /// the oldest.
  public static let maximumReassemblies = 8
  /// How long the fragments of a message wait for the next: 30 s after the last one arrived
  /// (a message of the full 100 KiB takes 5–7 s over GATT in the VM, many times that on a
  /// loaded machine; the count bounds above, not time, bound the memory held).
  public static let reassemblyTimeout: Double = 30
  /// How far a datagram's send time may be from the receiver's clock: 30 s.
  public static let clockWindowMilliseconds: UInt64 = 30_000
}
