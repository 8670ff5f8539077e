import Core

/// What one GATT link to an owner decides, apart from D-Bus: when to connect, which chunk to
/// write, when to read the owner's outbox, when to let the link go and when to stop trying.
/// An event and the instant in, the next action out; the transport's actor performs it and
/// reports how it went. One operation runs at a time on a link (ATT is sequential anyway).
///
/// Listening: connected to an owner whose outbox notifies, the link subscribes
/// (``Action/subscribe``) beside its operations rather than as one of them, so that the first
/// question does not wait for it, then writes its listen chunk as its next write (bluetoothd
/// refuses a second write to one characteristic while one is under way: `InProgress`); once
/// the owner acknowledges it,
/// the owner's datagrams arrive as notifications and the link reads only every
/// ``Configuration/notifiedPoll`` (once a read comes back empty: the rest of a datagram a read
/// began is read), for what an owner that lost its listener keeps for reads. Until then, and when the
/// subscription fails (a bluetoothd or an owner that does not notify), it reads as
/// below.
///
/// Reading: right after a write the owner's answer is usually ready, so the machine reads at
/// once, again at once while reads bring chunks, and otherwise backs off from
/// ``Configuration/firstPoll`` doubling to ``Configuration/fastPollLimit`` for
/// ``Configuration/answerWindow``; then every ``Configuration/slowPoll`` (unasked updates)
/// until the link has been quiet for ``Configuration/idleTimeout``, when it disconnects.
/// A failed connection drops what was queued and refuses more for
/// ``Configuration/failureBackoff``: the peer exchange asks again, or asks everyone. A write or
/// read that fails on a connected link (bluetoothd's objects for the owner's service replaced
/// when the owner's GATT database changed, the owner answering "database out of sync", or the
/// link dropped) lets the link go and makes it again, once: the datagram being written starts
/// over; a second failure in a row drops it and what is queued, and lets the link go too.
/// Letting go is a real disconnection: asking bluetoothd to connect a device it is connected
/// to keeps the same ATT bearer, and an owner whose database changed while that bearer was up
/// may refuse it for as long as it lasts (a hearer that missed the Service Changed
/// indication stays "change-unaware"); a new bearer starts aware, with the services found
/// again.
struct GattLinkStateMachine: Sendable {
  struct Configuration: Sendable, Hashable {
    var idleTimeout: Duration = .seconds(10)
    var answerWindow: Duration = .seconds(3)
    var firstPoll: Duration = .milliseconds(20)
    var fastPollLimit: Duration = .milliseconds(320)
    var slowPoll: Duration = .seconds(1)
    /// How often a notified link still reads: what the owner keeps for reads after losing
    /// the link's listener (it forgot the hearer, or bluetoothd restarted) is read then.
    var notifiedPoll: Duration = .seconds(3)
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
    /// Subscribe to the outbox's notifications, beside whatever else runs (ask for the next
    /// action at once); report ``subscribed(_:now:)``.
    case subscribe
    /// Disconnect; report ``disconnected(now:)``.
    case disconnect
    /// Nothing now: ask again at this instant (or when an event arrives).
    case wait(until: NearbyClock.Instant)
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
    case backingOff(until: NearbyClock.Instant)
  }

  /// Where the link is, with what runs on it: one operation at a time, so connecting and
  /// disconnecting are operations themselves and a connected link says which one runs.
  private enum State: Equatable, Sendable {
    case disconnected(Recovery)
    case connecting(Recovery)
    case connected(mtu: Int, running: Operation?, recovery: Recovery)
    /// A write or read failed: the link must be let go before anything else runs on it.
    case failed(Recovery)
    case disconnecting(Recovery)
  }

  /// A write or read on a connected link.
  private enum Operation: Equatable, Sendable {
    case writing
    case reading
    /// Writing the listen chunk: a failure only means the owner will not notify.
    case writingListen
  }

  /// Whether the owner notifies this link.
  private enum Listening: Equatable, Sendable {
    /// It does not (or it is not known yet): the link reads.
    case no
    /// To subscribe first, then to write this listen chunk.
    case toSubscribe([UInt8])
    /// The subscription is under way: the link still reads.
    case subscribing([UInt8])
    /// Subscribed: the listen chunk is the next write.
    case toListen([UInt8])
    /// Subscribed; the owner's acknowledgement has not arrived: the link still reads.
    case awaitingAcknowledgement
    /// The owner notifies: the link reads only now and then.
    case notified
  }

