import AudioModem

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

  /// The bounds the frame gaps may take: longer than a frame's airtime (so that a device
  /// leaves the air to others between its frames), at most an hour.
  static let intervalBounds = (ModemParameters.airtime + 0.1)...3600
  /// The bounds of ``playbackLatency`` and ``recordFragment``: a buffer PulseAudio can keep
  /// filled, and short enough that a frame is still heard within its seconds.
  static let bufferBounds = 0.005...1.0

  /// Checks the timing fields: ``interval`` and ``answeredInterval`` within 0.95 s (a frame's
  /// airtime and 0.1 s) and 1 h, ``playbackLatency`` and ``recordFragment`` within 5 ms and
  /// 1 s. (The level and the sample rate are the modem's to check.)
  /// - Throws: ``PulseAudioConfigurationError`` naming the field and its range.
  public func validate() throws(PulseAudioConfigurationError) {
    for (field, range) in [("interval", interval), ("answeredInterval", answeredInterval)] {
      guard Self.intervalBounds.contains(range.lowerBound),
        Self.intervalBounds.contains(range.upperBound)
      else {
        throw .outOfRange(
          field: field, value: "\(range)",
          range: "within \(Self.intervalBounds) seconds (longer than a frame's airtime)")
      }
    }
    for (field, value) in [
      ("playbackLatency", playbackLatency), ("recordFragment", recordFragment),
    ]
    where !Self.bufferBounds.contains(value) {
      throw .outOfRange(field: field, value: "\(value)", range: "\(Self.bufferBounds) seconds")
    }
  }

  /// The rate to open a stream on the sink (`isSink`) or the source at.
  func rate(isSink: Bool) -> Int {
    sampleRate
      ?? PulseDeviceRate.sampleRate(server: server, device: isSink ? sink : source, isSink: isSink)
      ?? 48_000
  }
}
