/// A beacon's received signal, smoothed (``SubscriptionEvent/signalChanged(_:_:)``).
///
/// ``rssi`` is the median of the samples in the manager's smoothing window
/// (``MessageManager/Configuration/beaconSmoothingWindow``, default 5 s; see Tokens'
/// `RSSISmoother`), ``spread`` their robust spread.
public struct BeaconSignal: Sendable, Hashable {
  /// The smoothed received power in dBm.
  public var rssi: Double
  /// The spread of the samples around ``rssi`` in dB (median absolute deviation × 1.4826).
  public var spread: Double
  /// The power the beacon declares at 1 m in dBm (an Eddystone TX power at 0 m less the
  /// path-loss model's first-metre loss), `nil` if it declares none.
  public var txPower: Double?

  public init(rssi: Double, spread: Double, txPower: Double?) {
    self.rssi = rssi
    self.spread = spread
    self.txPower = txPower
  }
}
