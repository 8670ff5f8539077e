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
    // The air cleared at 0.6 s: a new token's frame starts at once (its head start).
    let cleared = starts(&schedule, from: 0.6, to: 1.2, step: 0.001, random: &random)
    #expect(cleared.count == 1 && cleared[0] == 0.6, "\(cleared)")
    // Next due, busy for longer than the deferral: it starts after 1 s anyway.
    let due = schedule.nextStart
    #expect(!schedule.shouldStart(at: due, busy: true, using: &random))
    #expect(!schedule.shouldStart(at: due + .milliseconds(990), busy: true, using: &random))
    #expect(schedule.shouldStart(at: due + .seconds(1), busy: true, using: &random))
  }

  /// A schedule whose token already played its head start's frames, its next frame due.
  func pastHeadStart(random: inout SplitMix64) -> FrameSchedule {
    var schedule = FrameSchedule(configuration: .init(), now: zero)
    var t = 0.0
    var started = 0
    // Frames that are not deferred count too; bounded, so a schedule that never starts fails.
    while started < FrameSchedule.headStartFrames && t < 60 {
      if schedule.shouldStart(at: at(t), busy: false, using: &random) { started += 1 }
      t += 0.01
    }
    #expect(started == FrameSchedule.headStartFrames)
    return schedule
  }

  @Test("once the air clears, deferred frames start 100–400 ms later, spread, not together")
  func backsOffWhenTheAirClears() {
    var random = SplitMix64(seed: 11)
    var delays: [Double] = []
    for _ in 0..<40 {
      var schedule = pastHeadStart(random: &random)
      let due = schedule.nextStart
      #expect(!schedule.shouldStart(at: due, busy: true, using: &random))
      // The air clears 0.4 s later; another frame starting during the backoff does not hold
      // this one again (both decode: they start apart).
      let cleared = due + .milliseconds(400)
      var started: Duration?
      var offset = Duration.zero
      while started == nil && offset < .milliseconds(600) {
        let now = cleared + offset
        if schedule.shouldStart(at: now, busy: offset > .zero, using: &random) {
          started = offset
        }
        offset += .milliseconds(1)
      }
      delays.append((started ?? .seconds(1)).seconds)
    }
    #expect(delays.allSatisfy { $0 >= 0.1 && $0 <= 0.401 }, "\(delays)")
    // Spread over the range: devices that waited for one frame start apart.
    #expect(delays.contains { $0 < 0.2 } && delays.contains { $0 > 0.3 }, "\(delays)")
  }

  @Test("a new token's first frames start as the air clears, ahead of the backed-off ones")
  func aNewTokenHasAHeadStart() {
    var random = SplitMix64(seed: 5)
    var schedule = FrameSchedule(configuration: .init(), now: zero)
    var clearedAt: [Double] = []
    for frame in 0...FrameSchedule.headStartFrames {
      // Each due frame finds the air busy for half a second, then clear.
      let due = schedule.nextStart
      #expect(!schedule.shouldStart(at: due, busy: true, using: &random))
      let cleared = due + .milliseconds(500)
      var offset = Duration.zero
      while !schedule.shouldStart(at: cleared + offset, busy: false, using: &random) {
        offset += .milliseconds(1)
        #expect(offset < .seconds(1), "frame \(frame) never started")
        if offset >= .seconds(1) { return }
      }
      clearedAt.append(offset.seconds)
    }
    // The head start's frames at once; the next backs off like every other device's.
    #expect(clearedAt.prefix(FrameSchedule.headStartFrames).allSatisfy { $0 == 0 }, "\(clearedAt)")
    #expect((0.1...0.401).contains(clearedAt.last!), "\(clearedAt)")
    // The same token asked for again: no new head start (it backs off).
    schedule.restart(at: schedule.nextStart, newToken: false)
    #expect(!schedule.shouldStart(at: schedule.nextStart, busy: true, using: &random))
    #expect(
      !schedule.shouldStart(
        at: schedule.nextStart + .milliseconds(200), busy: false, using: &random))
    // A new token has its head start again.
    schedule.restart(at: schedule.nextStart, newToken: true)
    #expect(!schedule.shouldStart(at: schedule.nextStart, busy: true, using: &random))
    #expect(
      schedule.shouldStart(
        at: schedule.nextStart + .milliseconds(200), busy: false, using: &random))
  }

  @Test("a new token starts at once and seeking, whatever the pace was")
  func newTokenRestarts() {
    var random = SplitMix64(seed: 7)
    var schedule = FrameSchedule(configuration: .init(), now: zero)
    schedule.setPace(.answered(refreshWithin: .seconds(10)), at: zero, using: &random)
    #expect(schedule.shouldStart(at: at(0), busy: false, using: &random))
    #expect(!schedule.shouldStart(at: at(1), busy: false, using: &random))
    schedule.restart(at: at(1), newToken: true)
    #expect(schedule.pace == .seeking)
    #expect(schedule.shouldStart(at: at(1), busy: false, using: &random))
  }
}
