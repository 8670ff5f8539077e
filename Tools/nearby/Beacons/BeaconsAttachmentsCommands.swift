import ArgumentParser
import Foundation
import OpenAPIRuntime
import ResolverAPI

/// `nearby beacons attachments`: one beacon's attachments, all or of one type.
struct BeaconsAttachmentsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "attachments",
    abstract: "List a beacon's attachments, all or of one namespaced type.",
    discussion: """
      One line each: name, namespace/type, size (--json: the attachment with its data):
        nearby beacons attachments 'eddystone!00112233445566778899aabbccddeeff' --type cafe/*
      """)

  @OptionGroup var server: BeaconServerOptions
  @Argument(help: "The beacon's name (kind!hex).") var name: String
  @Option(help: ArgumentHelp("Only attachments of this type.", valueName: "ns/type|ns/*"))
  var type: String?

  func validate() throws { try NamespacedTypeArgument.check(type, option: "--type") }

  func run() async throws {
    try await BeaconServer.run {
      let connection = try await BeaconServer.connect(server)
      let attachments: [Components.Schemas.Attachment]
      switch try await connection.client.listAttachments(
        path: .init(name: name), query: .init(namespacedType: type))
      {
      case .ok(let ok): attachments = try ok.body.json.attachments
      case .badRequest(let answer): throw connection.refused(400, try? answer.body.json)
      case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
      case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
      case .notFound(let answer): throw connection.refused(404, try? answer.body.json)
      case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
      case .undocumented(let status, _): throw connection.refused(status, nil)
      }
      for attachment in attachments {
        print(
          server.json
            ? try BeaconServer.json(attachment)
            : "\(attachment.attachmentName)\t\(attachment.namespacedType)\t"
              + (Data(base64Encoded: attachment.data).map { "\($0.count) bytes" } ?? "bad base64"))
      }
    }
  }
}

/// `nearby beacons detach`: removes a beacon's attachments of one type, or all of them.
struct BeaconsDetachCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "detach",
    abstract: "Remove a beacon's attachments of one namespaced type (or all, with --all --yes).",
    discussion: """
      Prints how many were removed:
        nearby beacons detach 'eddystone!00112233445566778899aabbccddeeff' --type cafe/menu
      """)

  @OptionGroup var server: BeaconServerOptions
  @Argument(help: "The beacon's name (kind!hex).") var name: String
  @Option(help: ArgumentHelp("The attachments of this type.", valueName: "ns/type|ns/*"))
  var type: String?
  @Flag(help: "Every attachment of the beacon (needs --yes).") var all = false
  @Flag(help: "Confirm removing every attachment.") var yes = false

  func validate() throws {
    guard (type == nil) == all else {
      throw ValidationError("give --type ns/type (or ns/*), or --all to remove every attachment")
    }
    if all, !yes {
      throw ValidationError("--all removes every attachment of the beacon; add --yes to go on")
    }
    try NamespacedTypeArgument.check(type, option: "--type")
  }

  func run() async throws {
    try await BeaconServer.run {
      let connection = try await BeaconServer.connect(server)
      let deleted: Int
      switch try await connection.client.batchDeleteAttachments(
        path: .init(name: name), query: .init(namespacedType: type))
      {
      case .ok(let ok): deleted = try ok.body.json.deletedCount
      case .badRequest(let answer): throw connection.refused(400, try? answer.body.json)
      case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
      case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
      case .notFound(let answer): throw connection.refused(404, try? answer.body.json)
      case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
      case .undocumented(let status, _): throw connection.refused(status, nil)
      }
      print(server.json ? #"{"deletedCount":\#(deleted)}"# : "\(deleted) removed")
    }
  }
}

/// A `ns/type` or `ns/*` option, checked before the server is asked.
enum NamespacedTypeArgument {
  static func check(_ value: String?, option: String) throws {
    guard let value else { return }
    let parts = value.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
      throw ValidationError("\(option) must be namespace/type or namespace/*, got \"\(value)\"")
    }
  }
}
