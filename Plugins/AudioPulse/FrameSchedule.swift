import Core

/// When the playback thread starts the next frame: the decisions of ``PlaybackLoop``, on
/// instants, apart from the stream it writes.
///
/// - **Interval.** A frame starts a random gap after the one before: the configured
///   ``PulseAudioConfiguration/interval`` (2–3 s) while the token is seeking, the
///   ``PulseAudioConfiguration/answeredInterval`` (4–5 s) once peer resolution says hearers
///   asked about it (``TransmitPace/answered(refreshWithin:)``), never longer than half the
///   hearers' `lostAfter`, so that one lost frame does not lose the token. A room where every
///   token is answered carries about half the frames, and the air has room for a newcomer's.
/// - **Listen before talking.** A frame that is due while another is being received waits,
///   up to ``maximumDeferral``, then starts anyway (a frame that never ends would silence the
///   device).
/// - **A new token** starts at once, seeking; a pace for another token is ignored.
struct FrameSchedule {
  /// The longest a due frame waits for the air.
  static let maximumDeferral = Duration.seconds(1)

  let seekingInterval: ClosedRange<Double>
  let answeredInterval: ClosedRange<Double>
  private(set) var pace = TransmitPace.seeking
  private(set) var nextStart: NearbyClock.Instant
  private var deferredSince: NearbyClock.Instant?

  init(configuration: PulseAudioConfiguration, now: NearbyClock.Instant) {
    seekingInterval = configuration.interval
    answeredInterval = configuration.answeredInterval
    nextStart = now
  }

  /// The gaps between frame starts at the current pace, in seconds.
  var interval: ClosedRange<Double> {
    guard case .answered(let refreshWithin) = pace else { return seekingInterval }
    // Two chances within the hearers' lostAfter, never faster than seeking.
    let ceiling = max(refreshWithin.secondsValue / 2, seekingInterval.upperBound)
    let lower = max(min(answeredInterval.lowerBound, ceiling), seekingInterval.lowerBound)
    let upper = max(min(answeredInterval.upperBound, ceiling), lower)
    return lower...upper
  }

  /// A new token (or the first): start at once, seeking.
  mutating func restart(at now: NearbyClock.Instant) {
    pace = .seeking
    nextStart = now
    deferredSince = nil
  }

  /// Starts after `delay` (a fresh stream settles on silence first).
  mutating func delay(until instant: NearbyClock.Instant) {
    nextStart = instant
    deferredSince = nil
  }

  /// The pace changed for the token transmitted. Back to seeking, the next frame comes no
  /// later than a seeking gap from now (a newcomer may be waiting).
  mutating func setPace(
    _ new: TransmitPace, at now: NearbyClock.Instant, using random: inout some RandomNumberGenerator
  ) {
    guard new != pace else { return }
    pace = new
    if case .seeking = new {
      nextStart = min(nextStart, now + Self.gap(in: seekingInterval, using: &random))
    }
  }

  /// Whether to start a frame at `now`, with `busy` saying a frame is being received. When
  /// it says yes, the next start is scheduled.
  mutating func shouldStart(
    at now: NearbyClock.Instant, busy: Bool, using random: inout some RandomNumberGenerator
  ) -> Bool {
    guard now >= nextStart else { return false }
    let since = deferredSince ?? now
    if busy && now - since < Self.maximumDeferral {
      deferredSince = since
      return false
    }
    deferredSince = nil
    nextStart = now + Self.gap(in: interval, using: &random)
    return true
  }

  private static func gap(
    in range: ClosedRange<Double>, using random: inout some RandomNumberGenerator
  ) -> Duration {
    .milliseconds(Int(Double.random(in: range, using: &random) * 1000))
  }
}

extension Duration {
  /// This duration in seconds.
  fileprivate var secondsValue: Double {
    let (whole, fraction) = components
    return Double(whole) + Double(fraction) / 1e18
  }
}
