/// A battery's trend: the least-squares line through its voltage samples.
///
/// A beacon's battery voltage falls slowly and noisily (temperature moves it by tens of
/// millivolts), so one reading says little: the line through a day or more of hourly samples
/// says how fast it drains and when it reaches a threshold.
struct BatteryTrend: Sendable, Hashable {
  /// Millivolts a second (negative while it drains).
  var slope: Double
  /// The line's value at ``at``, the newest sample's time.
  var fitted: Double
  /// Seconds since 1970.
  var at: Double

  /// The trend of `samples` (seconds since 1970, millivolts), in time order; nil for fewer
  /// than 3 samples or samples spanning less than `minimumSpan`.
  init?(_ samples: [(time: Double, millivolts: Double)], minimumSpan: Duration) {
    guard samples.count >= 3, let first = samples.first, let last = samples.last,
      last.time - first.time >= Double(minimumSpan.components.seconds)
    else { return nil }
    let count = Double(samples.count)
    let meanTime = samples.reduce(0) { $0 + $1.time } / count
    let meanVolts = samples.reduce(0) { $0 + $1.millivolts } / count
    var covariance = 0.0
    var variance = 0.0
    for sample in samples {
      covariance += (sample.time - meanTime) * (sample.millivolts - meanVolts)
      variance += (sample.time - meanTime) * (sample.time - meanTime)
    }
    guard variance > 0 else { return nil }
    slope = covariance / variance
    fitted = meanVolts + slope * (last.time - meanTime)
    at = last.time
  }
}
