import Core
import Synchronization

/// A peer transport that counts what it sends (datagrams and bytes; a multicast counts once,
/// as it crosses the segment once) into a tally it may share with others, and passes
/// everything to the transport it wraps.
final class CountingPeerTransport: PeerTransport {
  /// Datagrams and bytes sent so far.
  struct Totals: Sendable {
    var datagrams = 0
    var bytes = 0
    /// Datagrams by the peer wire's message kind (the header's fourth byte, in the clear):
    /// who-has, iHave, query, answer; anything else under 0.
    var byKind: [UInt8: Int] = [:]

    /// "who-has 3, iHave 3, query 5, answer 5".
    var kinds: String {
      [(1, "who-has"), (2, "iHave"), (3, "query"), (4, "answer"), (0, "other")].compactMap {
        kind, name in byKind[UInt8(kind)].map { "\(name) \($0)" }
      }.joined(separator: ", ")
    }
  }

  /// What the transports counting into it sent since its last ``reset()``.
  final class Tally: Sendable {
    private let totals = Mutex(Totals())

    var sent: Totals { totals.withLock { $0 } }

    func reset() { totals.withLock { $0 = Totals() } }

    func add(_ datagram: [UInt8]) {
      let kind = datagram.count > 3 && (1...4).contains(datagram[3]) ? datagram[3] : 0
      totals.withLock {
        $0.datagrams += 1
        $0.bytes += datagram.count
        $0.byKind[kind, default: 0] += 1
      }
    }
  }

  private let inner: any PeerTransport
  private let tally: Tally

  init(_ inner: any PeerTransport, into tally: Tally) {
    self.inner = inner
    self.tally = tally
  }

  var kind: String { inner.kind }
  var name: String { "counting \(inner.name)" }
  var capabilities: PeerTransportCapabilities { inner.capabilities }
  var maximumDatagramSize: Int { inner.maximumDatagramSize }
  var incoming: AsyncStream<PeerDatagram> { inner.incoming }
  var arriving: AsyncStream<PeerAddress> { inner.arriving }

  func send(_ datagram: [UInt8], to address: PeerAddress) async throws {
    try await inner.send(datagram, to: address)
    count(datagram)
  }

  func sendToAll(_ datagram: [UInt8]) async throws {
    try await inner.sendToAll(datagram)
    count(datagram)
  }

  func shutdown() async { await inner.shutdown() }

  func host(of address: PeerAddress) -> PeerAddress { inner.host(of: address) }

  private func count(_ datagram: [UInt8]) { tally.add(datagram) }
}
