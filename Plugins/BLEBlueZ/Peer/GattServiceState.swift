import Core

/// What the GATT service side of peer resolution decides, apart from D-Bus: which connected
/// hearer ("client", by the device object path bluetoothd names in each call) gets which
/// chunk, how their written chunks become datagrams, and what is kept how long. The
/// transport's actor calls it with the instant and performs nothing it does not say.
///
/// A hearer that listens (its listen chunk, see ``GattPeerProfile``) gets its datagrams as
/// notifications: ``queue(_:for:now:)`` and ``write(_:offset:by:now:)`` return the chunks to
/// notify instead of keeping them for reads, and what waited for it when it began to listen
/// goes first, after the acknowledgement.
///
/// Bounded everywhere: at most ``Configuration/maximumClients`` hearers are kept (the one
/// heard from least recently goes first), each with at most
/// ``Configuration/datagramsPerClient`` datagrams and ``Configuration/bytesPerClient`` bytes
/// waiting, kept ``Configuration/keepFor``.
struct GattServiceState: Sendable {
  struct Configuration: Sendable, Hashable {
    var maximumClients = 32
    var datagramsPerClient = 64
    var bytesPerClient = 512 * 1024
    var keepFor: Duration = .seconds(30)
  }

  /// Why a read is refused.
  enum ReadError: Error, Equatable, Sendable {
    /// An offset past the chunk being read (ATT's Invalid Offset).
    case invalidOffset
  }

  private struct Waiting: Sendable {
    var chunk: [UInt8]
    var at: NearbyClock.Instant
  }

  /// A hearer that listens: its tag, the largest notification its link carries, and the
  /// sequence number of its next notified chunk.
  private struct Listener: Sendable {
    var tag: UInt32
    var room: Int
    var sequence: UInt16 = 0

    /// The notified chunks of `datagram`, numbered on.
    mutating func chunks(of datagram: [UInt8]) -> [[UInt8]] {
      let chunks = GattNotifiedChunks.split(datagram, tag: tag, room: room, sequence: sequence)
      sequence &+= UInt16(truncatingIfNeeded: chunks.count)
      return chunks
    }
  }

  /// What ``queue(_:for:now:)`` did with a datagram.
  enum Queued: Equatable, Sendable {
    /// Kept for the hearer's reads.
    case waiting
    /// The hearer listens: notify these chunks, in order.
    case notify([[UInt8]])
    /// The hearer's outbox is full: dropped.
    case refused
  }

  /// What a write into the inbox did.
  struct Written: Equatable, Sendable {
    /// The datagram it completed, if any.
    var datagram: [UInt8]?
    /// Chunks to notify, in order (the acknowledgement of a listen chunk and what waited).
    var notify: [[UInt8]] = []
  }

  private struct Client: Sendable {
    var listener: Listener?
    var waiting: [Waiting] = []
    var waitingDatagrams = 0
    var waitingBytes = 0
    /// The chunk the last read at offset 0 served: a read long goes on in it.
    var current: [UInt8] = []
    var reassembly = GattReassembly()
    var written = GattWrittenChunk()
    var lastActive: NearbyClock.Instant
  }

  let configuration: Configuration
  private var clients: [String: Client] = [:]
  /// Datagrams refused or dropped because a bound was reached (for the transport's counters).
  private(set) var dropped = 0

  init(configuration: Configuration = .init()) { self.configuration = configuration }

  /// How many hearers are kept.
  var clientCount: Int { clients.count }

  /// Whether any hearer has a datagram waiting (`now`: what expired is not counted).
  mutating func hasWaiting(now: NearbyClock.Instant) -> Bool {
    expire(now: now)
    return clients.values.contains { !$0.waiting.isEmpty }
  }

  /// Queues `datagram` for `client`, or hands back its notified chunks when it listens.
  mutating func queue(_ datagram: [UInt8], for client: String, now: NearbyClock.Instant)
    -> Queued
  {
    expire(now: now)
    var entry = clients[client] ?? admit(client, now: now)
    if entry.listener != nil {
      let chunks = entry.listener!.chunks(of: datagram)
      clients[client] = entry
      return .notify(chunks)
    }
    guard entry.waitingDatagrams < configuration.datagramsPerClient,
      entry.waitingBytes + datagram.count <= configuration.bytesPerClient
    else {
      dropped += 1
      clients[client] = entry
      return .refused
    }
    for chunk in GattChunks.split(datagram, limit: GattPeerProfile.maximumChunk) {
      entry.waiting.append(Waiting(chunk: chunk, at: now))
    }
    entry.waitingDatagrams += 1
    entry.waitingBytes += datagram.count
    clients[client] = entry
    return .waiting
  }

