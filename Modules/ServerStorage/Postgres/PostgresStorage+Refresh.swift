@_spi(Resolver) package import Core
import Foundation
import Logging
import PostgresNIO
@_spi(Resolver) package import Resolution
import Tokens

/// A refresh report in one round trip, its own transaction, awaited on the request's task (no
/// blocking thread): `nearby_refresh_report` (schema version 9), which locks the device,
/// checks that nothing it cannot decide is asked of it, and writes the sightings' times and
/// the device's row; or changes nothing and says why (see ``RefreshReport``). Before it the
/// device is authenticated against the row this instance kept from its last report
/// (``AuthenticatedDevices``), or against its row read from the database (one more round
/// trip) when none is kept.
extension PostgresStorage: RefreshingStorage {
  package func refresh(
    _ refresh: RefreshReport, credentials: DeviceCredentials,
    authorize: @escaping @Sendable (DeviceRecord) throws -> Void
  ) async throws -> RefreshResult {
    let (logger, prepared, known) = (self.logger, self.prepared != nil, authenticatedDevices)
    do {
      return try await client.withConnection { connection -> RefreshResult in
        // Authenticated and authorized before anything is locked or changes, as the engine's
        // path does.
        let device: DeviceRecord
        if let kept = known.device(credentials) {
          device = kept
        } else {
          let rows = try await Self.run(
            DeviceStatement(id: credentials.id.description), on: connection, prepared: prepared,
            logger: logger)
          device = try DeviceRecord.authenticated(
            try rows.first.map { try DeviceRows.record(from: $0) }, as: credentials)
          known.keep(device)
        }
        try authorize(device)
        if let detour = refresh.detour(for: device) {
          known.forget(device.id)
          return .detour(detour, authorized: true)
        }
        let outcome = try await Self.run(
          RefreshStatement(refresh, secret: device.secretDigest), on: connection,
          prepared: prepared, logger: logger
        ).first.map { try RefreshStatement.outcome($0, device: device) }
        switch outcome {
        case .refreshed(let updated)?:
          known.keep(updated)
          return .answered(refresh.answer(updated))
        case .detour(let detour)?:
          known.forget(device.id)
          logger.trace(
            "refresh report goes the general way",
            metadata: ["device": "\(credentials.id)", "why": "\(detour)"])
          return .detour(detour, authorized: true)
        case nil: throw SQLStorageError.unexpectedValue("nearby_refresh_report returned no row")
        }
      }
    } catch {
      throw PostgresStatements.mapped(error)
    }
  }

  /// The statement's rows: prepared once per connection, or unnamed when the URL says
  /// `prepared=off`.
  private static func run<Statement: PostgresPreparedStatement>(
    _ statement: Statement, on connection: PostgresConnection, prepared: Bool, logger: Logger
  ) async throws -> [Statement.Row] {
    var rows: [Statement.Row] = []
    if prepared {
      for try await row in try await connection.execute(statement, logger: logger) {
        rows.append(row)
      }
    } else {
      let query = PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())
      for try await row in try await connection.query(query, logger: logger) {
        rows.append(try statement.decodeRow(row))
      }
    }
    return rows
  }
}

/// The device's row, as `DeviceTable.device(_:)` reads it.
private struct DeviceStatement: PostgresPreparedStatement {
  static let sql = "SELECT \(DeviceRows.columns()) FROM devices WHERE id = $1"
  typealias Row = SQLRow

  var id: String

  func makeBindings() -> PostgresBindings {
    var bindings = PostgresBindings(capacity: 1)
    bindings.append(id)
    return bindings
  }

  func decodeRow(_ row: PostgresRow) throws -> SQLRow {
    // Extended queries' rows come in binary (see PostgresSQLConnection.query).
    try PostgresStatements.row(row, binary: true)
  }
}

/// `nearby_refresh_report`: one refresh, or why not.
private struct RefreshStatement: PostgresPreparedStatement {
  static let sql = "SELECT * FROM nearby_refresh_report($1, $2, $3, $4, $5, $6, $7, $8)"
  typealias Row = SQLRow

  var device: String
  /// The stored secret authentication accepted: the statement goes ahead only if the
  /// device's row, once locked, still holds it.
  var secret: String
  var now: Double
  var freshFor: Double
  var tokens: [Int64]
  var heardAt: [Double]
  var mediums: [Int64]

  init(_ refresh: RefreshReport, secret: String) {
    device = refresh.device.description
    self.secret = secret
    now = refresh.now.timeIntervalSince1970
    freshFor = refresh.freshFor
    tokens = refresh.heard.map(\.token)
    heardAt = refresh.heard.map(\.heardAt)
    mediums = refresh.heard.map(\.medium)
  }

  func makeBindings() -> PostgresBindings {
    var bindings = PostgresBindings(capacity: 8)
    bindings.append(device)
    bindings.append(secret)
    bindings.append(now)
    bindings.append(DeviceLocks.timeMargin)
    bindings.append(freshFor)
    bindings.append(tokens)
    bindings.append(heardAt)
    bindings.append(mediums)
    return bindings
  }

  func decodeRow(_ row: PostgresRow) throws -> SQLRow {
    try PostgresStatements.row(row, binary: true)
  }

  /// What the function's row says: `refreshed` with the device's revision, token, token
  /// expiry and usage (the rest of `device`, the row authentication read, does not change in
  /// a refresh), or the detour's name.
  static func outcome(_ row: SQLRow, device: DeviceRecord) throws -> RefreshReport.Outcome {
    let name = try row.text(0)
    guard name == "refreshed" else {
      guard let detour = RefreshReport.Detour(rawValue: name) else {
        throw SQLStorageError.unexpectedValue("nearby_refresh_report outcome \(name)")
      }
      return .detour(detour)
    }
    var updated = device
    updated.revision = UInt64(bitPattern: try row.integer(1))
    updated.token = Token(value: UInt64(bitPattern: try row.integer(2)))
    updated.tokenExpiresAt = Date(timeIntervalSince1970: try row.real(3))
    updated.usage = try UsageText.decode(row.text(4))
    return .refreshed(updated)
  }
}
