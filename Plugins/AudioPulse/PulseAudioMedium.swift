public import Core
import Foundation
public import Logging
public import Strategy
import Synchronization
public import Tokens
import AudioModem

/// The audio medium: plays the current token as a near-ultrasonic frame every 2–3 s (less
/// often once peer resolution says hearers asked about it and their `lostAfter` leaves room:
/// ``setPace(_:for:)``) and records continuously, through PulseAudio.
///
/// Two dedicated threads (one playback stream, one record stream, libpulse-simple) do the
/// blocking I/O; the async methods only change shared state behind a mutex and wait, bounded,
/// for the threads to act on it. Before a frame the medium listens: while another frame is
/// being received it waits (up to 1 s). Its own tokens (current and those of the last 10 s)
/// are never reported. Errors map to Core's `MediumStatus`: refused access or no such source →
/// `permissionDenied` (cleared once streams open again), no server → `unavailable` with how to
/// fix it; both threads keep reconnecting, so a restarted server is picked up.
public final class PulseAudioMedium: Medium {
  public let kind: DiscoveryMediums = .audio
  public let name: String
  public let capabilities: MediumCapabilities = [.broadcast, .scan]
  public let sightings: AsyncStream<Sighting>
  public let statusUpdates: AsyncStream<MediumStatus>

  private let configuration: PulseAudioConfiguration
  /// The clock the threads and the waits read (``init(configuration:clock:logger:)``).
  let clock: NearbyClock
  private let logger: Logger
  private let state: Mutex<SharedState>
  private let sightingsContinuation: AsyncStream<Sighting>.Continuation
  private let statusContinuation: AsyncStream<MediumStatus>.Continuation

  /// What the async side asks for and what the threads report back.
  struct SharedState: Sendable {
    var token: Token?
    var transmitRequest = 0
    var transmitDone = 0
    var scanning = false
    var scanRequest = 0
    var scanDone = 0
    var shutdown = false
    var runningThreads = 0
    var receiving = false
    /// The pace peer resolution asked for, and the token it is for.
    var pace: (token: Token, pace: TransmitPace)?
    var ownTokens: [(token: Token, until: NearbyClock.Instant)] = []
    var status: MediumStatus?
    var playbackProblem: MediumStatus?
    var recordProblem: MediumStatus?
  }

  /// Makes the medium and starts its two threads.
  /// - Parameters:
  ///   - configuration: the server, devices, rate, level and timing.
  ///   - clock: what the medium's threads read the time from: when a frame starts, when a
  ///     failed stream is tried again, how long its own tokens are not reported as heard (a
  ///     test may give a `ManualClock`).
  ///   - logger: where the threads log stream failures and recoveries.
  /// - Throws: ``PulseAudioConfigurationError`` for timing out of range
  ///   (``PulseAudioConfiguration/validate()``); `AudioModemError` (AudioModem) when the
  ///   configured rate or level is out of range.
  public init(
    configuration: PulseAudioConfiguration = .init(),
    clock: any Clock<Duration> = ContinuousClock(), logger: Logger
  ) throws {
    try configuration.validate()
    _ = try AudioModemEncoder(
      sampleRate: Double(configuration.sampleRate ?? 48_000), level: configuration.level)
    self.configuration = configuration
    self.clock = NearbyClock(clock)
    self.logger = logger
    name = "pulseaudio \(configuration.sink ?? "default")"
    (sightings, sightingsContinuation) = AsyncStream.makeStream(
      of: Sighting.self, bufferingPolicy: .bufferingNewest(256))
    (statusUpdates, statusContinuation) = AsyncStream.makeStream(
      of: MediumStatus.self, bufferingPolicy: .bufferingNewest(16))
    state = Mutex(SharedState(runningThreads: 2))
    let playback = PlaybackLoop(medium: self)
    let capture = CaptureLoop(medium: self)
    Thread.detachNewThread { playback.run() }
    Thread.detachNewThread { capture.run() }
  }

  public func transmit(_ token: Token) async throws {
    let request = state.withLock { state in
      // A new token starts seeking; the same one again (a digest changed) keeps its pace.
      if state.token != token { state.pace = nil }
      state.token = token
      state.ownTokens.append((token, clock.now + .seconds(3600 * 24 * 365)))
      state.transmitRequest += 1
      return state.transmitRequest
    }
    await waitFor { $0.transmitDone >= request || $0.shutdown }
  }

  /// Takes effect at the next frame: answered, the gaps grow to
  /// ``PulseAudioConfiguration/answeredInterval`` as far as `refreshWithin` leaves four frames
  /// in it (less a 1 s deferral), never under ``PulseAudioConfiguration/interval``. A pace for
  /// a token not transmitted is dropped; a stop or a new token drops the one held. Returns at
  /// once (the playback thread reads it).
  public func setPace(_ pace: TransmitPace, for token: Token) async {
    state.withLock { state in
      guard state.token == token else { return }
      state.pace = (token, pace)
    }
  }

