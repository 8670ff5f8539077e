import Core
import Crypto
import Foundation
import Glibc
import Strategy
import Synchronization
import Tokens

/// The medium's dedicated thread: it blocks in `poll(2)` on the socket and a wake-up pipe,
/// receives and checks datagrams, announces the current token on schedule, and feeds
/// the sightings and status streams. The medium changes what to do through ``State`` under a
/// mutex and wakes the thread through the pipe. Nothing here runs on Swift's cooperative pool.
final class IOThread: Sendable {
  struct State: Sendable {
    var token: Token?
    /// The digest announced beside the token (0: none).
    var digest: UInt64 = 0
    /// Announce at the next wake-up, whatever the schedule says (a new token).
    var announceNow = false
    var scanning = false
    /// Scanning (re)started: report the next hearing of every token at once.
    var scanningRestarted = false
    var stopping = false
    var finished = false
    var waiters: [CheckedContinuation<Void, Never>] = []
  }

  let state = Mutex(State())
  private let socket: MulticastSocket
  /// The pipe that wakes the thread: read end polled, write end written by the medium.
  private let wakeRead: Int32
  private let wakeWrite: Int32
  private let configuration: LANMulticastConfiguration
  /// The key that seals datagrams (derived from the site key), or `nil`: they carry a
  /// checksum only.
  private let key: SymmetricKey?
  private let name: String
  private let sightings: AsyncStream<Sighting>.Continuation
  private let statuses: AsyncStream<MediumStatus>.Continuation

  init(
    socket: MulticastSocket, configuration: LANMulticastConfiguration, name: String,
    sightings: AsyncStream<Sighting>.Continuation, statuses: AsyncStream<MediumStatus>.Continuation
  ) throws(LANMulticastError) {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw .socket(operation: "pipe", errno: errno) }
    for end in ends {
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
    }
    wakeRead = ends[0]
    wakeWrite = ends[1]
    self.socket = socket
    self.configuration = configuration
    key = configuration.sharedKey?.symmetricKey
    self.name = name
    self.sightings = sightings
    self.statuses = statuses
  }

  func start() {
    let thread = Thread { [self] in run() }
    thread.name = "nearby.lan"
    thread.start()
  }

  /// Changes the state and wakes the thread.
  func update(_ change: (inout State) -> Void) {
    state.withLock { change(&$0) }
    wake()
  }

  /// Asks the thread to stop without waiting (for a medium released without `shutdown()`).
  func requestStop() { update { $0.stopping = true } }

  /// Stops the thread and waits until it has closed the socket and finished the streams.
  func stop() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let done = state.withLock { state -> Bool in
        if state.finished { return true }
        state.stopping = true
        state.waiters.append(continuation)
        return false
      }
      if done { continuation.resume() } else { wake() }
    }
  }

  /// Writes a byte to the pipe, under the lock, so it never writes after the thread closed
  /// the pipe (when the number may belong to another file already).
  private func wake() {
    state.withLock { state in
      guard !state.finished else { return }
      var byte: UInt8 = 1
      _ = write(wakeWrite, &byte, 1)
    }
  }

  private func run() {
    var buffer = [UInt8](repeating: 0, count: 2048)
    var filter = ReplayFilter(
      maximumSkew: Self.milliseconds(configuration.maximumClockSkew),
      sightingInterval: Self.milliseconds(configuration.sightingInterval))
    let interval = Self.milliseconds(configuration.announceInterval)
    var nextAnnounce: UInt64 = 0
    var announcer = Announcer()
    var sendProblem: Int32 = 0
    statuses.yield(.ready)
    while true {
      let snapshot = state.withLock { state -> State in
        let copy = state
        state.announceNow = false
        state.scanningRestarted = false
        return copy
      }
      if snapshot.stopping { break }
      if snapshot.scanningRestarted { filter.resetSightings() }
      let now = Self.monotonicMilliseconds()
      if let token = snapshot.token, snapshot.announceNow || now >= nextAnnounce {
        var datagram = announcer.datagram(announcing: token, sentAt: Self.wallMilliseconds())
        datagram.peerPort = configuration.peerPort ?? 0
        datagram.digest = snapshot.digest
        let failure = socket.send(datagram.encoded(key: key))
        if failure != sendProblem {
          // Report a change only: down once, then ready once when it works again.
          sendProblem = failure
          statuses.yield(
            failure == 0
              ? .ready
              : .unavailable(
                "\(name) cannot send: \(SystemErrorText.text(for: failure)); check that the "
                  + "interface is up and has a route for the group"))
        }
        // ±10 % jitter, so that peers started together do not stay in step.
        let jitter = interval / 10
        nextAnnounce = now + interval - jitter + UInt64.random(in: 0...(2 * jitter))
      }
      let timeout: Int32 =
        snapshot.token == nil
        ? -1 : Int32(clamping: nextAnnounce > now ? nextAnnounce - now : 0)
      var descriptors = [
        pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
      ]
      let ready = poll(&descriptors, 2, timeout)
      if ready < 0 && errno != EINTR {
        statuses.yield(
          .unavailable("\(name) stopped: poll failed: \(SystemErrorText.text(for: errno))"))
        break
      }
      if descriptors[1].revents != 0 {
        var drain = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &drain, drain.count) > 0 {}
      }
      if descriptors[0].revents != 0 {
        while let (count, sourceIPv4) = socket.receive(into: &buffer) {
          // Read even when not scanning, so that nothing stale is reported later. A scan
          // restarted since this pass's snapshot resets the spacing before its first report
          // (not after it, which would report the token twice within the interval).
          let (scanning, restarted) = state.withLock { state in
            defer { state.scanningRestarted = false }
            return (state.scanning && !state.stopping, state.scanningRestarted)
          }
          if restarted { filter.resetSightings() }
          guard scanning, let datagram = try? Datagram(checking: buffer[0..<count], key: key),
            !announcer.isOwn(datagram.sender)
          else { continue }
          let own = state.withLock { $0.token } == datagram.token
          guard !own, filter.judge(datagram, now: Self.wallMilliseconds()) == .report else {
            continue
          }
          // The way back: the sender's address and the port its peer transport announced.
          let returnPath = sourceIPv4.flatMap {
            datagram.peerPort == 0 ? nil : LANPeerAddress.make(ipv4: $0, port: datagram.peerPort)
          }
          sightings.yield(
            Sighting(
              token: datagram.token, medium: .lan, returnPath: returnPath,
              digest: HandlesDigest(datagram.digest)))
        }
      }
    }
    socket.close()
    sightings.finish()
    statuses.finish()
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.finished = true
      // Both ends under the lock, once no wake() can write: a write to a pipe whose read end
      // is closed raises SIGPIPE, which kills the process.
      Glibc.close(wakeRead)
      Glibc.close(wakeWrite)
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  static func milliseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    return UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds)) / 1_000_000_000_000_000
  }

  private static func monotonicMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
  }

  private static func wallMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
  }
}
