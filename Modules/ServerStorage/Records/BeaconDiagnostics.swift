public import Foundation

/// An alert the server derives from a beacon's diagnostics.
public enum DiagnosticAlert: String, Sendable, Hashable, CaseIterable {
  /// The battery is at or under ``DiagnosticsSettings/lowBatteryMillivolts``, or its trend
  /// reaches that within ``DiagnosticsSettings/lowBatteryHorizon``.
  case lowBattery
  /// An active beacon no client of its project has observed for
  /// ``DiagnosticsSettings/lowActivityAfter`` (counted from its registration if never).
  case lowActivity
}

/// When the server raises a beacon's alerts.
public struct DiagnosticsSettings: Sendable, Hashable {
  /// A battery at or under this many millivolts is low. Default 2200 mV: a 3 V lithium coin
  /// cell near its end.
  public var lowBatteryMillivolts = 2200
  /// A battery whose fitted trend reaches ``lowBatteryMillivolts`` within this is low too.
  /// Default 60 days.
  public var lowBatteryHorizon: Duration = .seconds(60 * 86_400)
  /// An active beacon unobserved this long has low activity. Default 3 days.
  public var lowActivityAfter: Duration = .seconds(3 * 86_400)
  /// The battery samples (one an hour) the trend is fitted over reach this far back; the
  /// older go. Default 30 days.
  public var batteryHistory: Duration = .seconds(30 * 86_400)
  /// A trend is fitted only over samples spanning at least this. Default 1 day.
  public var minimumTrendSpan: Duration = .seconds(86_400)

  public init() {}
}

/// Telemetry a client forwarded for a beacon (Eddystone-TLM): the plain frame's values, or an
/// encrypted frame's bytes as heard.
public enum BeaconTelemetryReading: Sendable, Hashable {
  /// An unencrypted frame. `nil` for what the beacon does not report.
  case plain(
    batteryMillivolts: Int?, temperatureCelsius: Double?, advertisingCount: Int64,
    uptimeSeconds: Double)
  /// An encrypted frame (ETLM), kept as the 18 bytes heard.
  case encrypted([UInt8])
}

/// One observation of a beacon to record: which beacon, and the telemetry heard with it.
public struct BeaconObservationRecord: Sendable, Hashable {
  public var beacon: String
  public var telemetry: BeaconTelemetryReading?

  public init(beacon: String, telemetry: BeaconTelemetryReading?) {
    self.beacon = beacon
    self.telemetry = telemetry
  }
}

/// What the server knows of a beacon's health.
public struct BeaconDiagnostics: Sendable, Hashable {
  public var beaconName: String
  /// When a client of the project last observed it; nil if never.
  public var lastObservedAt: Date?
  /// When telemetry was last forwarded for it; nil if never.
  public var telemetryAt: Date?
  /// The latest plain telemetry's values (nil: not reported, or only encrypted telemetry).
  public var batteryMillivolts: Int?
  public var temperatureCelsius: Double?
  public var advertisingCount: Int64?
  public var uptimeSeconds: Double?
  /// The latest encrypted telemetry frame, when the latest telemetry was encrypted.
  public var encryptedTelemetry: [UInt8]?
  /// The battery's fitted trend, in millivolts a day (negative while it drains); nil until
  /// samples span ``DiagnosticsSettings/minimumTrendSpan``.
  public var batteryTrendMillivoltsPerDay: Double?
  /// When the trend reaches ``DiagnosticsSettings/lowBatteryMillivolts``; nil without a
  /// falling trend.
  public var estimatedLowBatteryAt: Date?
  /// The alerts that hold now, in ``DiagnosticAlert`` order.
  public var alerts: [DiagnosticAlert]
}
