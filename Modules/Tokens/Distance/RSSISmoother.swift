/// Smooths a beacon's received signal strength with a windowed median.
///
/// **Window.** The samples of the last ``window`` (default 5 s), at most ``capacity`` of them
/// (default 20, the newest kept). Received power jumps by 10 dB and more from one
/// advertisement to the next (multipath fading, a body in the way); the median of the window
/// ignores such outliers entirely as long as they are fewer than half the samples, unlike a
/// mean or an exponential filter, and follows a real change in distance within half a window.
///
/// **Spread.** ``SmoothedSignal/spread`` is the median absolute deviation × 1.4826 (which
/// equals the standard deviation for normally distributed samples, but is not moved by
/// outliers); ``PathLossModel`` uses it for the distance's accuracy.
///
/// **Invalid values.** Samples outside −127…20 dBm are dropped (BlueZ and HCI use 127 for
/// "not available").
///
/// A value type (mutate it from one owner, e.g. the actor that tracks the beacon); `Instant` is
/// the clock's instant type of the caller (`ContinuousClock.Instant` in production, a test
/// clock's in tests).
public struct RSSISmoother<Instant: InstantProtocol>: Sendable
where Instant.Duration == Duration, Instant: Sendable {
  /// How far back samples count.
  public let window: Duration
  /// The most samples kept.
  public let capacity: Int
  /// The lowest and highest received powers kept, in dBm.
  public static var validRange: ClosedRange<Int> { -127...20 }

  private var samples: [(time: Instant, rssi: Int)] = []

  /// A smoother with an empty window.
  /// - Precondition: `window > 0`, `capacity ≥ 1`.
  public init(window: Duration = .seconds(5), capacity: Int = 20) {
    precondition(window > .zero, "the smoothing window must be longer than zero")
    precondition(capacity >= 1, "the smoother must keep at least one sample")
    self.window = window
    self.capacity = capacity
  }

  /// Adds a sample received at `time` and returns the smoothed signal at that time; `nil` when
  /// the window is empty (every sample was invalid or too old).
  @discardableResult
  public mutating func add(rssi: Int, at time: Instant) -> SmoothedSignal? {
    if Self.validRange.contains(rssi) {
      samples.append((time, rssi))
      if samples.count > capacity { samples.removeFirst(samples.count - capacity) }
    }
    return value(at: time)
  }

  /// Drops the samples older than the window at `now` and returns the smoothed signal; `nil`
  /// when none is left.
  public mutating func value(at now: Instant) -> SmoothedSignal? {
    let oldest = now.advanced(by: .zero - window)
    samples.removeAll { $0.time < oldest }
    guard !samples.isEmpty else { return nil }
    let values = samples.map { Double($0.rssi) }
    let median = Self.median(values)
    let deviation = Self.median(values.map { abs($0 - median) })
    return SmoothedSignal(rssi: median, spread: 1.4826 * deviation, sampleCount: values.count)
  }

  /// The number of samples in the window (as of the last call).
  public var sampleCount: Int { samples.count }

  private static func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
  }
}

/// A smoothed received signal.
public struct SmoothedSignal: Sendable, Hashable {
  /// The median received power in the window, in dBm.
  public var rssi: Double
  /// The robust spread of the window's samples around ``rssi``, in dB (median absolute
  /// deviation × 1.4826).
  public var spread: Double
  /// The number of samples the value is made from.
  public var sampleCount: Int

  /// A value.
  public init(rssi: Double, spread: Double, sampleCount: Int) {
    self.rssi = rssi
    self.spread = spread
    self.sampleCount = sampleCount
  }
}
