import NearbyTesting
public import Core
import Tokens

/// The conformance suite every medium plugin must pass.
///
/// Give it a factory for two fresh mediums of the same kind, on different devices, that can
/// hear each other (two adapters on the BlueZ double, two PulseAudio streams on one null
/// sink, two nodes on an ``Air``). Each check makes its own pair and shuts it down. Run every
/// check from a test, one test case per check:
///
/// ```swift
/// @Test(arguments: MediumConformance.Check.allCases)
/// func conformance(_ check: MediumConformance.Check) async throws {
///   try await MediumConformance(makePair: { ... }).run(check)
/// }
/// ```
/// A failed check throws ``ConformanceFailure`` saying what was expected.
public struct MediumConformance: Sendable {
  /// One rule a medium must keep.
  public enum Check: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Each medium reports a status soon after it is made.
    case reportsInitialStatus
    /// Capabilities include broadcast and scan (the two the manager drives).
    case declaresBroadcastAndScan
    /// A token transmitted by one medium is heard by the other, on the right medium.
    case hearsPeerToken
    /// A medium never reports the token it transmits itself.
    case ignoresOwnToken
    /// After `stopTransmitting`, the peer stops hearing the token.
    case stopTransmittingSilences
    /// After `stopScanning`, no more sightings are reported.
    case stopScanningSilences
    /// `transmit` with a new token replaces the old one.
    case rotationReplacesToken
    /// Stopping twice, or stopping what was never started, neither throws nor hangs.
    case stopsAreIdempotent
    /// `shutdown` finishes the sightings stream.
    case shutdownFinishesStreams

