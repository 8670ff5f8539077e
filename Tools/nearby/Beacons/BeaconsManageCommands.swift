import ArgumentParser
import Foundation
import OpenAPIRuntime
import ResolverAPI
@_spi(Resolver) import ResolverWire

/// `nearby beacons attach`: adds an attachment to a registered beacon.
struct BeaconsAttachCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "attach",
    abstract: "Attach data (up to 1024 bytes) under namespace/type to a registered beacon.",
    discussion: """
      Example:
        nearby beacons attach 'eddystone!00112233445566778899aabbccddeeff' --type cafe/menu \
      --data "soup of the day"
      """)

  @OptionGroup var server: BeaconServerOptions
  @Argument(help: "The beacon's name, as register printed it (kind!hex).") var name: String
  @Option(help: ArgumentHelp("namespace/type of the attachment.", valueName: "ns/type"))
  var type: String
  @Option(help: ArgumentHelp("The data as text (UTF-8).", valueName: "text")) var data: String?
  @Option(help: ArgumentHelp("The data from a file.", valueName: "path")) var dataFile: String?
  @Option(help: ArgumentHelp("The data as base64.", valueName: "base64")) var dataBase64: String?
  @Option(
    help: ArgumentHelp(
      "Deliver it only while the beacon is estimated this close (0.1 to 1000 m).",
      valueName: "metres"))
  var maxDistance: Double?

  static let maximumBytes = 1024

  func validate() throws {
    guard [data, dataFile, dataBase64].compactMap({ $0 }).count == 1 else {
      throw ValidationError("give exactly one of --data, --data-file or --data-base64")
    }
    let parts = type.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
      throw ValidationError("--type must be namespace/type, got \"\(type)\"")
    }
    if let maxDistance, !(0.1...1000).contains(maxDistance) {
      throw ValidationError("--max-distance must be 0.1 to 1000 metres, got \(maxDistance)")
    }
  }

  func bytes() throws -> [UInt8] {
    let value: [UInt8]
    if let data {
      value = Array(data.utf8)
    } else if let dataFile {
      guard let contents = FileManager.default.contents(atPath: dataFile) else {
        throw ValidationError("--data-file: cannot read \(dataFile)")
      }
      value = Array(contents)
    } else if let dataBase64, let decoded = Data(base64Encoded: dataBase64) {
      value = Array(decoded)
    } else {
      throw ValidationError("--data-base64 is not valid base64")
    }
    guard value.count <= Self.maximumBytes else {
      throw ValidationError(
        "the attachment is \(value.count) bytes; the limit is \(Self.maximumBytes) bytes")
    }
    return value
  }

  func run() async throws {
    try await BeaconServer.run {
      let body = Components.Schemas.AttachmentInput(
        namespacedType: type, data: StrictBase64.encode(try bytes()),
        maxDistanceMeters: maxDistance)
      let connection = try await BeaconServer.connect(server)
      let output = try await connection.client.addAttachment(
        path: .init(name: name), body: .json(body))
      let attachment: Components.Schemas.Attachment
      switch output {
      case .created(let created): attachment = try created.body.json
      case .badRequest(let answer): throw connection.refused(400, try? answer.body.json)
      case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
      case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
      case .notFound(let answer): throw connection.refused(404, try? answer.body.json)
      case .contentTooLarge(let answer): throw connection.refused(413, try? answer.body.json)
      case .unprocessableContent(let answer): throw connection.refused(422, try? answer.body.json)
      case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
      case .undocumented(let status, _): throw connection.refused(status, nil)
      }
      let line = server.json ? try BeaconServer.json(attachment) : attachment.attachmentName
      print(line)
    }
  }
}

/// `nearby beacons list`: the project's beacons with their attachments.
struct BeaconsListCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract: "List the project's beacons and attachments (never an EID identity key).",
    discussion: """
      Every beacon, oldest first, page after page; the filters narrow the list:
        nearby beacons list --status inactive --property floor=2 --attachment-type cafe/*
      """)

  @OptionGroup var server: BeaconServerOptions
  @Option(help: "Only beacons of this status: active, inactive or decommissioned.")
  var status: BeaconStatusArgument?
  @Option(help: ArgumentHelp("Only beacons whose property has this value.", valueName: "key=value"))
  var property: String?
  @Option(
    help: ArgumentHelp("Only beacons with an attachment of this type.", valueName: "ns/type|ns/*"))
  var attachmentType: String?
  @Option(
    help: ArgumentHelp("Only beacons registered after this RFC 3339 time.", valueName: "time"))
  var registeredAfter: String?

  func run() async throws {
    try await BeaconServer.run {
      let connection = try await BeaconServer.connect(server)
      var token: String?
      repeat {
        let page: Components.Schemas.BeaconPage
        switch try await connection.client.listBeacons(
          query: .init(
            status: status.map(\.wire), property: property, attachmentType: attachmentType,
            registeredAfter: registeredAfter, pageToken: token))
        {
        case .ok(let ok): page = try ok.body.json
        case .badRequest(let answer): throw connection.refused(400, try? answer.body.json)
        case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
        case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
        case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
        case .undocumented(let status, _): throw connection.refused(status, nil)
        }
        for beacon in page.beacons {
          let line = server.json ? try BeaconServer.json(beacon) : BeaconServer.text(beacon)
          print(line)
        }
        token = page.nextPageToken
      } while token != nil
    }
  }
}

/// `nearby beacons delete`: removes a beacon and its attachments.
struct BeaconsDeleteCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "delete", abstract: "Remove a beacon and its attachments.")

  @OptionGroup var server: BeaconServerOptions
  @Argument(help: "The beacon's name (kind!hex).") var name: String

  func run() async throws {
    try await BeaconServer.run {
      let connection = try await BeaconServer.connect(server)
      switch try await connection.client.deleteBeacon(path: .init(name: name)) {
      case .noContent: return
      case .badRequest(let answer): throw connection.refused(400, try? answer.body.json)
      case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
      case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
      case .notFound(let answer): throw connection.refused(404, try? answer.body.json)
      case .conflict(let answer): throw connection.refused(409, try? answer.body.json)
      case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
      case .undocumented(let status, _): throw connection.refused(status, nil)
      }
    }
  }
}
