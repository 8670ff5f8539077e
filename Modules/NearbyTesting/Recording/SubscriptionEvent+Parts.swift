public import Core
public import Tokens

/// The parts of a subscription event, for tests that look for one kind of event in a recorded
/// stream (`recorder.first { $0.found != nil }`).
extension SubscriptionEvent {
  /// The message of a `.found` event.
  public var found: Message? { if case .found(let message) = self { message } else { nil } }
  /// The message of a `.lost` event.
  public var lost: Message? { if case .lost(let message) = self { message } else { nil } }
  /// The estimate of a `.distanceChanged` event.
  public var distance: DistanceEstimate? {
    if case .distanceChanged(_, let estimate) = self { estimate } else { nil }
  }
  /// The signal of a `.signalChanged` event.
  public var signal: BeaconSignal? {
    if case .signalChanged(_, let signal) = self { signal } else { nil }
  }
}
