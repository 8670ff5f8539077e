import Core

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
/// next expected waits, at most ``window`` of them and at most ``gapTimeout``: one further
/// ahead, or a gap older than that, means those missing are lost (bluetoothd drops a
/// notification its socket cannot take), and the datagram they cut is dropped. Without the
/// time bound a single lost chunk would hold every later one (a refresh answer every 3 s)
/// until 64 more came. A duplicate or older chunk is ignored. Bounded as ``GattReassembly``.
struct GattNotifiedReassembly: Sendable {
  /// How far ahead of the next expected chunk a chunk may be held.
  static let window: UInt16 = 64
  /// How long chunks wait for a missing one before it is taken as lost.
  static let gapTimeout: Duration = .milliseconds(500)
  let tag: UInt32
  /// The owner numbers a listener's chunks from 0, its acknowledgement first.
  private var expected: UInt16 = 0
  private var held: [UInt16: [UInt8]] = [:]
  private var reassembly = GattReassembly()
  /// Since when chunks wait for a missing one (nil: none waits).
  private var gapSince: NearbyClock.Instant?

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

  mutating func take(_ notification: [UInt8], now: NearbyClock.Instant) -> Taken {
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
      skipGap(into: &taken)
    }
    expire(now: now, into: &taken)
    return taken
  }

  /// Gives up a gap that held chunks longer than ``gapTimeout`` (the engine asks at each
  /// wake-up of the link, so one lost chunk delays what follows by about that much).
  mutating func expire(now: NearbyClock.Instant) -> Taken {
    var taken = Taken(ours: true)
    expire(now: now, into: &taken)
    return taken
  }

  private mutating func expire(now: NearbyClock.Instant, into taken: inout Taken) {
    guard !held.isEmpty else {
      gapSince = nil
      return
    }
    guard let since = gapSince else {
      gapSince = now
      return
    }
    guard now - since >= Self.gapTimeout else { return }
    skipGap(into: &taken)
    gapSince = held.isEmpty ? nil : now
  }

  /// What is missing before the oldest chunk held is not coming: the datagram it cut is
  /// dropped, and what is held after the gap goes on.
  private mutating func skipGap(into taken: inout Taken) {
    if reassembly.isOpen { taken.dropped += 1 }
    reassembly = GattReassembly()
    guard let oldest = held.keys.min(by: { ($0 &- expected) < ($1 &- expected) }) else { return }
    expected = oldest
    drain(into: &taken)
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
