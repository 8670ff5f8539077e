public import Foundation

/// Beacon diagnostics: observations and telemetry that clients forward with
/// `getforobserved`, the latest kept per beacon, a battery trend fitted over hourly samples,
/// and the alerts derived from them.
public struct BeaconObservations {
  let sql: any SQLConnection

  init(_ sql: any SQLConnection) {
    self.sql = sql
  }

  /// Records observations of the project's beacons at `now`: each beacon's last observation,
  /// and its telemetry when one came with it (the latest wins). A battery reading also goes
  /// into that hour's sample; when a new hour's sample starts, the samples older than
  /// ``DiagnosticsSettings/batteryHistory`` go and the trend is fitted again.
  public func recordObservations(
    project: String, _ observations: [BeaconObservationRecord], now: Date,
    settings: DiagnosticsSettings
  ) throws {
    for observation in observations {
      guard let telemetry = observation.telemetry else {
        try sql.execute(
          """
          INSERT INTO beacon_diagnostics (project, beacon, last_observed_at) VALUES (?, ?, ?)
          ON CONFLICT (project, beacon) DO UPDATE SET last_observed_at = excluded.last_observed_at
          """, [.text(project), .text(observation.beacon), SQLValue(now)])
        continue
      }
      var battery: Int?
      var values: [SQLValue]
      switch telemetry {
      case .plain(let millivolts, let celsius, let count, let uptime):
        battery = millivolts
        values = [
          millivolts.map { .integer(Int64($0)) } ?? .null, celsius.map { .real($0) } ?? .null,
          .integer(count), .real(uptime), .null,
        ]
      case .encrypted(let bytes):
        values = [.null, .null, .null, .null, .blob(bytes)]
      }
      try sql.execute(
        """
        INSERT INTO beacon_diagnostics (project, beacon, last_observed_at, telemetry_at,
          battery_mv, temperature, advertising_count, uptime_seconds, encrypted_telemetry)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project, beacon) DO UPDATE SET last_observed_at = excluded.last_observed_at,
          telemetry_at = excluded.telemetry_at, battery_mv = excluded.battery_mv,
          temperature = excluded.temperature, advertising_count = excluded.advertising_count,
          uptime_seconds = excluded.uptime_seconds,
          encrypted_telemetry = excluded.encrypted_telemetry
        """,
        [.text(project), .text(observation.beacon), SQLValue(now), SQLValue(now)] + values)
      if let battery {
        try recordBatterySample(
          project: project, beacon: observation.beacon, millivolts: battery, now: now,
          settings: settings)
      }
    }
  }

  /// Keeps the battery reading as this hour's sample; a new hour refits the trend.
  private func recordBatterySample(
    project: String, beacon: String, millivolts: Int, now: Date, settings: DiagnosticsSettings
  ) throws {
    let hour = Int64((now.timeIntervalSince1970 / 3600).rounded(.down))
    let key: [SQLValue] = [.text(project), .text(beacon)]
    let known = try sql.queryFirst(
      "SELECT 1 FROM beacon_battery_samples WHERE project = ? AND beacon = ? AND hour = ?",
      key + [.integer(hour)])
    try sql.execute(
      """
      INSERT INTO beacon_battery_samples (project, beacon, hour, millivolts) VALUES (?, ?, ?, ?)
      ON CONFLICT (project, beacon, hour) DO UPDATE SET millivolts = excluded.millivolts
      """, key + [.integer(hour), .integer(Int64(millivolts))])
    guard known == nil else { return }
    let oldest = hour - Int64(settings.batteryHistory / .seconds(3600))
    try sql.execute(
      "DELETE FROM beacon_battery_samples WHERE project = ? AND beacon = ? AND hour < ?",
      key + [.integer(oldest)])
    let samples = try sql.query(
      """
      SELECT hour, millivolts FROM beacon_battery_samples WHERE project = ? AND beacon = ?
      ORDER BY hour
      """, key
    ).map { row in (time: (Double(try row.integer(0)) + 0.5) * 3600, millivolts: try row.real(1)) }
    let fit = BatteryTrend(samples, minimumSpan: settings.minimumTrendSpan)
    try sql.execute(
      """
      UPDATE beacon_diagnostics SET trend_mv_per_second = ?, trend_fit_mv = ?, trend_at = ?
      WHERE project = ? AND beacon = ?
      """,
      [
        fit.map { .real($0.slope) } ?? .null, fit.map { .real($0.fitted) } ?? .null,
        fit.map { .real($0.at) } ?? .null,
      ] + key)
  }

  /// One beacon's diagnostics at `now`; nil if the project has no such beacon (or it is
  /// decommissioned: a tombstone has no health).
  public func diagnostics(
    project: String, beacon: String, now: Date, settings: DiagnosticsSettings
  ) throws -> BeaconDiagnostics? {
    let rows = try sql.query(
      "\(Self.diagnosticsSelect) AND b.name = ?", [.text(project), .text(beacon)])
    return try rows.first.map { try Self.diagnostics($0, now: now, settings: settings) }
  }