  public func stopTransmitting() async {
    let request = state.withLock { state in
      if let token = state.token { state.ownTokens.append((token, clock.now + .seconds(10))) }
      state.token = nil
      // A pace said while nothing is transmitted is dropped: the one held must not outlive
      // the transmission either.
      state.pace = nil
      state.transmitRequest += 1
      return state.transmitRequest
    }
    await waitFor { $0.transmitDone >= request || $0.runningThreads == 0 }
  }

  public func startScanning() async throws {
    let request = state.withLock { state in
      state.scanning = true
      state.scanRequest += 1
      return state.scanRequest
    }
    await waitFor { $0.scanDone >= request || $0.shutdown }
  }

  public func stopScanning() async {
    let request = state.withLock { state in
      state.scanning = false
      state.scanRequest += 1
      return state.scanRequest
    }
    await waitFor { $0.scanDone >= request || $0.runningThreads == 0 }
  }

  public func shutdown() async {
    state.withLock { $0.shutdown = true }
    await waitFor { $0.runningThreads == 0 }
    sightingsContinuation.finish()
    statusContinuation.finish()
  }

  /// Polls the shared state every 5 ms until `done` holds, 400 times at most (about 2 s: a
  /// thread stuck in libpulse must not hang the caller). Counted in polls, not read on the
  /// medium's clock, so that a clock a test holds still cannot make it wait for ever.
  private func waitFor(_ done: (SharedState) -> Bool) async {
    for _ in 0..<400 where !state.withLock({ done($0) }) {
      try? await Task.sleep(for: .milliseconds(5))
    }
  }

  // MARK: Used by the threads

  var settings: PulseAudioConfiguration { configuration }
  var log: Logger { logger }

  func withState<R>(_ body: (inout SharedState) -> R) -> R { state.withLock { body(&$0) } }

  /// Reports a sighting unless it is one of our own tokens or scanning has stopped.
  func report(_ decoded: DecodedToken) {
    let now = clock.now
    let report = state.withLock { state -> Bool in
      state.ownTokens.removeAll { $0.until < now }
      return state.scanning && !state.shutdown
        && !state.ownTokens.contains { $0.token == decoded.token }
    }
    guard report else { return }
    sightingsContinuation.yield(
      Sighting(token: decoded.token, medium: .audio, snr: decoded.snrDB, time: Date()))
  }

  /// Records a stream's problem (nil: it works) and publishes the medium's status if changed.
  func setProblem(_ problem: MediumStatus?, playback: Bool) {
    let changed = state.withLock { state -> MediumStatus? in
      if playback { state.playbackProblem = problem } else { state.recordProblem = problem }
      let status = state.recordProblem ?? state.playbackProblem ?? .ready
      guard status != state.status else { return nil }
      state.status = status
      return status
    }
    if let changed {
      logger.info("audio medium status", metadata: ["status": "\(changed)"])
      statusContinuation.yield(changed)
    }
  }

  /// The status when the device's rate cannot carry the band.
  func status(forRate rate: Int, device: String) -> MediumStatus {
    .unavailable(
      "\(device) runs at \(rate) Hz; the 18.5–20 kHz band needs at least 44100 Hz. Choose "
        + "another device or set its rate (default-sample-rate in daemon.conf).")
  }

  /// The status a libpulse failure means, with how to fix it.
  func status(for failure: PulseStream.Failure, device: String) -> MediumStatus {
    let server = configuration.server ?? "the default server"
    if PulseStream.isAccessProblem(failure) {
      return .permissionDenied(
        "PulseAudio (\(server)) refused \(device): \(failure.text). Check that this user may "
          + "use the audio server (its cookie, ~/.config/pulse, the 'audio' group) and that "
          + "the device exists (pactl list short sources).")
    }
    return .unavailable(
      "no PulseAudio server at \(server) (\(failure.text)). Start one with "
        + "'pulseaudio --start' (or PipeWire's pipewire-pulse), or set PULSE_SERVER.")
  }

  func threadFinished() { state.withLock { $0.runningThreads -= 1 } }
}

extension MediumProvider {
  /// The PulseAudio medium with the given configuration (the defaults use the default server,
  /// sink and microphone at 48 kHz).
  public static func pulseAudio(
    _ configuration: PulseAudioConfiguration = .init(),
    clock: any Clock<Duration> = ContinuousClock()
  ) -> MediumProvider {
    MediumProvider(name: "pulseaudio") { context in
      try PulseAudioMedium(configuration: configuration, clock: clock, logger: context.logger)
    }
  }
}