    public var description: String { rawValue }
  }

  /// Two mediums of one kind on different devices that can hear each other.
  public struct Pair: Sendable {
    public var first: any Medium
    public var second: any Medium
    /// Lets time pass for the pair while a check watches for silence (``settle``, then
    /// ``quiet``). Nil, the default, sleeps for the duration; a pair on simulated time, such as
    /// two ``AirMedium``s on an ``Air`` on NearbyTesting's `ManualClock`, passes one that moves
    /// that time and returns once the pair has caught up with it.
    public var elapse: (@Sendable (Duration) async -> Void)?

    /// A pair of `first` and `second`, on real time unless `elapse` moves the pair's time.
    public init(
      first: any Medium, second: any Medium, elapse: (@Sendable (Duration) async -> Void)? = nil
    ) {
      self.first = first
      self.second = second
      self.elapse = elapse
    }
  }

  /// How long to wait for something that should happen. Default 30 s: a wait returns as soon
  /// as what it waits for happens, so a long bound costs a passing medium nothing, and a
  /// loaded machine does not fail it.
  public var timeout: Duration
  /// How long a call that must return (a shutdown, a second stop) may take before it counts
  /// as hung. Default 60 s: it bounds a hang, not speed.
  public var hangTimeout: Duration
  /// How long sightings already in flight may still arrive after a stop. Default 500 ms. Passes
  /// on the pair's time (``Pair/elapse``).
  public var settle: Duration
  /// How long to watch for silence. Default 1 s. Passes on the pair's time (``Pair/elapse``).
  public var quiet: Duration
  /// Makes a fresh pair for each check.
  public var makePair: @Sendable () async throws -> Pair

  public init(
    timeout: Duration = .seconds(30), hangTimeout: Duration = .seconds(60),
    settle: Duration = .milliseconds(500), quiet: Duration = .seconds(1),
    makePair: @escaping @Sendable () async throws -> Pair
  ) {
    self.timeout = timeout
    self.hangTimeout = hangTimeout
    self.settle = settle
    self.quiet = quiet
    self.makePair = makePair
  }

  /// Runs every check in order; throws the first failure.
  public func runAll() async throws {
    for check in Check.allCases { try await run(check) }
  }

  /// Runs one check on a fresh pair.
  /// - Throws: ``ConformanceFailure`` when the medium breaks the rule, or the factory's error.
  public func run(_ check: Check) async throws {
    // Taken before the recorders start: a medium's first status may arrive at once.
    let start = ContinuousClock.now
    let pair = try await makePair()
    let first = pair.first
    let second = pair.second
    let sightings = StreamRecorder(second.sightings)
    let ownSightings = StreamRecorder(first.sightings)
    let firstStatus = StreamRecorder(first.statusUpdates)
    let secondStatus = StreamRecorder(second.statusUpdates)
    func fail(_ reason: String) -> ConformanceFailure {
      ConformanceFailure(check: check, medium: first.name, reason: reason)
    }
    func heard(_ token: Token, since: ContinuousClock.Instant) async -> Bool {
      await sightings.first(since: since, timeout: timeout) { $0.token == token } != nil
    }
    let elapse = pair.elapse ?? { try? await Task.sleep(for: $0) }
    func silent(of token: Token?, in recorder: StreamRecorder<Sighting>) async -> Bool {
      await elapse(settle)
      let from = ContinuousClock.now
      await elapse(quiet)
      return !recorder.elements(since: from).contains { token == nil || $0.token == token }
    }
    var failure: (any Error)?
    do {
      try await perform(check)
    } catch {
      failure = error
    }
    // Both mediums are shut down before the next check starts, so real backends never hold
    // two pairs at once; a shutdown that hangs is a failure of its own.
    let shutDown = await finishes(within: hangTimeout) {
      await first.shutdown()
      await second.shutdown()
    }
    if let failure { throw failure }
    if !shutDown { throw fail("shutdown did not return within \(hangTimeout)") }

    func perform(_ check: Check) async throws {
      switch check {
      case .reportsInitialStatus:
        for (medium, recorder) in [(first, firstStatus), (second, secondStatus)] {
          if await recorder.first(since: start, timeout: timeout) == nil {
            throw fail("\(medium.name) reported no status within \(timeout)")
          }
        }

      case .declaresBroadcastAndScan:
        for medium in [first, second]
        where !medium.capabilities.isSuperset(of: [.broadcast, .scan]) {
          throw fail(
            "\(medium.name) capabilities \(medium.capabilities.rawValue) lack broadcast or scan")
        }
        if first.kind.rawValue.nonzeroBitCount != 1 {
          throw fail("kind must be a single medium, got \(first.kind)")
        }

      case .hearsPeerToken:
        let token = Token.random()
        try await second.startScanning()
        try await first.transmit(token)
        guard
          let sighting = await sightings.first(
            since: start, timeout: timeout, where: { $0.token == token })
        else { throw fail("\(second.name) did not hear \(token) within \(timeout)") }
        if sighting.medium != second.kind {
          throw fail("sighting reports medium \(sighting.medium), expected \(second.kind)")
        }

      case .ignoresOwnToken:
        let token = Token.random()
        try await first.startScanning()
        try await second.startScanning()
        try await first.transmit(token)
        guard await heard(token, since: start) else {
          throw fail("the peer did not hear \(token), so the check cannot tell")
        }
        if ownSightings.elements(since: start).contains(where: { $0.token == token }) {
          throw fail("\(first.name) reported its own token \(token)")
        }

      case .stopTransmittingSilences:
        let token = Token.random()
        try await second.startScanning()
        try await first.transmit(token)
        guard await heard(token, since: start) else { throw fail("\(token) was never heard") }
        await first.stopTransmitting()
        if await !silent(of: token, in: sightings) {
          throw fail("\(token) was still heard \(settle) after stopTransmitting")
        }

      case .stopScanningSilences:
        let token = Token.random()
        try await second.startScanning()
        try await first.transmit(token)
        guard await heard(token, since: start) else { throw fail("\(token) was never heard") }
        await second.stopScanning()
        if await !silent(of: nil, in: sightings) {
          throw fail("sightings were still reported \(settle) after stopScanning")
        }

      case .rotationReplacesToken:
        let old = Token.random()
        let new = Token.random()
        try await second.startScanning()
        try await first.transmit(old)
        guard await heard(old, since: start) else { throw fail("\(old) was never heard") }
        let rotated = ContinuousClock.now
        try await first.transmit(new)
        guard await heard(new, since: rotated) else {
          throw fail("the new token \(new) was not heard within \(timeout)")
        }
        if await !silent(of: old, in: sightings) {
          throw fail("the old token \(old) was still heard after rotation")
        }

      case .stopsAreIdempotent:
        let finished = await finishes(within: hangTimeout) {
          await first.stopTransmitting()
          await first.stopScanning()
          try? await first.startScanning()
          await first.stopScanning()
          await first.stopScanning()
          await first.stopTransmitting()
        }
        if !finished { throw fail("stopping twice did not return within \(hangTimeout)") }

      case .shutdownFinishesStreams:
        await second.shutdown()
        if await !sightings.waitUntilFinished(timeout: timeout) {
          throw fail("\(second.name)'s sightings stream did not finish after shutdown")
        }
        if await !secondStatus.waitUntilFinished(timeout: timeout) {
          throw fail("\(second.name)'s status stream did not finish after shutdown")
        }
      }
    }
  }
}

/// Whether `operation` returns within `timeout`. Unlike awaiting a task group, it does not
/// wait for an operation that hangs: that one is cancelled (its group ended) and left to end
/// when it will.
func finishes(
  within timeout: Duration, _ operation: @escaping @Sendable () async -> Void
) async -> Bool {
  let (outcomes, continuation) = AsyncStream.makeStream(
    of: Bool.self, bufferingPolicy: .bufferingNewest(2))
  let race = WorkGroup()
  race.start {
    await operation()
    continuation.yield(true)
  }
  race.start {
    try? await Task.sleep(for: timeout)
    continuation.yield(false)
  }
  var iterator = outcomes.makeAsyncIterator()
  let finished = await iterator.next() ?? false
  race.end()
  return finished
}

/// A medium broke a rule of ``MediumConformance``.
public struct ConformanceFailure: Error, Sendable, CustomStringConvertible {
  public var check: MediumConformance.Check
  public var medium: String
  public var reason: String
  public var description: String { "conformance check \(check) failed for \(medium): \(reason)" }
}