  /// A read of the outbox by `client` at `offset`: at 0 the next chunk waiting (empty when
  /// none), past 0 the rest of the chunk the last read at 0 served (a read long).
  mutating func read(by client: String, offset: Int, now: NearbyClock.Instant) throws(ReadError)
    -> [UInt8]
  {
    expire(now: now)
    guard var entry = clients[client] else {
      guard offset == 0 else { throw .invalidOffset }
      return []
    }
    entry.lastActive = now
    defer { clients[client] = entry }
    if offset > 0 {
      guard offset <= entry.current.count else { throw .invalidOffset }
      return Array(entry.current[offset...])
    }
    guard !entry.waiting.isEmpty else {
      entry.current = []
      return []
    }
    let next = entry.waiting.removeFirst().chunk
    if next.first.map({ $0 & GattPeerProfile.endFlag != 0 }) == true {
      entry.waitingDatagrams -= 1
    }
    entry.waitingBytes = max(0, entry.waitingBytes - (next.count - 1))
    entry.current = next
    return next
  }

  /// A write of `client` into the inbox (a whole chunk, or a piece of one at `offset`): the
  /// datagram it completes, if any; a listen chunk makes the hearer listen (what waited for
  /// it is notified, after the acknowledgement).
  mutating func write(
    _ piece: [UInt8], offset: Int = 0, by client: String, now: NearbyClock.Instant
  ) -> Written {
    expire(now: now)
    var entry = clients[client] ?? admit(client, now: now)
    entry.lastActive = now
    var outcome = GattReassembly.Outcome.partial
    switch entry.written.take(piece, offset: offset) {
    case .chunk(let chunk):
      if let (tag, room) = GattNotifiedChunks.parseListen(chunk) {
        let notify = listen(&entry, tag: tag, room: room)
        clients[client] = entry
        return Written(notify: notify)
      }
      outcome = entry.reassembly.take(chunk)
    case .partial: break
    case .dropped:
      // The datagram it belonged to cannot complete.
      entry.reassembly = GattReassembly()
      outcome = .dropped
    }
    clients[client] = entry
    switch outcome {
    case .datagram(let datagram): return Written(datagram: datagram)
    case .partial: return Written()
    case .dropped:
      dropped += 1
      return Written()
    }
  }

  /// Makes `entry` listen under `tag` (a new listen chunk replaces the last: the hearer
  /// connected again): the acknowledgement, then the datagrams that waited for its reads. The
  /// rest of a datagram a read began stays for reads (the hearer reads on until a read comes
  /// back empty): its start went to a read, and the two ways do not keep order between them.
  private mutating func listen(_ entry: inout Client, tag: UInt32, room: Int) -> [[UInt8]] {
    var listener = Listener(tag: tag, room: room)
    var notify = [GattNotifiedChunks.acknowledgement(tag: tag, sequence: listener.sequence)]
    listener.sequence &+= 1
    var kept: [Waiting] = []
    var rest = entry.waiting[...]
    if let first = rest.first, first.chunk[0] & GattPeerProfile.startFlag == 0 {
      while let next = rest.popFirst() {
        kept.append(next)
        if next.chunk[0] & GattPeerProfile.endFlag != 0 { break }
      }
    }
    var datagram: [UInt8] = []
    for waiting in rest {
      datagram += waiting.chunk.dropFirst()
      if waiting.chunk[0] & GattPeerProfile.endFlag != 0 {
        notify += listener.chunks(of: datagram)
        datagram = []
      }
    }
    entry.waiting = kept
    entry.waitingDatagrams = kept.isEmpty ? 0 : 1
    entry.waitingBytes = kept.reduce(0) { $0 + $1.chunk.count - 1 }
    entry.listener = listener
    return notify
  }

  /// `client` disconnected: it listens no more (a new connection listens under a new tag, and
  /// until then what comes for it waits for its reads).
  mutating func disconnected(_ client: String) {
    clients[client]?.listener = nil
  }

  /// Forgets `client` (it disconnected): what waited for it is dropped.
  mutating func forget(_ client: String) {
    if let entry = clients.removeValue(forKey: client) { dropped += entry.waitingDatagrams }
  }

  /// Drops what waited past ``Configuration/keepFor`` and hearers idle that long with
  /// nothing waiting.
  mutating func expire(now: NearbyClock.Instant) {
    let horizon = now - configuration.keepFor
    for (key, var entry) in clients {
      var changed = false
      while let first = entry.waiting.first, first.at < horizon {
        entry.waiting.removeFirst()
        changed = true
        if first.chunk.first.map({ $0 & GattPeerProfile.endFlag != 0 }) == true {
          entry.waitingDatagrams -= 1
          dropped += 1
        }
        entry.waitingBytes = max(0, entry.waitingBytes - (first.chunk.count - 1))
      }
      if entry.waiting.isEmpty, entry.lastActive < horizon {
        clients[key] = nil
      } else if changed {
        clients[key] = entry
      }
    }
  }

  /// A new client's entry, after making room for it.
  private mutating func admit(_ client: String, now: NearbyClock.Instant) -> Client {
    // A hearer that listens goes last: it reads no more, so losing its listener would leave
    // what comes for it unread until it reads again.
    if clients.count >= configuration.maximumClients,
      let oldest = clients.min(by: {
        ($0.value.listener != nil ? 1 : 0, $0.value.lastActive)
          < ($1.value.listener != nil ? 1 : 0, $1.value.lastActive)
      })?.key
    {
      forget(oldest)
    }
    return Client(lastActive: now)
  }
}
