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

/// The chunks of the outbox's notifications (see ``GattPeerProfile``): a hearer's listen
/// chunk, and what an owner notifies a listening hearer.
enum GattNotifiedChunks {
  /// What a hearer writes (before ``GattChunks/splitForWriting(_:limit:)``'s length) to listen:
  /// its tag and the largest notification its link carries.
  static func listen(tag: UInt32, room: Int) -> [UInt8] {
    let room = UInt16(clamping: room)
    return [GattPeerProfile.listenFlag, UInt8(0), UInt8(6)] + bytes(of: tag) + [
      UInt8(room >> 8), UInt8(room & 0xff),
    ]
  }

  /// A listen chunk's tag and room, from a written chunk as ``GattWrittenChunk`` gives it
  /// (flags, then the payload); nil when it is not one.
  static func parseListen(_ chunk: [UInt8]) -> (tag: UInt32, room: Int)? {
    guard chunk.count == 7, chunk[0] == GattPeerProfile.listenFlag else { return nil }
    let tag = chunk[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    let room = Int(chunk[5]) << 8 | Int(chunk[6])
    // At least what a link of the smallest MTU carries: a smaller room would only multiply
    // the notifications (each to every subscribed device).
    guard tag != 0, room >= GattPeerProfile.notificationRoom(mtu: GattPeerProfile.minimumMTU)
    else { return nil }
    return (tag, min(room, GattPeerProfile.maximumChunk))
  }

  /// The notified chunks of `datagram` for the hearer of `tag`, at most `room` bytes each, the
  /// first numbered `sequence`.
  static func split(_ datagram: [UInt8], tag: UInt32, room: Int, sequence: UInt16) -> [[UInt8]] {
    let parts = GattChunks.split(datagram, limit: room - GattPeerProfile.notifiedHeader + 1)
    return parts.enumerated().map { index, part in
      header(flags: part[0], tag: tag, sequence: sequence &+ UInt16(truncatingIfNeeded: index))
        + part.dropFirst()
    }
  }

  /// The acknowledgement of a listen chunk.
  static func acknowledgement(tag: UInt32, sequence: UInt16) -> [UInt8] {
    header(flags: GattPeerProfile.listenFlag, tag: tag, sequence: sequence)
  }

  private static func header(flags: UInt8, tag: UInt32, sequence: UInt16) -> [UInt8] {
    [flags] + bytes(of: tag) + [UInt8(sequence >> 8), UInt8(sequence & 0xff)]
  }

  private static func bytes(of tag: UInt32) -> [UInt8] {
    [UInt8(tag >> 24), UInt8(tag >> 16 & 0xff), UInt8(tag >> 8 & 0xff), UInt8(tag & 0xff)]
  }
}

/// A hearer's side of the notifications of one link: keeps its own tag's chunks, puts them in
/// sequence order, and back into datagrams. bluetoothd spreads notifications over the link's
/// ATT bearers (EATT: three by default), so they arrive out of order: a chunk ahead of the
/// next expected waits, at most ``window`` of them; one further ahead means those missing are
/// lost (the datagram they cut is dropped). A duplicate or older chunk is ignored. Bounded as
/// ``GattReassembly``.
struct GattNotifiedReassembly: Sendable {
  /// How far ahead of the next expected chunk a chunk may be held.
  static let window: UInt16 = 64
  let tag: UInt32
  /// The owner numbers a listener's chunks from 0, its acknowledgement first.
  private var expected: UInt16 = 0
  private var held: [UInt16: [UInt8]] = [:]
  private var reassembly = GattReassembly()

  init(tag: UInt32) { self.tag = tag }

  /// What one notification did.
  struct Taken: Equatable, Sendable {
    /// Whether it was this link's (its tag), whatever came of it.
    var ours = false
    /// The owner acknowledged the listen chunk: it notifies from now on.
    var acknowledged = false
    /// Datagrams completed, in order (a chunk that fills a gap may complete several).
    var datagrams: [[UInt8]] = []
    /// Datagrams dropped: cut by lost chunks, or a chunk continuing nothing.
    var dropped = 0
  }

  mutating func take(_ notification: [UInt8]) -> Taken {
    guard notification.count >= GattPeerProfile.notifiedHeader,
      notification[1..<5].reduce(UInt32(0), { $0 << 8 | UInt32($1) }) == tag
    else { return Taken() }
    var taken = Taken(ours: true)
    let sequence = UInt16(notification[5]) << 8 | UInt16(notification[6])
    let chunk = [notification[0]] + notification.dropFirst(GattPeerProfile.notifiedHeader)
    let ahead = sequence &- expected
    // Behind (a duplicate, or one given up on): nothing.
    guard ahead < 0x8000 else { return taken }
    held[sequence] = chunk
    drain(into: &taken)
    while sequence &- expected < 0x8000, sequence &- expected >= Self.window {
      // What is missing before the oldest chunk held is not coming: the datagram it cut is
      // dropped, and what is held after the gap goes on.
      if reassembly.isOpen { taken.dropped += 1 }
      reassembly = GattReassembly()
      expected = held.keys.min { ($0 &- expected) < ($1 &- expected) } ?? sequence
      drain(into: &taken)
    }
    return taken
  }

  /// Takes the held chunks from the next expected on, while they follow each other.
  private mutating func drain(into taken: inout Taken) {
    while let next = held.removeValue(forKey: expected) {
      expected &+= 1
      process(next, into: &taken)
    }
  }

  private mutating func process(_ chunk: [UInt8], into taken: inout Taken) {
    if chunk[0] & GattPeerProfile.listenFlag != 0 {
      reassembly = GattReassembly()
      taken.acknowledged = true
      return
    }
    switch reassembly.take(chunk) {
    case .datagram(let datagram): taken.datagrams.append(datagram)
    case .partial: break
    case .dropped:
      // Past the limit; a chunk continuing nothing belongs to a datagram counted at its gap.
      if chunk[0] & GattPeerProfile.startFlag != 0 { taken.dropped += 1 }
    }
  }
}
