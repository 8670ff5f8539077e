import Core

/// When the playback thread starts the next frame: the decisions of ``PlaybackLoop``, on
/// instants, apart from the stream it writes.
///
/// - **Interval.** A frame starts a random gap after the one before: the configured
///   ``PulseAudioConfiguration/interval`` (2–3 s) while the token is seeking; once peer
///   resolution says hearers asked about it (``TransmitPace/answered(refreshWithin:)``), the
///   ``PulseAudioConfiguration/answeredInterval`` (4–5 s), but only as far as the hearers'
///   `lostAfter` leaves ``chancesPerLostAfter`` frames in it, each possibly deferred. At the
///   default `lostAfter` (10 s) that is no slower than seeking: measured in a room of four,
///   4–5 s gaps left three pairs in four more than 10 s without a decode at some point of
///   30 s, against nearly half at 2–3 s (docs/benchmarks.md). A longer `lostAfter` (30 s)
///   slows an answered token to 4–5 s, and the air has room for a newcomer's frames.
/// - **Listen before talking.** A frame that is due while another is being received waits,
///   up to ``maximumDeferral``, then starts anyway (a frame that never ends would silence the
///   device). When the air clears it starts after a random ``backoff`` (100–400 ms): every
///   device that waited for that frame would otherwise start at its end, together, and the
///   decoder separates overlapping frames only when they start more than about 60 ms apart.
///   Measured end to end with eight devices (docs/benchmarks.md). (A backoff of up to 1.2 s
///   slowed a newcomer's first find, before overlapping frames decoded.)
/// - **A new token** starts at once, seeking. Its first ``headStartFrames`` frames start as
///   soon as the air clears, without the backoff, so that the frames of older tokens that
///   waited with them start at least 100 ms later: a newcomer is what someone may be waiting
///   to find (with the backoff for every frame, a newcomer among eight devices was found
///   after 8.3 s once in 40 rounds: a frame drawn within 60 ms of its start can hide it).
///   What this does not separate: two new tokens that waited for the same frame start
///   together (within the capture's latency), as every deferred frame did before the
///   backoff, for up to three frames each (devices that start or rotate within seconds of
///   each other); and a frame that falls due just after the air clears starts at once, as
///   ever. The same token asked for again (a new digest on another medium) has no new head
///   start. A pace for another token is ignored.
struct FrameSchedule {
  /// The longest a due frame waits for the air.
  static let maximumDeferral = Duration.seconds(1)
  /// The random wait, in milliseconds, after the air cleared for a frame that was deferred:
  /// from 100 ms, a new token's head start.
  static let backoff = 100...400
  /// The frames of a new token that start as the air clears, without the backoff.
  static let headStartFrames = 3
  /// The frames an answered pace still plays within the hearers' `lostAfter`: a pair in a
  /// room of four decodes about half of them (docs/benchmarks.md).
  static let chancesPerLostAfter = 4.0

  let seekingInterval: ClosedRange<Double>
  let answeredInterval: ClosedRange<Double>
  private(set) var pace = TransmitPace.seeking
  private(set) var nextStart: NearbyClock.Instant
  private var deferredSince: NearbyClock.Instant?
  /// When a deferred frame starts, the air having cleared.
  private var backoffUntil: NearbyClock.Instant?
  /// Frames started since the token was new (counted up to ``headStartFrames``).
  private var framesOfToken = 0

  init(configuration: PulseAudioConfiguration, now: NearbyClock.Instant) {
    seekingInterval = configuration.interval
    answeredInterval = configuration.answeredInterval
    nextStart = now
  }

  /// The gaps between frame starts at the current pace, in seconds.
  var interval: ClosedRange<Double> {
    guard case .answered(let refreshWithin) = pace else { return seekingInterval }
    let ceiling =
      (refreshWithin.seconds - Self.maximumDeferral.seconds) / Self.chancesPerLostAfter
    // No room to slow down: the seeking gaps, random as ever (fixed gaps could keep two
    // devices colliding frame after frame).
    guard ceiling > seekingInterval.upperBound else { return seekingInterval }
    let upper = max(min(answeredInterval.upperBound, ceiling), seekingInterval.upperBound)
    // As wide as the seeking range at least, so that the gaps stay random.
    let width = seekingInterval.upperBound - seekingInterval.lowerBound
    let lower = max(min(answeredInterval.lowerBound, upper - width), seekingInterval.lowerBound)
    return lower...upper
  }

  /// A transmission asked for (a new token, or the same one again): start at once, seeking.
  /// Only a `newToken` has a head start again: the same token's frames are the ones its
  /// hearers know already.
  mutating func restart(at now: NearbyClock.Instant, newToken: Bool) {
    pace = .seeking
    nextStart = now
    deferredSince = nil
    backoffUntil = nil
    if newToken { framesOfToken = 0 }
  }

  /// Starts after `delay` (a fresh stream settles on silence first).
  mutating func delay(until instant: NearbyClock.Instant) {
    nextStart = instant
    deferredSince = nil
    backoffUntil = nil
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
    if let until = backoffUntil {
      // A frame that started during the backoff is not waited for: it started earlier, and
      // the decoder separates the two unless that was within about 60 ms (two devices'
      // draws fall that close about one time in three: the spread makes such starts rarer,
      // it does not remove them).
      guard now >= until else { return false }
    } else {
      let since = deferredSince ?? now
      if busy && now - since < Self.maximumDeferral {
        deferredSince = since
        return false
      }
      if deferredSince != nil && !busy && framesOfToken >= Self.headStartFrames {
        backoffUntil = now + .milliseconds(Int.random(in: Self.backoff, using: &random))
        return shouldStart(at: now, busy: busy, using: &random)
      }
    }
    deferredSince = nil
    backoffUntil = nil
    framesOfToken = min(framesOfToken + 1, Self.headStartFrames)
    nextStart = now + Self.gap(in: interval, using: &random)
    return true
  }

  private static func gap(
    in range: ClosedRange<Double>, using random: inout some RandomNumberGenerator
  ) -> Duration {
    .milliseconds(Int(Double.random(in: range, using: &random) * 1000))
  }
}
