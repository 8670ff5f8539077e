public import Core

/// How far each peer's clock is from ours, learnt from the `iHave`s that matched our
/// questions (fresh by construction: they carry a random id we just drew), so that what we
/// send a peer is stamped in its clock and passes its clock window even when one of the two
/// clocks is off (a device with no real-time clock and no network time). Only a stamp made in
/// the sender's own clock teaches its offset: the rest a peer sends is stamped in ours as far
/// as it knows it, and learning from that would add the transit time at each turn, both ways.
///
/// An offset learnt this way also holds the transit time of the datagram it was learnt from,
/// so it moves a little with every `iHave`. A hearer orders what one owner tells it by these
/// stamps (an unasked update older than the last answer is ignored), so ``stamp(for:now:)``
/// never goes back for one address by such a move: it gives the later of the clock and the
/// last stamp. It does go back when the offset moves by more than ``orderingAllowance`` (a
/// clock minutes off, learnt after a first answer stamped in ours): a stamp that far ahead
/// would fail the peer's clock window. That hearer then ignores updates until the next
/// refresh brings the current publications (an answer to its question, taken whatever its
/// stamp).
///
/// At most ``capacity`` peers are remembered; the one added longest ago is forgotten to make
/// room (it is stamped in our clock again until it sends an `iHave`).
public struct PeerClockOffsets: Sendable {
  private struct Peer: Sendable {
    var offset: Int64 = 0
    var lastStamp: UInt64 = 0
  }

  /// How far past our estimate of a peer's clock a stamp may be kept to keep stamps in order:
  /// half the clock window.
  public static let orderingAllowance = PeerLimits.clockWindowMilliseconds / 2

  public let capacity: Int
  private var peers: [PeerAddress: Peer] = [:]
  private var order: [PeerAddress] = []
  private var next = 0

  /// - Parameter capacity: the most peers remembered.
  public init(capacity: Int = 1024) {
    precondition(capacity > 0, "room for one peer at least")
    self.capacity = capacity
  }

  /// How many peers are remembered.
  public var count: Int { peers.count }

  /// The peer at `address`'s clock minus ours, in milliseconds (0 when not learnt).
  public func offset(of address: PeerAddress) -> Int64 { peers[address]?.offset ?? 0 }

  /// Learns from a datagram of `address` sent at `sentAt` (its clock) and received at `now`
  /// (ours), both in milliseconds since 1970, that matched one of our questions.
  public mutating func learn(_ address: PeerAddress, sentAt: UInt64, now: UInt64) {
    let offset = Int64(clamping: sentAt) &- Int64(clamping: now)
    update(address) { $0.offset = offset }
  }

  /// The send time to stamp on a datagram for `address` sent at `now` (ours, ms since 1970):
  /// `now` in the peer's clock as far as we know it, or the last stamp given for that address
  /// when that is later by at most ``orderingAllowance``.
  public mutating func stamp(for address: PeerAddress, now: UInt64) -> UInt64 {
    let shifted = UInt64(clamping: Int64(clamping: now) &+ offset(of: address))
    var stamp = shifted
    update(address) { peer in
      if peer.lastStamp > shifted, peer.lastStamp - shifted <= Self.orderingAllowance {
        stamp = peer.lastStamp
      }
      peer.lastStamp = stamp
    }
    return stamp
  }

  private mutating func update(_ address: PeerAddress, _ change: (inout Peer) -> Void) {
    if var peer = peers[address] {
      change(&peer)
      peers[address] = peer
      return
    }
    var peer = Peer()
    change(&peer)
    if order.count < capacity {
      order.append(address)
    } else {
      peers[order[next]] = nil
      order[next] = address
      next = (next + 1) % capacity
    }
    peers[address] = peer
  }
}
