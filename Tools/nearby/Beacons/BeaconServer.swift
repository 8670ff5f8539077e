import CommandLineSupport
import ArgumentParser
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import ResolverAPI
@_spi(Resolver) import ResolverWire

/// Where `nearby beacons register/attach/list/delete` find the resolver and its key, as
/// `nearby publish --resolver local` does: `--server`, else `$NEARBY_SERVER`, else the local
/// one (started if none answers); the key from `--api-key`, `$NEARBY_API_KEY`, or the local
/// server's key file.
struct BeaconServerOptions: ParsableArguments {
  @OptionGroup var resolver: ResolverOptions

  @Flag(help: "Print JSON (one object a line) instead of text.")
  var json = false
}

/// The generated API client with the project key on every call, and the refusals of the
/// server as messages with their exit codes.
struct BeaconServer {
  let client: Client
  let url: URL

  static func connect(_ options: BeaconServerOptions) async throws -> BeaconServer {
    let connection = try await ResolverConnection.resolve(
      server: options.resolver.serverOrEnvironment, apiKey: options.resolver.apiKey,
      allowInsecureHTTP: options.resolver.allowInsecureHTTP,
      note: { StandardStreams.error("note: \($0)\n") })
    return BeaconServer(
      client: Client(
        serverURL: connection.url, configuration: .nearby,
        transport: AsyncHTTPClientTransport(), middlewares: [APIKeyHeader(key: connection.apiKey)]
      ),
      url: connection.url)
  }

  /// Runs a command's work, printing an `ExitFailure` as "error: …" and exiting with its code.
  static func run(_ body: () async throws -> Void) async throws {
    do { try await body() } catch let failure as ExitFailure {
      StandardStreams.error("error: \(failure.description)\n")
      throw failure.code
    }
  }

  /// A refusal of the server, with the message it gave.
  func refused(_ status: Int, _ error: Components.Schemas._Error?) -> ExitFailure {
    let message = error.map { "\($0.message) (\($0.error))" } ?? "HTTP \(status)"
    switch status {
    case 401:
      return ExitFailure(
        "\(url.absoluteString) refused the API key: \(message); pass the project's key with "
          + "--api-key or NEARBY_API_KEY", code: ExitCodes.noPermission)
    case 403:
      return ExitFailure(message, code: ExitCodes.noPermission)
    case 429:
      return ExitFailure("rate limited: \(message); try again shortly", code: ExitCodes.failure)
    default:
      return ExitFailure(message, code: ExitCodes.failure)
    }
  }

  /// A beacon as a text line: name, description, then one indented line per attachment.
  static func text(_ beacon: Components.Schemas.Beacon) -> String {
    var lines = [
      [
        beacon.beaconName, beacon.status.flatMap { $0 == .active ? nil : $0.rawValue },
        beacon.eid.map { "eid rotation exponent \($0.rotationExponent)" }, beacon.description,
      ].compactMap { $0 }.joined(separator: "\t")
    ]
    for attachment in beacon.attachments {
      lines.append(
        "  \(attachment.attachmentName)\t\(attachment.namespacedType)\t"
          + (Data(base64Encoded: attachment.data).map { "\($0.count) bytes" } ?? "bad base64"))
    }
    return lines.joined(separator: "\n")
  }

  static func json(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
  }
}

/// Adds `X-Nearby-API-Key` to every request.
private struct APIKeyHeader: ClientMiddleware {
  let key: String

  func intercept(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
    next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
  ) async throws -> (HTTPResponse, HTTPBody?) {
    var request = request
    request.headerFields[HTTPField.Name(ResolverContract.apiKeyHeader)!] = key
    return try await next(request, body, baseURL)
  }
}
