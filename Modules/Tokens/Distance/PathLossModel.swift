import Foundation

/// The log-distance path-loss model that turns a received power into a distance.
///
/// The received power falls with distance `d` as
///
///     RSSI(d) = P₁ − 10 · n · log₁₀(d / 1 m)
///
/// where `P₁` is the power received at 1 m and `n` the path-loss ``exponent`` (2 in free space,
/// about 2–4 indoors). So
///
///     d = 10 ^ ((P₁ − RSSI) / (10 · n))   metres.
///
/// `P₁` is the beacon's measured power at 1 m (iBeacon, AltBeacon) or its TX power at 0 m less
/// ``lossAtOneMetre`` (Eddystone; the Eddystone specification gives 41 dB).
///
/// **Accuracy.** Received power scatters around the model (fading, bodies, orientation); the
/// estimate's ``DistanceEstimate/accuracy`` is the half-width of the distance interval that
/// the power ± σ gives, where σ is the smoother's spread (``SmoothedSignal/spread``) but never
/// less than ``minimumSpread``: `(d(RSSI − σ) − d(RSSI + σ)) / 2`. It grows with distance, as
/// the physics says it should.
///
/// A value type: pure, safe from any thread.
public struct PathLossModel: Sendable, Hashable {
  /// The path-loss exponent `n`; 2 is free space, 2–4 typical indoors.
  public var exponent: Double
  /// The loss over the first metre, in dB, used to turn an Eddystone TX power at 0 m into a
  /// power at 1 m.
  public var lossAtOneMetre: Double
  /// The least spread of received power assumed, in dB, when few samples are smoothed.
  public var minimumSpread: Double

  /// A model. The defaults: exponent 2 (free space), 41 dB over the first metre (Eddystone's
  /// figure), at least 4 dB of spread (typical indoor shadowing).
  /// - Precondition: `exponent > 0`, `minimumSpread ≥ 0`.
  public init(exponent: Double = 2, lossAtOneMetre: Double = 41, minimumSpread: Double = 4) {
    precondition(exponent > 0 && exponent.isFinite, "the path-loss exponent must be > 0")
    precondition(minimumSpread >= 0, "the minimum spread must be ≥ 0")
    self.exponent = exponent
    self.lossAtOneMetre = lossAtOneMetre
    self.minimumSpread = minimumSpread
  }

  /// The power received at 1 m, in dBm, for a beacon's declared power.
  public func powerAtOneMetre(_ reference: ReferencePower) -> Double {
    switch reference {
    case .atZeroMetres(let power): Double(power) - lossAtOneMetre
    case .atOneMetre(let power): Double(power)
    }
  }

  /// The distance for a received power.
  /// - Parameters:
  ///   - rssi: the received power in dBm, ideally smoothed (``RSSISmoother``).
  ///   - reference: the beacon's declared power.
  ///   - spread: the received power's spread in dB (``SmoothedSignal/spread``); `nil` or less
  ///     than ``minimumSpread`` uses ``minimumSpread``.
  public func distance(rssi: Double, reference: ReferencePower, spread: Double? = nil)
    -> DistanceEstimate
  {
    let oneMetre = powerAtOneMetre(reference)
    let sigma = max(spread ?? 0, minimumSpread)
    let metres = distance(loss: oneMetre - rssi)
    let far = distance(loss: oneMetre - rssi + sigma)
    let near = distance(loss: oneMetre - rssi - sigma)
    return DistanceEstimate(metres: metres, accuracy: (far - near) / 2)
  }

  /// The distance for a received power smoothed by ``RSSISmoother``.
  public func distance(_ signal: SmoothedSignal, reference: ReferencePower) -> DistanceEstimate {
    distance(rssi: signal.rssi, reference: reference, spread: signal.spread)
  }

  private func distance(loss: Double) -> Double {
    pow(10, loss / (10 * exponent))
  }
}

/// A distance estimate: ``metres`` ± ``accuracy``.
public struct DistanceEstimate: Sendable, Hashable {
  /// The estimated distance in metres.
  public var metres: Double
  /// The half-width of the likely interval around ``metres``, in metres (see
  /// ``PathLossModel``).
  public var accuracy: Double

  /// An estimate.
  public init(metres: Double, accuracy: Double) {
    self.metres = metres
    self.accuracy = accuracy
  }
}