  /// Whether the link is being remade after a failed write or read (one retry), and why: a
  /// second failure before a write or read succeeds drops the datagram and the queue.
  private enum Recovery: Equatable, Sendable {
    case none
    /// A write failed: its datagram is queued again, first.
    case rewriting
    /// A read failed: connect again even with nothing queued, to read what waits.
    case rereading
  }

  let configuration: Configuration
  private var state = State.disconnected(.none)
  private var queued: [[UInt8]] = []
  private var queuedBytes = 0
  /// The datagram being written and the chunks of it still to write.
  private var current: [UInt8]?
  private var chunks: [[UInt8]] = []
  private var lastActivity: NearbyClock.Instant
  private var lastWrite: NearbyClock.Instant?
  private var nextRead: NearbyClock.Instant?
  private var pollDelay: Duration
  private var refusedUntil: NearbyClock.Instant?
  private var listening = Listening.no
  /// Datagrams dropped: queued when a connection failed or the link was lost.
  private(set) var dropped = 0

  init(configuration: Configuration = .init(), now: NearbyClock.Instant) {
    self.configuration = configuration
    lastActivity = now
    pollDelay = configuration.firstPoll
  }

  /// Whether the link is connected (or connecting) now.
  var isLinked: Bool {
    if case .disconnected = state { return false }
    return true
  }

  /// Whether the link reads at ``Configuration/slowPoll`` at `now`: it is connected and the
  /// answer window of its last write (if any) has passed.
  func isSlowPolling(at now: NearbyClock.Instant) -> Bool {
    guard case .connected = state else { return false }
    return lastWrite.map { now - $0 >= configuration.answerWindow } ?? true
  }

  /// Whether the owner notifies this link (it acknowledged the listen chunk).
  var isNotified: Bool { listening == .notified }

  /// The MTU of the connected link, nil when not connected.
  var mtu: Int? {
    if case .connected(let mtu, _, _) = state { return mtu }
    return nil
  }

