/// Cuts datagrams into GATT chunks and puts them back together (see ``GattPeerProfile``).
enum GattChunks {
  /// The chunks of `datagram`, each at most `limit` bytes with its flags byte; one chunk
  /// (start and end) for an empty datagram.
  static func split(_ datagram: [UInt8], limit: Int) -> [[UInt8]] {
    let room = max(1, min(limit, GattPeerProfile.maximumChunk) - 1)
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
