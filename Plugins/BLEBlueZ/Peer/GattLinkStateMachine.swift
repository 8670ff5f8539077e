/// What one GATT link to an owner decides, apart from D-Bus: when to connect, which chunk to
/// write, when to read the owner's outbox, when to let the link go and when to stop trying.
/// An event and the instant in, the next action out; the transport's actor performs it and
/// reports how it went. One operation runs at a time on a link (ATT is sequential anyway).
///
/// Reading: right after a write the owner's answer is usually ready, so the machine reads at
/// once, again at once while reads bring chunks, and otherwise backs off from
/// ``Configuration/firstPoll`` doubling to ``Configuration/fastPollLimit`` for
/// ``Configuration/answerWindow``; then every ``Configuration/slowPoll`` (unasked updates)
/// until the link has been quiet for ``Configuration/idleTimeout``, when it disconnects.
/// A failed connection drops what was queued and refuses more for
/// ``Configuration/failureBackoff``: the peer exchange asks again, or asks everyone. A write or
/// read that fails on a connected link (bluetoothd's objects for the owner's service replaced
/// when the owner's GATT database changed, or the link dropped) reconnects and finds the
/// service again, once: the datagram being written starts over; a second failure in a row
/// drops it and what is queued.
struct GattLinkStateMachine: Sendable {
  struct Configuration: Sendable, Hashable {
    var idleTimeout: Duration = .seconds(10)
    var answerWindow: Duration = .seconds(3)
    var firstPoll: Duration = .milliseconds(20)
    var fastPollLimit: Duration = .milliseconds(320)
    var slowPoll: Duration = .seconds(1)
    var failureBackoff: Duration = .seconds(5)
    var maximumQueuedDatagrams = 64
    var maximumQueuedBytes = 256 * 1024
  }

  enum Action: Equatable, Sendable {
    /// Connect and find the service's characteristics; report ``connected(mtu:now:)`` or
    /// ``connectFailed(now:)``.
    case connect
    /// Write this chunk into the inbox; report ``wrote(now:)`` or ``operationFailed(now:)``.
    case write([UInt8])
    /// Read the outbox once; report ``read(_:now:)`` or ``operationFailed(now:)``.
    case read
    /// Disconnect; report ``disconnected(now:)``.
    case disconnect
    /// Nothing now: ask again at this instant (or when an event arrives).
    case wait(until: ContinuousClock.Instant)
    /// Nothing to do until something is queued: the link can be put away.
    case idle
    /// An operation is running: wait for its report.
    case busy
  }

  /// Why a datagram was not queued.
  enum Refusal: Equatable, Sendable {
    /// The link's queue is full.
    case queueFull
    /// The last connection failed; the link refuses until this instant.
    case backingOff(until: ContinuousClock.Instant)
  }

  private enum State: Equatable, Sendable {
    case disconnected
    case connecting
    case connected(mtu: Int)
    case disconnecting
  }

  let configuration: Configuration
  private var state = State.disconnected
  private var running = false
  private var queued: [[UInt8]] = []
  private var queuedBytes = 0
  /// The datagram being written and the chunks of it still to write.
  private var current: [UInt8]?
  private var chunks: [[UInt8]] = []
  /// Whether the last operation failed and the link is being remade for it (one retry).
  private var retrying = false
  /// A read failed: connect again even with nothing queued.
  private var reconnectToRead = false
  private var lastActivity: ContinuousClock.Instant
  private var lastWrite: ContinuousClock.Instant?
  private var nextRead: ContinuousClock.Instant?
  private var pollDelay: Duration
  private var refusedUntil: ContinuousClock.Instant?
  /// Datagrams dropped: queued when a connection failed or the link was lost.
  private(set) var dropped = 0

  init(configuration: Configuration = .init(), now: ContinuousClock.Instant) {
    self.configuration = configuration
    lastActivity = now
    pollDelay = configuration.firstPoll
  }

  /// Whether the link is connected (or connecting) now.
  var isLinked: Bool { state != .disconnected }

  /// Whether the link reads at ``Configuration/slowPoll`` at `now`: it is connected and the
  /// answer window of its last write (if any) has passed.
  func isSlowPolling(at now: ContinuousClock.Instant) -> Bool {
    guard case .connected = state else { return false }
    return lastWrite.map { now - $0 >= configuration.answerWindow } ?? true
  }

  /// The MTU of the connected link, nil when not connected.
  var mtu: Int? {
    if case .connected(let mtu) = state { return mtu }
    return nil
  }

