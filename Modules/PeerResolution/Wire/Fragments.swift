import Core
import Foundation

/// Splitting a message body that does not fit one datagram, and putting it back together.
///
/// Each fragment is a datagram of its own, sealed and authenticated on its own (its own
/// nonce, the header's fragment flag set, the message's kind), whose opened body starts with
/// a prefix: message id u64 (random per message) ‖ index u8 ‖ count u8, then its share of the
/// message body. A receiver keeps the fragments of at most
/// ``PeerLimits/maximumReassemblies`` messages, each until ``PeerLimits/reassemblyTimeout``
/// passes with no fragment of it,
/// each of at most ``PeerLimits/maximumFragments`` fragments, so what it holds is bounded;
/// only fragments that opened (sent by a holder of the project key) get there.
enum Fragments {
  static let prefixSize = 10

  /// The room for message bytes in one fragment of a datagram of at most `datagramLimit`.
  static func chunkSize(datagramLimit: Int) -> Int {
    datagramLimit - PeerHeader.overhead - prefixSize
  }

  /// The fragment bodies of `body` (prefix included), or nil when it needs more than
  /// ``PeerLimits/maximumFragments``.
  static func split(_ body: [UInt8], datagramLimit: Int, messageID: UInt64) -> [[UInt8]]? {
    let size = chunkSize(datagramLimit: datagramLimit)
    guard size > 0 else { return nil }
    let count = (body.count + size - 1) / size
    guard count >= 1, count <= PeerLimits.maximumFragments else { return nil }
    return (0..<count).map { index in
      var writer = ByteWriter(capacity: prefixSize + size)
      writer.u64(messageID)
      writer.u8(UInt8(index))
      writer.u8(UInt8(count))
      writer.raw(body[(index * size)..<min((index + 1) * size, body.count)])
      return writer.bytes
    }
  }
}

/// Fragments waiting for the rest of their message (see ``Fragments``).
struct Reassembler {
  private struct Key: Hashable {
    let sender: PeerAddress
    let messageID: UInt64
  }

  private struct Pending {
    let kind: PeerMessageKind
    let count: Int
    var parts: [Int: ArraySlice<UInt8>] = [:]
    /// When its last fragment arrived: a message still arriving (a slow transport) is kept.
    var lastFragmentAt: Date
  }

  private var pending: [Key: Pending] = [:]

  /// How many messages are waiting for fragments.
  var count: Int { pending.count }

  /// Adds one opened fragment body from `sender`; the whole message body once its last
  /// fragment arrived.
  /// - Throws: ``PeerWireError`` for a prefix that does not parse, a count past the limit,
  ///   or a fragment that disagrees with the others of its message.
  mutating func add(
    _ body: [UInt8], kind: PeerMessageKind, from sender: PeerAddress, now: Date
  ) throws(PeerWireError) -> [UInt8]? {
    var reader = ByteReader(body)
    let messageID = try reader.u64()
    let index = Int(try reader.u8())
    let count = Int(try reader.u8())
    guard (2...PeerLimits.maximumFragments).contains(count), index < count else {
      throw .invalid("fragment count")
    }
    let chunk = try reader.raw(reader.remaining)
    expire(now: now)
    let key = Key(sender: sender, messageID: messageID)
    var entry =
      pending[key] ?? Pending(kind: kind, count: count, lastFragmentAt: now)
    guard entry.kind == kind, entry.count == count else { throw .invalid("fragment") }
    if pending[key] == nil, pending.count >= PeerLimits.maximumReassemblies,
      let oldest = pending.min(by: { $0.value.lastFragmentAt < $1.value.lastFragmentAt })?.key
    {
      pending[oldest] = nil
    }
    entry.parts[index] = chunk
    entry.lastFragmentAt = now
    guard entry.parts.count == count else {
      pending[key] = entry
      return nil
    }
    pending[key] = nil
    return (0..<count).flatMap { entry.parts[$0]! }
  }

  /// Forgets messages whose last fragment came more than the timeout ago.
  mutating func expire(now: Date) {
    pending = pending.filter {
      now.timeIntervalSince($0.value.lastFragmentAt) < PeerLimits.reassemblyTimeout
    }
  }
}
