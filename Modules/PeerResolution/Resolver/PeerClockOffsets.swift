public import Core

/// How far each peer's clock is from ours, learnt from the answers and `iHave`s that matched
/// our questions (fresh by construction: they carry a random id we just drew), so that what
/// we send a peer is stamped in its clock and passes its clock window even when one of the
/// two clocks is off (a device with no real-time clock and no network time).
///
/// At most ``capacity`` peers are remembered; the one learnt longest ago is forgotten to make
/// room (it is stamped in our clock again until it answers).
public struct PeerClockOffsets: Sendable {
  public let capacity: Int
  private var offsets: [PeerAddress: Int64] = [:]
  private var order: [PeerAddress] = []
  private var next = 0

  /// - Parameter capacity: the most peers remembered.
  public init(capacity: Int = 1024) {
    precondition(capacity > 0, "room for one peer at least")
    self.capacity = capacity
  }

  /// How many peers are remembered.
  public var count: Int { offsets.count }

  /// The peer at `address`'s clock minus ours, in milliseconds (0 when not learnt).
  public func offset(of address: PeerAddress) -> Int64 { offsets[address] ?? 0 }

  /// Learns from a datagram of `address` sent at `sentAt` (its clock) and received at `now`
  /// (ours), both in milliseconds since 1970, that matched one of our questions.
  public mutating func learn(_ address: PeerAddress, sentAt: UInt64, now: UInt64) {
    let offset = Int64(clamping: sentAt) &- Int64(clamping: now)
    if offsets.updateValue(offset, forKey: address) != nil { return }
    if order.count < capacity {
      order.append(address)
    } else {
      offsets[order[next]] = nil
      order[next] = address
      next = (next + 1) % capacity
    }
  }
}