  /// Queues a datagram to write; returns why not, or nil when queued.
  mutating func enqueueing(_ datagram: [UInt8], now: NearbyClock.Instant) -> Refusal? {
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
  mutating func next(now: NearbyClock.Instant) -> Action {
    if case .connected = state, case .toSubscribe(let chunk) = listening {
      listening = .subscribing(chunk)
      return .subscribe
    }
    switch state {
    case .connecting, .disconnecting, .connected(_, running: .some, _):
      return .busy
    case .failed(let recovery):
      state = .disconnecting(recovery)
      return .disconnect
    case .disconnected(let recovery):
      guard !queued.isEmpty || recovery == .rereading else { return .idle }
      state = .connecting(recovery)
      return .connect
    case .connected(let mtu, running: nil, let recovery):
      if case .toListen(let chunk) = listening {
        listening = .awaitingAcknowledgement
        state = .connected(mtu: mtu, running: .writingListen, recovery: recovery)
        return .write(chunk)
      }
      if chunks.isEmpty, !queued.isEmpty {
        let datagram = queued.removeFirst()
        queuedBytes -= datagram.count
        current = datagram
        chunks = GattChunks.splitForWriting(
          datagram, limit: GattPeerProfile.writeChunk(mtu: mtu))
      }
      if !chunks.isEmpty {
        state = .connected(mtu: mtu, running: .writing, recovery: recovery)
        return .write(chunks.removeFirst())
      }
      if let at = nextRead, now >= at {
        state = .connected(mtu: mtu, running: .reading, recovery: recovery)
        return .read
      }
      if now - lastActivity >= configuration.idleTimeout {
        state = .disconnecting(.none)
        return .disconnect
      }
      let quietEnd = lastActivity + configuration.idleTimeout
      return .wait(until: min(nextRead ?? quietEnd, quietEnd))
    }
  }

  /// The connection is up and the service found, with this ATT MTU; `listenTag` when the
  /// outbox notifies (the tag the owner is to mark this link's notifications with).
  mutating func connected(mtu: Int, listenTag: UInt32? = nil, now: NearbyClock.Instant) {
    guard case .connecting(let recovery) = state else {
      preconditionFailure("GATT link: connected while \(state), not connecting")
    }
    let mtu = max(GattPeerProfile.minimumMTU, mtu)
    state = .connected(mtu: mtu, running: nil, recovery: recovery)
    lastActivity = now
    nextRead = now
    pollDelay = configuration.firstPoll
    listening =
      listenTag.map {
        .toSubscribe(
          GattNotifiedChunks.listen(tag: $0, room: GattPeerProfile.notificationRoom(mtu: mtu)))
      } ?? .no
  }

  /// The subscription and the listen chunk went through (`ok`), or one of them failed: then
  /// the link reads, as with an owner that does not notify.
  mutating func subscribed(_ ok: Bool, now: NearbyClock.Instant) {
    // The link may have gone meanwhile: a new connection subscribes anew.
    guard case .connected = state, case .subscribing(let chunk) = listening else { return }
    lastActivity = now
    listening = ok ? .toListen(chunk) : .no
  }

  /// The owner acknowledged the listen chunk: it notifies from now on. Reads go on only until
  /// one comes back empty (the rest of a datagram a read began is still read).
  mutating func acknowledged(now: NearbyClock.Instant) {
    guard case .connected = state, listening == .awaitingAcknowledgement else { return }
    listening = .notified
    lastActivity = now
  }

  /// A chunk of the owner's arrived as a notification.
  mutating func notified(now: NearbyClock.Instant) {
    guard case .connected = state else { return }
    lastActivity = now
  }

  /// The connection failed (or the device has no such service): what was queued is dropped
  /// and more is refused for ``Configuration/failureBackoff``.
  mutating func connectFailed(now: NearbyClock.Instant) {
    guard case .connecting = state else {
      preconditionFailure("GATT link: connection failed while \(state), not connecting")
    }
    state = .disconnected(.none)
    dropQueued()
    refusedUntil = now + configuration.failureBackoff
  }

  /// The chunk was written.
  mutating func wrote(now: NearbyClock.Instant) {
    if case .connected(let mtu, running: .writingListen, let recovery) = state {
      state = .connected(mtu: mtu, running: nil, recovery: recovery)
      lastActivity = now
      return
    }
    guard case .connected(let mtu, running: .writing, _) = state else {
      preconditionFailure("GATT link: a write finished while \(state), not writing")
    }
    state = .connected(mtu: mtu, running: nil, recovery: .none)
    lastActivity = now
    if chunks.isEmpty {
      current = nil
      // A whole datagram is out: its answer comes soon (notified, or to be read).
      lastWrite = now
      nextRead = listening == .notified ? nextRead ?? now + configuration.notifiedPoll : now
      pollDelay = configuration.firstPoll
    }
  }

  /// A read of the outbox returned `chunk` (empty: nothing waited).
  mutating func read(_ chunk: [UInt8], now: NearbyClock.Instant) {
    guard case .connected(let mtu, running: .reading, _) = state else {
      preconditionFailure("GATT link: a read finished while \(state), not reading")
    }
    state = .connected(mtu: mtu, running: nil, recovery: .none)
    if listening == .notified {
      // What a read began is read to its end; everything else comes notified, but for a
      // read now and then.
      if !chunk.isEmpty { lastActivity = now }
      nextRead = chunk.isEmpty ? now + configuration.notifiedPoll : now
      return
    }
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

  /// A write or read failed: the link is taken as lost and let go (the next action is
  /// ``Action/disconnect``). The first time, the link is then made again (connect, find the
  /// service) and the datagram being written starts over; a second failure in a row drops it
  /// and the queue.
  mutating func operationFailed(now: NearbyClock.Instant) {
    if case .connected(let mtu, running: .writingListen, let recovery) = state {
      // The owner will not notify: the link reads, as with one that does not notify.
      state = .connected(mtu: mtu, running: nil, recovery: recovery)
      if listening == .awaitingAcknowledgement { listening = .no }
      return
    }
    guard case .connected(_, running: .some, let recovery) = state else {
      preconditionFailure("GATT link: an operation failed while \(state), with none running")
    }
    chunks = []
    nextRead = nil
    lastActivity = now
    defer { current = nil }
    guard recovery == .none else {
      state = .failed(.none)
      if current != nil { dropped += 1 }
      dropQueued()
      return
    }
    if let current {
      queued.insert(current, at: 0)
      queuedBytes += current.count
      state = .failed(.rewriting)
    } else {
      // A read failed: connect again to read what waits (the first read after connecting).
      state = .failed(.rereading)
    }
  }

  /// The link is down (we disconnected, or the device did).
  mutating func disconnected(now: NearbyClock.Instant) {
    guard case .disconnecting(let recovery) = state else {
      preconditionFailure("GATT link: disconnected while \(state), not disconnecting")
    }
    // A link disconnects when idle or after a failure, which put the datagram it was writing
    // back first in the queue: none is half written.
    state = .disconnected(recovery)
    nextRead = nil
    lastActivity = now
    listening = .no
  }

  private mutating func dropQueued() {
    dropped += queued.count
    queued = []
    queuedBytes = 0
  }
}
