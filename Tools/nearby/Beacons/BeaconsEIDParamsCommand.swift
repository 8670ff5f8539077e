import ArgumentParser
import Foundation
import OpenAPIRuntime
import ResolverAPI
import Tokens
import BeaconFrames

/// `nearby beacons eid-params`: what an Eddystone-EID beacon registered by key exchange needs
/// from the server.
struct BeaconsEIDParamsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "eid-params",
    abstract: "Show the server's Curve25519 public key and the EID rotation exponents it takes.",
    discussion: """
      An Eddystone-EID beacon provisioned by key exchange gets the server's public key (hex \
      here, as beacon configuration tools take it), and the server gets the beacon's: \
      nearby beacons register --eid-beacon-key HEX --eid-exponent K --eid-clock N --eid HEX.
      """)

  @OptionGroup var server: BeaconServerOptions

  func run() async throws {
    try await BeaconServer.run {
      let parameters = try await Self.parameters(try await BeaconServer.connect(server))
      if server.json {
        print(try BeaconServer.json(parameters))
        return
      }
      let key = Data(base64Encoded: parameters.serviceEcdhPublicKey).map { Hex.encode(Array($0)) }
      print("service public key\t\(key ?? parameters.serviceEcdhPublicKey)")
      print(
        "rotation exponents\t\(parameters.minRotationPeriodExponent) to "
          + "\(parameters.maxRotationPeriodExponent)")
    }
  }

  /// `GET /v1/eidparams`.
  static func parameters(_ connection: BeaconServer) async throws
    -> Operations.GetEIDParams.Output.Ok.Body.JsonPayload
  {
    switch try await connection.client.getEIDParams() {
    case .ok(let ok): return try ok.body.json
    case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
    case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
    case .undocumented(let status, _): throw connection.refused(status, nil)
    }
  }
}
