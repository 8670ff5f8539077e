@testable import AudioPulse
import Core
import Testing
import Tokens

/// When the playback thread starts a frame, on instants: the seeking gap, the slower gap once
/// answered (as far as lostAfter leaves four frames in it), listening before talking, a new
/// token at once.
@Suite("Frame schedule (on instants)")
struct FrameScheduleTests {
  let zero = NearbyClock.Instant(offset: .zero)

  func at(_ seconds: Double) -> NearbyClock.Instant { zero + .milliseconds(Int(seconds * 1000)) }

  /// Starts frames whenever due, with nothing else on the air, from `from` to `to` seconds:
  /// the instants (in seconds) they started at.
  func starts(
    _ schedule: inout FrameSchedule, from: Double, to: Double, step: Double = 0.01,
    random: inout SplitMix64
  ) -> [Double] {
    var started: [Double] = []
    var t = from
    while t < to {
      if schedule.shouldStart(at: at(t), busy: false, using: &random) { started.append(t) }
      t += step
    }
    return started
  }

  func gaps(_ starts: [Double]) -> [Double] { zip(starts.dropFirst(), starts).map { $0 - $1 } }

  @Test("seeking: a frame at once, then every 2–3 s")
  func seeking() {
    var random = SplitMix64(seed: 7)
    var schedule = FrameSchedule(configuration: .init(), now: zero)
    let started = starts(&schedule, from: 0, to: 30, random: &random)
    #expect(started.first == 0)
    #expect(started.count >= 10 && started.count <= 16)
    #expect(gaps(started).allSatisfy { $0 >= 1.99 && $0 <= 3.02 }, "\(gaps(started))")
  }

  @Test("answered with lostAfter 30 s: every 4–5 s; back to seeking: the next frame within 3 s")
  func answered() {
    var random = SplitMix64(seed: 7)
    var schedule = FrameSchedule(configuration: .init(), now: zero)
    schedule.setPace(.answered(refreshWithin: .seconds(30)), at: zero, using: &random)
    #expect(schedule.interval == 4...5)
    let started = starts(&schedule, from: 0, to: 40, random: &random)
    #expect(started.count >= 8)
    #expect(gaps(started).allSatisfy { $0 >= 3.99 && $0 <= 5.02 }, "\(gaps(started))")
    // Seeking again just after a frame: the next one comes a seeking gap later, not 4–5 s.
    let justAfter = at(started.last! + 0.01)
    #expect(schedule.nextStart >= justAfter + .milliseconds(3990))
    schedule.setPace(.seeking, at: justAfter, using: &random)
    #expect(schedule.nextStart <= justAfter + .seconds(3))
    #expect(schedule.interval == 2...3)
  }

  @Test("lostAfter bounds the answered gap: four frames in it, each deferred; never below seeking")
  func boundedByLostAfter() {
    var schedule = FrameSchedule(configuration: .init(), now: zero)
    var random = SplitMix64(seed: 1)
    // The default lostAfter: (10 - 1) / 4 = 2.25 s leaves no room; the seeking gaps.
    schedule.setPace(.answered(refreshWithin: .seconds(10)), at: zero, using: &random)
    #expect(schedule.interval == 2...3)
    schedule.setPace(.answered(refreshWithin: .seconds(4)), at: zero, using: &random)
    #expect(schedule.interval == 2...3)
    // (17 - 1) / 4 = 4 s: up to 4 s, still a second wide.
    schedule.setPace(.answered(refreshWithin: .seconds(17)), at: zero, using: &random)
    #expect(schedule.interval == 3...4)
    schedule.setPace(.answered(refreshWithin: .seconds(60)), at: zero, using: &random)
    #expect(schedule.interval == 4...5)
  }

  @Test("a due frame waits while the air is busy, at most 1 s")
  func listensBeforeTalking() {
    var random = SplitMix64(seed: 7)
    var schedule = FrameSchedule(configuration: .init(), now: zero)
    #expect(!schedule.shouldStart(at: at(0), busy: true, using: &random))
    #expect(!schedule.shouldStart(at: at(0.5), busy: true, using: &random))
    // The air cleared at 0.6 s: within the backoff (0–300 ms).
    let cleared = starts(&schedule, from: 0.6, to: 1.2, step: 0.001, random: &random)
    #expect(cleared.count == 1 && cleared[0] <= 0.901, "\(cleared)")
    // Next due, busy for longer than the deferral: it starts after 1 s anyway.
    let due = schedule.nextStart
    #expect(!schedule.shouldStart(at: due, busy: true, using: &random))
    #expect(!schedule.shouldStart(at: due + .milliseconds(990), busy: true, using: &random))
    #expect(schedule.shouldStart(at: due + .seconds(1), busy: true, using: &random))
  }

  @Test("once the air clears, deferred frames start 0–300 ms later, spread, not together")
  func backsOffWhenTheAirClears() {
    var random = SplitMix64(seed: 11)
    var delays: [Double] = []
    for _ in 0..<40 {
      var schedule = FrameSchedule(configuration: .init(), now: zero)
      #expect(!schedule.shouldStart(at: at(0), busy: true, using: &random))
      // The air clears at 0.4 s; another frame starting during the backoff does not hold
      // this one again (both decode: they start apart).
      var started: Double?
      var t = 0.4
      while started == nil && t < 0.8 {
        if schedule.shouldStart(at: at(t), busy: t > 0.4, using: &random) { started = t }
        t += 0.001
      }
      delays.append((started ?? 1) - 0.4)
    }
    #expect(delays.allSatisfy { $0 >= 0 && $0 <= 0.301 }, "\(delays)")
    // Spread over the range: devices that waited for one frame start apart.
    #expect(delays.contains { $0 < 0.1 } && delays.contains { $0 > 0.2 }, "\(delays)")
  }

  @Test("a new token starts at once and seeking, whatever the pace was")
  func newTokenRestarts() {
    var random = SplitMix64(seed: 7)
    var schedule = FrameSchedule(configuration: .init(), now: zero)
    schedule.setPace(.answered(refreshWithin: .seconds(10)), at: zero, using: &random)
    #expect(schedule.shouldStart(at: at(0), busy: false, using: &random))
    #expect(!schedule.shouldStart(at: at(1), busy: false, using: &random))
    schedule.restart(at: at(1))
    #expect(schedule.pace == .seeking)
    #expect(schedule.shouldStart(at: at(1), busy: false, using: &random))
  }
}
