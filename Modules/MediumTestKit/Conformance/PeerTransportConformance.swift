public import Core
import NearbyTesting

/// The checks every `PeerTransport` (Core) must pass, as ``MediumConformance`` for mediums.
///
/// Give it a factory for two fresh transports of one kind that reach each other, and the
/// address of each as the other would use it. Each check makes its own pair and shuts it
/// down; run one test case per check:
///
/// ```swift
/// @Test(arguments: PeerTransportConformance.Check.allCases)
/// func conformance(_ check: PeerTransportConformance.Check) async throws {
///   try await PeerTransportConformance(makePair: { ... }).run(check)
/// }
/// ```
/// A failed check throws ``PeerTransportConformanceFailure`` saying what was expected.
public struct PeerTransportConformance: Sendable {
  /// One rule a transport must keep.
  public enum Check: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A kind of 1...16 bytes, and room for at least 1 200 bytes a datagram.
    case declaresKindAndLimit
    /// A datagram sent to the other's address arrives intact, from an address of this kind.
    case unicastArrives
    /// Answering the address a datagram came from reaches its sender.
    case replyReachesSender
    /// A datagram of the largest declared size arrives intact.
    case largestDatagramArrives
    /// A datagram one byte over the declared size is refused with an error.
    case oversizedIsRefused
    /// With the `multicast` capability, `sendToAll` reaches the other; without it, throws.
    case multicastAsDeclared
    /// `shutdown` finishes `incoming`.
    case shutdownFinishesIncoming

    public var description: String { rawValue }
  }

  /// Two transports of one kind that reach each other, and their addresses.
  public struct Pair: Sendable {
    public var first: any PeerTransport
    public var firstAddress: PeerAddress
    public var second: any PeerTransport
    public var secondAddress: PeerAddress
    public init(
      first: any PeerTransport, firstAddress: PeerAddress, second: any PeerTransport,
      secondAddress: PeerAddress
    ) {
      self.first = first
      self.firstAddress = firstAddress
      self.second = second
      self.secondAddress = secondAddress
    }
  }

  /// How long to wait for a datagram. Default 30 s: a wait returns as soon as the datagram
  /// arrives, so a long bound costs a passing transport nothing, and a loaded machine does not
  /// fail it.
  public var timeout: Duration
  /// How long a shutdown may take before it counts as hung. Default 60 s: it bounds a hang,
  /// not speed.
  public var hangTimeout: Duration
  /// Makes a fresh pair for each check.
  public var makePair: @Sendable () async throws -> Pair

  public init(
    timeout: Duration = .seconds(30), hangTimeout: Duration = .seconds(60),
    makePair: @escaping @Sendable () async throws -> Pair
  ) {
    self.timeout = timeout
    self.hangTimeout = hangTimeout
    self.makePair = makePair
  }

  /// Runs one check on a fresh pair.
  /// - Throws: ``PeerTransportConformanceFailure`` when the transport breaks the rule, or the
  ///   factory's error.
  public func run(_ check: Check) async throws {
    let pair = try await makePair()
    let (first, second) = (pair.first, pair.second)
    let firstIncoming = StreamRecorder(first.incoming)
    let secondIncoming = StreamRecorder(second.incoming)
    let secondArriving = StreamRecorder(second.arriving)
    func fail(_ reason: String) -> PeerTransportConformanceFailure {
      PeerTransportConformanceFailure(check: check, transport: first.name, reason: reason)
    }
    func arrives(_ bytes: [UInt8], at recorder: StreamRecorder<PeerDatagram>) async
      -> PeerDatagram?
    {
      await recorder.first(timeout: timeout) { $0.bytes == bytes }
    }
    var failure: (any Error)?
    do {
      try await perform()
    } catch {
      failure = error
    }
    let shutDown = await finishes(within: hangTimeout) {
      await first.shutdown()
      await second.shutdown()
    }
    if let failure { throw failure }
    if !shutDown { throw fail("shutdown did not return within \(hangTimeout)") }

    func perform() async throws {
      switch check {
      case .declaresKindAndLimit:
        let length = first.kind.utf8.count
        guard (1...PeerAddress.maximumTransportLength).contains(length) else {
          throw fail("kind \"\(first.kind)\" must be 1...16 bytes")
        }
        guard first.maximumDatagramSize >= 1200 else {
          throw fail("maximumDatagramSize \(first.maximumDatagramSize) is under 1200")
        }
        guard pair.secondAddress.transport == first.kind else {
          throw fail("address kind \(pair.secondAddress.transport) is not \(first.kind)")
        }

      case .unicastArrives:
        let bytes = Self.sample(count: 100, seed: 1)
        try await first.send(bytes, to: pair.secondAddress)
        guard let datagram = await arrives(bytes, at: secondIncoming) else {
          throw fail("the datagram did not arrive within \(timeout)")
        }
        if datagram.sender.transport != first.kind {
          throw fail("sender address of kind \(datagram.sender.transport), not \(first.kind)")
        }

      case .replyReachesSender:
        let question = Self.sample(count: 40, seed: 2)
        let reply = Self.sample(count: 50, seed: 3)
        try await first.send(question, to: pair.secondAddress)
        guard let datagram = await arrives(question, at: secondIncoming) else {
          throw fail("the question did not arrive within \(timeout)")
        }
        try await second.send(reply, to: datagram.sender)
        guard await arrives(reply, at: firstIncoming) != nil else {
          throw fail("a reply to \(datagram.sender) did not reach the sender")
        }

      case .largestDatagramArrives:
        let size = min(first.maximumDatagramSize, second.maximumDatagramSize)
        let bytes = Self.sample(count: size, seed: 4)
        try await first.send(bytes, to: pair.secondAddress)
        guard await arrives(bytes, at: secondIncoming) != nil else {
          throw fail("a datagram of \(size) bytes did not arrive intact")
        }

      case .oversizedIsRefused:
        let bytes = Self.sample(count: first.maximumDatagramSize + 1, seed: 5)
        do {
          try await first.send(bytes, to: pair.secondAddress)
        } catch {
          return
        }
        throw fail("a datagram over maximumDatagramSize was accepted")

      case .multicastAsDeclared:
        let bytes = Self.sample(count: 60, seed: 6)
        if first.capabilities.contains(.multicast) {
          try await first.sendToAll(bytes)
          guard await arrives(bytes, at: secondIncoming) != nil else {
            throw fail("sendToAll did not reach the other transport")
          }
        } else {
          do {
            try await first.sendToAll(bytes)
          } catch {
            return
          }
          throw fail("sendToAll without the multicast capability did not throw")
        }

      case .shutdownFinishesIncoming:
        await second.shutdown()
        guard await secondIncoming.waitUntilFinished(timeout: timeout) else {
          throw fail("incoming did not finish after shutdown")
        }
        guard await secondArriving.waitUntilFinished(timeout: timeout) else {
          throw fail("arriving did not finish after shutdown")
        }
      }
    }
  }

  /// Bytes that differ from check to check (a tiny linear congruential sequence).
  private static func sample(count: Int, seed: UInt32) -> [UInt8] {
    var state = seed &* 2_654_435_761
    return (0..<count).map { _ in
      state = state &* 1_103_515_245 &+ 12_345
      return UInt8(truncatingIfNeeded: state >> 16)
    }
  }
}

/// A transport broke a rule of ``PeerTransportConformance``.
public struct PeerTransportConformanceFailure: Error, Sendable, CustomStringConvertible {
  public var check: PeerTransportConformance.Check
  public var transport: String
  public var reason: String
  public var description: String {
    "peer transport conformance check \(check) failed for \(transport): \(reason)"
  }
}
