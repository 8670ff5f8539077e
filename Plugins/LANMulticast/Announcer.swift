import Tokens

/// Fills in the sender id and counter of the datagrams the medium sends. Used by the I/O
/// thread only.
///
/// The sender id and counter exist to drop repeated datagrams and to recognise our own; they
/// must not outlive the token they travel with, or a listener could link a device's old token
/// to its new one (the same sender id, a counter carrying on) and follow it across rotations.
/// So when the announced token changes, a new sender id is drawn from the system's CSPRNG
/// and the counter starts again at 1: the first datagram of a new token shares nothing with
/// the last of the old one but the format. (The IP and Ethernet source addresses still do:
/// see docs/design.md, "LAN multicast medium".)
struct Announcer {
  /// How many of our latest sender ids are recognised as ours (a datagram of the previous
  /// token may still be in flight when the token changes).
  static let rememberedSenders = 4

  /// The sender id of the current token's datagrams (0 before the first).
  private(set) var sender: UInt32 = 0
  /// The counter of the latest datagram.
  private(set) var counter: UInt32 = 0
  private var token: Token?
  /// Our latest sender ids, newest last.
  private var senders: [UInt32] = []

  /// The next datagram announcing `token`, sent at `sentAt` (milliseconds since the epoch).
  mutating func datagram(announcing token: Token, sentAt: UInt64) -> Datagram {
    if token != self.token || counter == .max {
      self.token = token
      renewSender()
    }
    counter += 1
    return Datagram(token: token, sentAt: sentAt, sender: sender, counter: counter)
  }

  /// Whether `sender` is one of our latest sender ids.
  func isOwn(_ sender: UInt32) -> Bool { senders.contains(sender) }

  private mutating func renewSender() {
    var fresh: UInt32
    repeat { fresh = UInt32.random(in: 1...UInt32.max) } while senders.contains(fresh)
    sender = fresh
    counter = 0
    senders.append(fresh)
    if senders.count > Self.rememberedSenders { senders.removeFirst() }
  }
}
