/// Where and how the PulseAudio medium plays and records.
public struct PulseAudioConfiguration: Sendable, Hashable {
  /// The server (`unix:/path/native`, `tcp:host`), or nil for the default (`$PULSE_SERVER`,
  /// else the session's server).
  public var server: String?
  /// The sink to play into, or nil for the default sink.
  public var sink: String?
  /// The source to record from, or nil for the default source (the microphone).
  public var source: String?
  /// The streams' sample rate in Hz, or nil (the default) for the device's own rate, read
  /// from the server when a stream opens (48000 when it cannot be read): streams at the
  /// device's rate are not resampled, so the 18.5–20 kHz band is not filtered away.
  public var sampleRate: Int?
  /// Peak level of the frames, 0 < level ≤ 1.
  public var level: Float
  /// Seconds between the starts of two frames: a random value in this range (2–3 s).
  public var interval: ClosedRange<Double>
  /// Seconds between the starts of two frames once hearers asked about the token (peer
  /// resolution's `TransmitPace.answered`, Core): a random value in this range (4–5 s), as far
  /// as the hearers' `lostAfter` leaves four frames in it (less a deferral of 1 s); never
  /// under ``interval``. At the default `lostAfter` (10 s) that is ``interval`` itself: a
  /// crowded room lost more than it gained at 4–5 s (docs/benchmarks.md).
  public var answeredInterval: ClosedRange<Double>
  /// Target playback buffer and record fragment, in seconds (80 ms and 20 ms): short enough
  /// for a sighting within 150 ms of a frame's end, long enough that a busy machine does not
  /// leave gaps in a frame.
  public var playbackLatency: Double
  public var recordFragment: Double

  public init(
    server: String? = nil, sink: String? = nil, source: String? = nil, sampleRate: Int? = nil,
    level: Float = 0.5, interval: ClosedRange<Double> = 2...3,
    answeredInterval: ClosedRange<Double> = 4...5, playbackLatency: Double = 0.08,
    recordFragment: Double = 0.02
  ) {
    self.server = server
    self.sink = sink
    self.source = source
    self.sampleRate = sampleRate
    self.level = level
    self.interval = interval
    self.answeredInterval = answeredInterval
    self.playbackLatency = playbackLatency
    self.recordFragment = recordFragment
  }

  /// The rate to open a stream on the sink (`isSink`) or the source at.
  func rate(isSink: Bool) -> Int {
    sampleRate
      ?? PulseDeviceRate.sampleRate(server: server, device: isSink ? sink : source, isSink: isSink)
      ?? 48_000
  }
}