  /// Queues a datagram to write; returns why not, or nil when queued.
  mutating func enqueueing(_ datagram: [UInt8], now: ContinuousClock.Instant) -> Refusal? {
    if let until = refusedUntil {
      guard now >= until else { return .backingOff(until: until) }
      refusedUntil = nil
    }
    guard queued.count < configuration.maximumQueuedDatagrams,
      queuedBytes + datagram.count <= configuration.maximumQueuedBytes
    else { return .queueFull }
    queued.append(datagram)
    queuedBytes += datagram.count
    return nil
  }

  /// The next thing to do.
  mutating func next(now: ContinuousClock.Instant) -> Action {
    guard !running else { return .busy }
    switch state {
    case .connecting, .disconnecting:
      return .busy
    case .disconnected:
      guard !queued.isEmpty || reconnectToRead else { return .idle }
      reconnectToRead = false
      state = .connecting
      running = true
      return .connect
    case .connected(let mtu):
      if chunks.isEmpty, !queued.isEmpty {
        let datagram = queued.removeFirst()
        queuedBytes -= datagram.count
        current = datagram
        chunks = GattChunks.splitForWriting(
          datagram, limit: GattPeerProfile.writeChunk(mtu: mtu))
      }
      if !chunks.isEmpty {
        running = true
        return .write(chunks.removeFirst())
      }
      if let at = nextRead, now >= at {
        running = true
        return .read
      }
      if now - lastActivity >= configuration.idleTimeout {
        state = .disconnecting
        running = true
        return .disconnect
      }
      let quietEnd = lastActivity + configuration.idleTimeout
      return .wait(until: min(nextRead ?? quietEnd, quietEnd))
    }
  }

  /// The connection is up and the service found, with this ATT MTU.
  mutating func connected(mtu: Int, now: ContinuousClock.Instant) {
    running = false
    state = .connected(mtu: max(GattPeerProfile.minimumMTU, mtu))
    lastActivity = now
    nextRead = now
    pollDelay = configuration.firstPoll
  }

  /// The connection failed (or the device has no such service): what was queued is dropped
  /// and more is refused for ``Configuration/failureBackoff``.
  mutating func connectFailed(now: ContinuousClock.Instant) {
    running = false
    state = .disconnected
    retrying = false
    dropQueued()
    refusedUntil = now + configuration.failureBackoff
  }

  /// The chunk was written.
  mutating func wrote(now: ContinuousClock.Instant) {
    running = false
    lastActivity = now
    retrying = false
    if chunks.isEmpty {
      current = nil
      // A whole datagram is out: its answer comes soon.
      lastWrite = now
      nextRead = now
      pollDelay = configuration.firstPoll
    }
  }

  /// A read of the outbox returned `chunk` (empty: nothing waited).
  mutating func read(_ chunk: [UInt8], now: ContinuousClock.Instant) {
    running = false
    retrying = false
    if !chunk.isEmpty {
      lastActivity = now
      nextRead = now
      pollDelay = configuration.firstPoll
      return
    }
    let fast = lastWrite.map { now - $0 < configuration.answerWindow } ?? false
    if fast {
      nextRead = now + pollDelay
      pollDelay = min(pollDelay * 2, configuration.fastPollLimit)
    } else {
      nextRead = now + configuration.slowPoll
    }
  }

  /// A write or read failed: the link is taken as lost. The first time, the link is made
  /// again (connect, find the service) and the datagram being written starts over; a second
  /// failure in a row drops it and the queue.
  mutating func operationFailed(now: ContinuousClock.Instant) {
    running = false
    state = .disconnected
    chunks = []
    nextRead = nil
    lastActivity = now
    if !retrying {
      retrying = true
      if let current {
        queued.insert(current, at: 0)
        queuedBytes += current.count
      } else {
        // A read failed: connect again to read what waits (the first read after connecting).
        reconnectToRead = true
      }
      current = nil
      return
    }
    retrying = false
    if current != nil { dropped += 1 }
    current = nil
    dropQueued()
  }

  /// The link is down (we disconnected, or the device did).
  mutating func disconnected(now: ContinuousClock.Instant) {
    running = false
    state = .disconnected
    if !chunks.isEmpty {
      chunks = []
      dropped += 1
    }
    nextRead = nil
    lastActivity = now
  }

  private mutating func dropQueued() {
    dropped += queued.count
    queued = []
    queuedBytes = 0
  }
}
