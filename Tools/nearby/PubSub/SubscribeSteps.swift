import AsyncAlgorithms
import Core
import Glibc

/// What `nearby subscribe` reacts to, one at a time: the subscription's events, a redraw
/// tick, or a reason to stop.
enum SubscribeStep: Sendable {
  case event(SubscriptionEvent)
  case tick
  case stop(String)

  /// The subscription's events (then a stop when they end), the first SIGINT or SIGTERM as a
  /// stop, and a tick every second, merged into one sequence.
  static func merged(
    events: Subscription.Events, signals: AsyncStream<Int32>
  ) -> some AsyncSequence<SubscribeStep, Never> & Sendable {
    let events = chain(
      events.map { SubscribeStep.event($0) }, [SubscribeStep.stop("the subscription ended")].async)
    let stops = signals.prefix(1).map {
      SubscribeStep.stop($0 == SIGINT ? "interrupted" : "terminated")
    }
    let ticks = AsyncTimerSequence(interval: .seconds(1), clock: .continuous).map { _ in
      SubscribeStep.tick
    }
    return merge(events, stops, ticks)
  }
}
