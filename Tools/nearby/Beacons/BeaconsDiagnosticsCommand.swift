import ArgumentParser
import Foundation
import OpenAPIRuntime
import ResolverAPI
import BeaconFrames

/// `nearby beacons diagnostics`: the beacons' health as the server keeps it.
struct BeaconsDiagnosticsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "diagnostics",
    abstract: "Show beacons' health: last observed, latest telemetry, battery trend, alerts.",
    discussion: """
      The apps of the project forward what they hear of its beacons (Eddystone-TLM with the
      beacon's id); the server keeps the latest per beacon and raises lowBattery and
      lowActivity alerts. One beacon by name, or every beacon, page after page:
        nearby beacons diagnostics --alert lowBattery
        nearby beacons diagnostics 'eddystone!00112233445566778899aabbccddeeff' --json
      """)

  @OptionGroup var server: BeaconServerOptions
  @Argument(help: "One beacon's name (kind!hex); none: every beacon of the project.")
  var name: String?
  @Option(help: "Only beacons raising this alert now: lowBattery or lowActivity.")
  var alert: DiagnosticAlertArgument?

  func validate() throws {
    if name != nil, alert != nil {
      throw ValidationError("--alert filters the list of every beacon; give a name or --alert")
    }
  }

  func run() async throws {
    try await BeaconServer.run {
      let connection = try await BeaconServer.connect(server)
      if let name {
        let found: Components.Schemas.Diagnostics
        switch try await connection.client.getBeaconDiagnostics(path: .init(name: name)) {
        case .ok(let ok): found = try ok.body.json
        case .badRequest(let answer): throw connection.refused(400, try? answer.body.json)
        case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
        case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
        case .notFound(let answer): throw connection.refused(404, try? answer.body.json)
        case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
        case .undocumented(let status, _): throw connection.refused(status, nil)
        }
        print(server.json ? try BeaconServer.json(found) : Self.text(found))
        return
      }
      var token: String?
      repeat {
        let page: Components.Schemas.DiagnosticsPage
        switch try await connection.client.listDiagnostics(
          query: .init(alert: alert?.wire, pageToken: token))
        {
        case .ok(let ok): page = try ok.body.json
        case .badRequest(let answer): throw connection.refused(400, try? answer.body.json)
        case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
        case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
        case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
        case .undocumented(let status, _): throw connection.refused(status, nil)
        }
        for diagnostics in page.diagnostics {
          print(server.json ? try BeaconServer.json(diagnostics) : Self.text(diagnostics))
        }
        token = page.nextPageToken
      } while token != nil
    }
  }

  /// One line: name, battery (with its trend), temperature, last observed, alerts.
  static func text(_ diagnostics: Components.Schemas.Diagnostics) -> String {
    let time = Date.ISO8601FormatStyle()
    var battery = diagnostics.batteryMillivolts.map { "battery \($0) mV" } ?? "battery unknown"
    if let trend = diagnostics.batteryTrendMillivoltsPerDay {
      battery += String(format: " (%+.1f mV/day", trend)
      if let date = diagnostics.estimatedLowBatteryDate {
        battery += ", low by \(date.formatted(time))"
      }
      battery += ")"
    }
    let fields = [
      diagnostics.beaconName, battery,
      diagnostics.temperatureCelsius.map { String(format: "%.1f °C", $0) },
      diagnostics.encryptedTelemetry.map { _ in "encrypted telemetry" },
      "last observed " + (diagnostics.lastObservedAt.map { $0.formatted(time) } ?? "never"),
      diagnostics.alerts.isEmpty
        ? "no alert" : "alerts: " + diagnostics.alerts.map(\.rawValue).joined(separator: ", "),
    ]
    return fields.compactMap { $0 }.joined(separator: "\t")
  }
}

/// `--alert`: an alert the server raises.
enum DiagnosticAlertArgument: String, ExpressibleByArgument, CaseIterable {
  case lowBattery, lowActivity

  var wire: Components.Schemas.DiagnosticAlert {
    switch self {
    case .lowBattery: .lowBattery
    case .lowActivity: .lowActivity
    }
  }
}
