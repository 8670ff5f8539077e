import ArgumentParser
import Foundation
import OpenAPIRuntime
import ResolverAPI

/// A beacon status on the command line.
enum BeaconStatusArgument: String, ExpressibleByArgument, CaseIterable {
  case active, inactive, decommissioned

  var wire: Components.Schemas.BeaconStatus {
    switch self {
    case .active: .active
    case .inactive: .inactive
    case .decommissioned: .decommissioned
    }
  }
}

/// `nearby beacons update`: a beacon's status, description and metadata.
struct BeaconsUpdateCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "update",
    abstract: "Change a beacon's status, description or metadata (only what is given).",
    discussion: """
      --status inactive keeps the beacon and its attachments but stops serving them;
      --status decommissioned retires it for good (its attachments and EID key are deleted,
      its id can never be registered again) and needs --yes.
      Example:
        nearby beacons update 'eddystone!00112233445566778899aabbccddeeff' --place "Hall B" \
      --lat-lng 48.8584,2.2945 --indoor-level 2 --stability stable --property owner=cafe
      """)

  @OptionGroup var server: BeaconServerOptions
  @Argument(help: "The beacon's name (kind!hex).") var name: String
  @Option(help: "active, inactive or decommissioned.") var status: BeaconStatusArgument?
  @Option(help: "A new description.") var description: String?
  @Option(
    help: ArgumentHelp(
      "A property (repeat for more); the given ones replace all the beacon's properties.",
      valueName: "key=value"))
  var property: [String] = []
  @Option(help: "A place name or id.") var place: String?
  @Option(help: ArgumentHelp("Latitude and longitude in degrees.", valueName: "lat,lng"))
  var latLng: String?
  @Option(help: "The floor or level, as the building names it.") var indoorLevel: String?
  @Option(help: "stable, portable, mobile or roving.") var stability: String?
  @Flag(help: "Confirm --status decommissioned (it cannot be undone).") var yes = false

  func validate() throws {
    if status == .decommissioned, !yes {
      throw ValidationError(
        "--status decommissioned cannot be undone: the beacon's attachments and EID key are "
          + "deleted and its id can never be registered again; add --yes to go on")
    }
    _ = try properties()
    _ = try coordinates()
    if let stability, Components.Schemas.ExpectedStability(rawValue: stability) == nil {
      throw ValidationError(
        "--stability must be stable, portable, mobile or roving, got \"\(stability)\"")
    }
  }

  func properties() throws -> [String: String]? {
    guard !property.isEmpty else { return nil }
    var result: [String: String] = [:]
    for entry in property {
      guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
        throw ValidationError("--property must be key=value, got \"\(entry)\"")
      }
      result[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
    }
    return result
  }

  func coordinates() throws -> Components.Schemas.LatLng? {
    guard let latLng else { return nil }
    let parts = latLng.split(separator: ",").map {
      Double($0.trimmingCharacters(in: .whitespaces))
    }
    guard parts.count == 2, let latitude = parts[0], let longitude = parts[1] else {
      throw ValidationError("--lat-lng must be two numbers: lat,lng, got \"\(latLng)\"")
    }
    return .init(latitude: latitude, longitude: longitude)
  }

  func run() async throws {
    try await BeaconServer.run {
      let connection = try await BeaconServer.connect(server)
      let body = Components.Schemas.BeaconUpdate(
        description: description, status: status?.wire,
        properties: try properties().map { .init(additionalProperties: $0) }, place: place,
        latLng: try coordinates(), indoorLevel: indoorLevel,
        expectedStability: stability.flatMap(Components.Schemas.ExpectedStability.init))
      let beacon: Components.Schemas.Beacon
      switch try await connection.client.updateBeacon(path: .init(name: name), body: .json(body)) {
      case .ok(let ok): beacon = try ok.body.json
      case .badRequest(let answer): throw connection.refused(400, try? answer.body.json)
      case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
      case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
      case .notFound(let answer): throw connection.refused(404, try? answer.body.json)
      case .conflict(let answer): throw connection.refused(409, try? answer.body.json)
      case .contentTooLarge(let answer): throw connection.refused(413, try? answer.body.json)
      case .unprocessableContent(let answer): throw connection.refused(422, try? answer.body.json)
      case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
      case .undocumented(let status, _): throw connection.refused(status, nil)
      }
      print(server.json ? try BeaconServer.json(beacon) : BeaconServer.text(beacon))
    }
  }
}
