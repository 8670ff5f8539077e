/// Cuts datagrams into GATT chunks and puts them back together (see ``GattPeerProfile``).
enum GattChunks {
  /// The chunks of `datagram` as the outbox serves them: each at most `limit` bytes, its
  /// flags byte first; one chunk (start and end) for an empty datagram.
  static func split(_ datagram: [UInt8], limit: Int) -> [[UInt8]] {
    split(datagram, limit: limit, header: 1)
  }

  /// The chunks of `datagram` as a hearer writes them into the inbox: each at most `limit`
  /// bytes, its flags byte and the length of what follows (two bytes, big-endian) first, so
  /// that the owner can put a chunk back together when bluetoothd hands it over in pieces (a
  /// long write, on a bearer whose MTU is smaller than the one the hearer was told).
  static func splitForWriting(_ datagram: [UInt8], limit: Int) -> [[UInt8]] {
    split(datagram, limit: limit, header: 3).map { chunk in
      let length = chunk.count - 1
      return [chunk[0], UInt8(length >> 8), UInt8(length & 0xff)] + chunk.dropFirst()
    }
  }

  private static func split(_ datagram: [UInt8], limit: Int, header: Int) -> [[UInt8]] {
    let room = max(1, min(limit, GattPeerProfile.maximumChunk) - header)
    var chunks: [[UInt8]] = []
    var start = 0
    repeat {
      let end = min(datagram.count, start + room)
      var flags: UInt8 = 0
      if start == 0 { flags |= GattPeerProfile.startFlag }
      if end == datagram.count { flags |= GattPeerProfile.endFlag }
      chunks.append([flags] + datagram[start..<end])
      start = end
    } while start < datagram.count
    return chunks
  }
}

/// Puts one sender's chunks back into datagrams, in the order they arrive (one ATT bearer
/// keeps them in order). Bounded: a datagram longer than ``limit`` is dropped whole, and a
/// chunk that continues nothing is dropped.
struct GattReassembly: Sendable {
  let limit: Int
  private var buffer: [UInt8] = []
  private var open = false

  init(limit: Int = GattPeerProfile.maximumDatagramSize) { self.limit = limit }

  /// What one chunk did.
  enum Outcome: Equatable, Sendable {
    /// A datagram is complete.
    case datagram([UInt8])
    /// More chunks are needed.
    case partial
    /// The chunk was dropped: empty, continuing nothing, or past the limit.
    case dropped
  }

  /// Whether a datagram is under way (its start taken, not its end).
  var isOpen: Bool { open }

  /// Takes one chunk.
  mutating func take(_ chunk: [UInt8]) -> Outcome {
    guard let flags = chunk.first else { return .dropped }
    if flags & GattPeerProfile.startFlag != 0 {
      buffer = []
      open = true
    } else if !open {
      return .dropped
    }
    guard buffer.count + chunk.count - 1 <= limit else {
      buffer = []
      open = false
      return .dropped
    }
    buffer.append(contentsOf: chunk.dropFirst())
    guard flags & GattPeerProfile.endFlag != 0 else { return .partial }
    defer {
      buffer = []
      open = false
    }
    return .datagram(buffer)
  }
}

/// Puts one hearer's written chunks back together from the pieces bluetoothd delivers: a
/// chunk arrives whole (one Write Request) or in pieces at growing offsets (a long write);
/// its header says how long it is. Bounded by ``GattPeerProfile/maximumChunk``.
struct GattWrittenChunk: Sendable {
  private var buffer: [UInt8] = []
  private var expected = 0

  /// What one write did.
  enum Outcome: Equatable, Sendable {
    /// A whole chunk (flags and payload, the length taken off), for ``GattReassembly``.
    case chunk([UInt8])
    case partial
    /// A malformed piece: a header that does not fit, an offset that is not where the chunk
    /// stands, or a chunk longer than it said. What was held is dropped.
    case dropped
  }

  mutating func take(_ piece: [UInt8], offset: Int) -> Outcome {
    if offset == 0 {
      guard piece.count >= 3 else { return reset() }
      expected = 3 + (Int(piece[1]) << 8 | Int(piece[2]))
      guard expected <= GattPeerProfile.maximumChunk else { return reset() }
      buffer = piece
    } else {
      guard !buffer.isEmpty, offset == buffer.count else { return reset() }
      buffer += piece
    }
    guard buffer.count >= expected else { return .partial }
    guard buffer.count == expected else { return reset() }
    defer { buffer = [] }
    return .chunk([buffer[0]] + buffer.dropFirst(3))
  }

  private mutating func reset() -> Outcome {
    buffer = []
    return .dropped
  }
}