  /// The project's beacons' diagnostics in name order, at most `limit` after the beacon named
  /// `after`, with only those raising `alert` when given; and whether more follow.
  public func listDiagnostics(
    project: String, alert: DiagnosticAlert?, after: String?, limit: Int, now: Date,
    settings: DiagnosticsSettings
  ) throws -> (diagnostics: [BeaconDiagnostics], more: Bool) {
    var clause = ""
    var arguments: [SQLValue] = [.text(project)]
    switch alert {
    case .lowBattery:
      clause = " AND \(Self.lowBatteryCondition)"
      let threshold = settings.lowBatteryMillivolts
      arguments += [
        .integer(Int64(threshold)), .real(Double(threshold)),
        SQLValue(now.addingTimeInterval(settings.lowBatteryHorizon.seconds)),
      ]
    case .lowActivity:
      clause = " AND \(Self.lowActivityCondition)"
      arguments.append(SQLValue(now.addingTimeInterval(-settings.lowActivityAfter.seconds)))
    case nil:
      break
    }
    if let after {
      clause += " AND b.name > ?"
      arguments.append(.text(after))
    }
    arguments.append(.integer(Int64(limit + 1)))
    let rows = try sql.query(
      "\(Self.diagnosticsSelect)\(clause) ORDER BY b.name LIMIT ?", arguments)
    let page = try rows.prefix(limit).map { try Self.diagnostics($0, now: now, settings: settings) }
    return (page, rows.count > limit)
  }

  /// Forgets a beacon's diagnostics and samples (it was deleted).
  func deleteDiagnostics(project: String, beacon: String) throws {
    for table in ["beacon_diagnostics", "beacon_battery_samples"] {
      try sql.execute(
        "DELETE FROM \(table) WHERE project = ? AND beacon = ?", [.text(project), .text(beacon)])
    }
  }

  /// Every beacon of the project that is not decommissioned, with its diagnostics row if any.
  /// Binds: the project.
  private static let diagnosticsSelect = """
    SELECT b.name, b.status, b.created_at, d.last_observed_at, d.telemetry_at, d.battery_mv,
      d.temperature, d.advertising_count, d.uptime_seconds, d.encrypted_telemetry,
      d.trend_mv_per_second, d.trend_fit_mv, d.trend_at
    FROM beacons b LEFT JOIN beacon_diagnostics d ON d.project = b.project AND d.beacon = b.name
    WHERE b.project = ? AND b.status <> 'decommissioned'
    """

  /// Binds: the threshold (integer, then real) and the end of the horizon.
  private static let lowBatteryCondition = """
    ((d.battery_mv IS NOT NULL AND d.battery_mv <= ?) OR (d.trend_mv_per_second < 0
      AND d.trend_at + (d.trend_fit_mv - ?) / (0 - d.trend_mv_per_second) <= ?))
    """

  /// Binds: the time before which a beacon unobserved since has low activity.
  private static let lowActivityCondition = """
    (b.status = 'active' AND COALESCE(d.last_observed_at, b.created_at) <= ?)
    """

  private static func diagnostics(_ row: SQLRow, now: Date, settings: DiagnosticsSettings) throws
    -> BeaconDiagnostics
  {
    let date = { (column: Int) in
      try row.optionalReal(column).map(Date.init(timeIntervalSince1970:))
    }
    let battery = try row.optionalInteger(5).map { Int($0) }
    let slope = try row.optionalReal(10)
    var estimated: Date?
    if let slope, slope < 0, let fitted = try row.optionalReal(11),
      let at = try row.optionalReal(12)
    {
      let seconds = at + (fitted - Double(settings.lowBatteryMillivolts)) / -slope
      // Far beyond any horizon (a nearly flat trend) is no estimate.
      if seconds.isFinite, seconds < 1e11 { estimated = Date(timeIntervalSince1970: seconds) }
    }
    var alerts: [DiagnosticAlert] = []
    let horizon = now.addingTimeInterval(settings.lowBatteryHorizon.seconds)
    if let battery, battery <= settings.lowBatteryMillivolts {
      alerts.append(.lowBattery)
    } else if let estimated, estimated <= horizon {
      alerts.append(.lowBattery)
    }
    let lastSeen = try date(3) ?? Date(timeIntervalSince1970: try row.real(2))
    if try row.text(1) == BeaconStatus.active.rawValue,
      lastSeen <= now.addingTimeInterval(-settings.lowActivityAfter.seconds)
    {
      alerts.append(.lowActivity)
    }
    return BeaconDiagnostics(
      beaconName: try row.text(0), lastObservedAt: try date(3), telemetryAt: try date(4),
      batteryMillivolts: battery, temperatureCelsius: try row.optionalReal(6),
      advertisingCount: try row.optionalInteger(7), uptimeSeconds: try row.optionalReal(8),
      encryptedTelemetry: try row.optionalBlob(9),
      batteryTrendMillivoltsPerDay: slope.map { $0 * 86_400 }, estimatedLowBatteryAt: estimated,
      alerts: alerts)
  }
}
