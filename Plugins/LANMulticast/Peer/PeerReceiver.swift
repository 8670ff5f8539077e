import Core
import Foundation
import Glibc
import Logging
import Synchronization

/// The transport's thread: it receives on both sockets until stopped, then closes them.
/// Sends run on the caller's task under the same lock that guards closing, so a descriptor
/// is never used after it was closed.
final class PeerReceiver: Sendable {
  private struct State: Sendable {
    var stopping = false
    var finished = false
    var waiters: [CheckedContinuation<Void, Never>] = []
  }

  private let state = Mutex(State())
  private let sockets: PeerSockets
  private let wakeRead: Int32
  private let wakeWrite: Int32
  private let incoming: AsyncStream<PeerDatagram>.Continuation
  private let logger: Logger

  init(
    sockets: PeerSockets, incoming: AsyncStream<PeerDatagram>.Continuation, logger: Logger
  ) throws(LANMulticastError) {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw .socket(operation: "pipe", errno: errno) }
    for end in ends {
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
    }
    wakeRead = ends[0]
    wakeWrite = ends[1]
    self.sockets = sockets
    self.incoming = incoming
    self.logger = logger
  }

  func start() {
    let thread = Thread { [self] in run() }
    thread.name = "nearby.lan.peer"
    thread.start()
  }

  /// Sends to `target`, or to the group when nil.
  func send(_ bytes: [UInt8], to target: sockaddr_in?) throws(LANMulticastError) {
    let failure = state.withLock { state -> Int32? in
      guard !state.finished, !state.stopping else { return nil }
      return sockets.send(bytes, to: target ?? sockets.groupAddress)
    }
    guard let failure else { throw .shutDown }
    guard failure == 0 else { throw .socket(operation: "sendto", errno: failure) }
  }

  func requestStop() {
    state.withLock { $0.stopping = true }
    wake()
  }

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

  private func wake() {
    state.withLock { state in
      guard !state.finished else { return }
      var byte: UInt8 = 1
      _ = write(wakeWrite, &byte, 1)
    }
  }

  private func run() {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while !state.withLock({ $0.stopping }) {
      var descriptors = [
        pollfd(fd: sockets.unicast, events: Int16(POLLIN), revents: 0),
        pollfd(fd: sockets.group, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
      ]
      let ready = poll(&descriptors, 3, -1)
      if ready < 0 {
        let failure = errno
        guard failure == EINTR else {
          logger.error(
            "poll failed; the LAN peer transport stops receiving",
            metadata: ["errno": "\(failure)", "error": "\(String(cString: strerror(failure)))"])
          break
        }
      }
      if descriptors[2].revents != 0 {
        var drain = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &drain, drain.count) > 0 {}
      }
      for index in 0..<2 where descriptors[index].revents != 0 {
        while let (count, source) = PeerSockets.receive(descriptors[index].fd, into: &buffer) {
          guard let sender = LANPeerAddress.make(source) else { continue }
          incoming.yield(PeerDatagram(bytes: Array(buffer[0..<count]), sender: sender))
        }
      }
    }
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.stopping = true
      state.finished = true
      sockets.close()
      Glibc.close(wakeRead)
      Glibc.close(wakeWrite)
      defer { state.waiters = [] }
      return state.waiters
    }
    incoming.finish()
    for waiter in waiters { waiter.resume() }
  }
}
