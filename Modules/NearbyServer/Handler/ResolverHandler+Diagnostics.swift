import Core
import Foundation
import Logging
import OpenAPIRuntime
import ResolverAPI
@_spi(Resolver) import ResolverWire
import ServerStorage
import Tokens
import BeaconFrames

/// Beacon diagnostics: what clients observe of the project's beacons, kept per
/// beacon, and the alerts derived from it.
extension ResolverHandler {
  func getBeaconDiagnostics(_ input: Operations.GetBeaconDiagnostics.Input) async throws
    -> Operations.GetBeaconDiagnostics.Output
  {
    let project = try RequestContext.required().project
    let name = try Self.pathName(input.path.name, field: "name")
    let (now, settings) = (now(), configuration.diagnostics)
    let found = try await read { store in
      try store.observations.diagnostics(
        project: project, beacon: name, now: now, settings: settings)
    }
    guard let found else {
      throw APIFailure.notFound("no beacon \(name) in this project (or it is decommissioned)")
    }
    return .ok(.init(body: .json(Self.wire(found))))
  }

  func listDiagnostics(_ input: Operations.ListDiagnostics.Input) async throws
    -> Operations.ListDiagnostics.Output
  {
    let project = try RequestContext.required().project
    let query = input.query
    let alert = query.alert.flatMap { DiagnosticAlert(rawValue: $0.rawValue) }
    let size = query.pageSize ?? Self.maximumBeaconPage
    guard (1...Self.maximumBeaconPage).contains(size) else {
      throw APIFailure.badRequest("pageSize must be 1 to \(Self.maximumBeaconPage), got \(size)")
    }
    let after = try query.pageToken.map(Self.diagnosticsCursor)
    let (now, settings) = (now(), configuration.diagnostics)
    let (page, more) = try await read { store in
      try store.observations.listDiagnostics(
        project: project, alert: alert, after: after, limit: size, now: now, settings: settings)
    }
    let next = more ? page.last.map { Self.diagnosticsToken(after: $0.beaconName) } : nil
    return .ok(.init(body: .json(.init(diagnostics: page.map(Self.wire), nextPageToken: next))))
  }

  /// Records what a `getforobserved` observed of the project's own beacons: each beacon's
  /// observation (at most once a minute, ``ObservationThrottle``) and the telemetry heard with
  /// it. A failure is logged, not answered: the attachments are what the client asked for.
  func recordObservations(
    project: String, observed: [BeaconID: BeaconRecord],
    telemetry: [BeaconID: BeaconTelemetryReading],
    now: Date
  ) async {
    var byBeacon: [String: BeaconTelemetryReading?] = [:]
    for (id, record) in observed {
      let heard = telemetry[id]
      if heard != nil || byBeacon[record.name] == nil { byBeacon[record.name] = .some(heard) }
    }
    guard !byBeacon.isEmpty else { return }
    let admitted = Set(
      await observations.admit(project: project, beacons: byBeacon.keys.sorted(), now: now))
    let records = byBeacon.sorted { $0.key < $1.key }.compactMap { name, heard in
      heard != nil || admitted.contains(name)
        ? BeaconObservationRecord(beacon: name, telemetry: heard) : nil
    }
    guard !records.isEmpty else { return }
    let settings = configuration.diagnostics
    do {
      try await storage.transaction { store in
        try store.observations.recordObservations(
          project: project, records, now: now, settings: settings)
      }
    } catch {
      logger.warning(
        "beacon observations not recorded",
        metadata: ["beacons": "\(records.count)", "error": "\(String(reflecting: error))"])
    }
  }

  /// The telemetry of an observation: a plain or encrypted Eddystone-TLM frame, base64.
  /// - Throws: 400 naming `field` for anything else.
  static func telemetry(_ text: String, field: String) throws -> BeaconTelemetryReading {
    let bytes: [UInt8]
    do { bytes = try StrictBase64.decode(text, field: field) } catch {
      throw APIFailure.badRequest(error.description)
    }
    do {
      if bytes.count == EddystoneEncryptedTLM.length {
        _ = try EddystoneEncryptedTLM(frame: bytes)
        return .encrypted(bytes)
      }
      let frame = try EddystoneTLM(frame: bytes)
      return .plain(
        batteryMillivolts: frame.battery.map { Int($0) },
        temperatureCelsius: frame.temperatureCelsius,
        advertisingCount: Int64(frame.advertisingCount),
        uptimeSeconds: Double(frame.uptimeDeciseconds) / 10)
    } catch {
      throw APIFailure.badRequest(
        "\(field) must be an Eddystone-TLM frame (14 bytes, or 18 encrypted, from the frame "
          + "type 0x20 on): \(error)")
    }
  }

  static func wire(_ diagnostics: BeaconDiagnostics) -> Components.Schemas.Diagnostics {
    .init(
      beaconName: diagnostics.beaconName, lastObservedAt: diagnostics.lastObservedAt,
      telemetryAt: diagnostics.telemetryAt, batteryMillivolts: diagnostics.batteryMillivolts,
      temperatureCelsius: diagnostics.temperatureCelsius,
      advertisingCount: diagnostics.advertisingCount, uptimeSeconds: diagnostics.uptimeSeconds,
      encryptedTelemetry: diagnostics.encryptedTelemetry.map(StrictBase64.encode),
      batteryTrendMillivoltsPerDay: diagnostics.batteryTrendMillivoltsPerDay,
      estimatedLowBatteryDate: diagnostics.estimatedLowBatteryAt,
      alerts: diagnostics.alerts.compactMap {
        Components.Schemas.DiagnosticAlert(rawValue: $0.rawValue)
      })
  }

  /// A diagnostics page token: the last beacon name of the page, base64url.
  static func diagnosticsToken(after name: String) -> String {
    base64URL("d." + name)
  }

  /// The beacon name a diagnostics page token continues after.
  /// - Throws: 400 for a token this server did not make.
  static func diagnosticsCursor(_ token: String) throws -> String {
    guard let text = text(ofBase64URL: token), text.hasPrefix("d.") else {
      throw APIFailure.badRequest("pageToken is not one this server gave; start without it")
    }
    let name = String(text.dropFirst(2))
    do { try TextRules.check(name, field: "pageToken", maximumBytes: maximumPathNameBytes) } catch {
      throw APIFailure.badRequest("pageToken is not one this server gave; start without it")
    }
    return name
  }
}
