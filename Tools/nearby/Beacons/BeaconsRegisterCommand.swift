import ArgumentParser
import Foundation
import OpenAPIRuntime
import ResolverAPI
import Tokens
import BeaconFrames

/// `nearby beacons register`: registers a beacon with the resolver server.
struct BeaconsRegisterCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "register",
    abstract: "Register a beacon with the resolver server for the API key's project.",
    discussion: """
      Give exactly one id: --uid NAMESPACE:INSTANCE (20 + 12 hex digits), --ibeacon \
      UUID:MAJOR:MINOR, --altbeacon HEX (40 hex digits), or an Eddystone-EID beacon with \
      --eid-key (its 32-hex-digit identity key), --eid-exponent K (0-15), --eid HEX (the \
      16-hex-digit id it broadcasts now) and --eid-clock N (its time counter now, default 0). \
      The server checks that the key, exponent and clock produce that id and keeps the key; it \
      never shows it again. By key exchange, give --eid-beacon-key (the beacon's Curve25519 \
      public key, 64 hex digits) instead of --eid-key: the server derives the identity key \
      from it and its own key (`nearby beacons eid-params` shows the server's public key, \
      which the beacon needs), so the identity key never travels. Prints the beacon's name, \
      which attach and delete take.

      Examples:
        nearby beacons register --uid 00112233445566778899:aabbccddeeff --description door
        nearby beacons register --eid-key 000102030405060708090a0b0c0d0e0f --eid-exponent 10 \
      --eid-clock 65280 --eid 3439c83a6564bfdf
      """)

  @OptionGroup var server: BeaconServerOptions

  @Option(help: ArgumentHelp("An Eddystone-UID beacon.", valueName: "namespace:instance"))
  var uid: String?
  @Option(help: ArgumentHelp("An iBeacon.", valueName: "uuid:major:minor"))
  var ibeacon: String?
  @Option(help: ArgumentHelp("An AltBeacon's 20-byte id.", valueName: "hex"))
  var altbeacon: String?
  @Option(help: ArgumentHelp("An Eddystone-EID beacon's identity key.", valueName: "hex"))
  var eidKey: String?
  @Option(
    help: ArgumentHelp(
      "An Eddystone-EID beacon's Curve25519 public key (key exchange).", valueName: "hex"))
  var eidBeaconKey: String?
  @Option(help: ArgumentHelp("The EID rotation exponent K (0-15).", valueName: "k"))
  var eidExponent: Int?
  @Option(help: ArgumentHelp("The EID beacon's time counter now, in seconds.", valueName: "n"))
  var eidClock: UInt32?
  @Option(help: ArgumentHelp("The EID the beacon broadcasts now.", valueName: "hex"))
  var eid: String?
  @Option(help: ArgumentHelp("A note (up to 256 characters).", valueName: "text"))
  var description: String?

  func validate() throws {
    let given = [uid, ibeacon, altbeacon, eidKey, eidBeaconKey].compactMap { $0 }.count
    guard given == 1 else {
      throw ValidationError(
        "give exactly one of --uid, --ibeacon, --altbeacon, --eid-key or --eid-beacon-key "
          + "(got \(given))")
    }
    if eidKey == nil, eidBeaconKey == nil, eidExponent != nil || eidClock != nil || eid != nil {
      throw ValidationError(
        "--eid-exponent, --eid-clock and --eid go with --eid-key or --eid-beacon-key")
    }
    if let description, description.count > 256 {
      throw ValidationError(
        "--description is \(description.count) characters; the limit is 256 characters")
    }
    _ = try registration()
  }

  /// The request body from the options; `serviceKey` (base64, from `GET /v1/eidparams`) for
  /// a registration by key exchange.
  func registration(serviceKey: String? = nil) throws -> Components.Schemas.BeaconRegistration {
    var eidParameters: Components.Schemas.EIDRegistration?
    let advertised: Components.Schemas.AdvertisedID
    if let uid {
      let parts = uid.split(separator: ":", omittingEmptySubsequences: false)
      guard parts.count == 2 else {
        throw ValidationError(
          "--uid takes NAMESPACE:INSTANCE (20 and 12 hex digits), got \"\(uid)\"")
      }
      let namespace = try Self.hex(String(parts[0]), bytes: 10, option: "--uid namespace")
      let instance = try Self.hex(String(parts[1]), bytes: 6, option: "--uid instance")
      advertised = .init(_type: .eddystone, id: Hex.encode(namespace + instance))
    } else if let ibeacon {
      let parts = ibeacon.split(separator: ":", omittingEmptySubsequences: false)
      guard parts.count == 3, let major = UInt16(parts[1]), let minor = UInt16(parts[2]) else {
        throw ValidationError(
          "--ibeacon takes UUID:MAJOR:MINOR with MAJOR and MINOR 0-65535, got \"\(ibeacon)\"")
      }
      let uuid = try Self.hex(String(parts[0]), bytes: 16, option: "--ibeacon UUID")
      let tail = [UInt8(major >> 8), UInt8(major & 0xff), UInt8(minor >> 8), UInt8(minor & 0xff)]
      advertised = .init(_type: .ibeacon, id: Hex.encode(uuid + tail))
    } else if let altbeacon {
      advertised = .init(
        _type: .altbeacon, id: Hex.encode(try Self.hex(altbeacon, bytes: 20, option: "--altbeacon"))
      )
    } else if eidKey != nil || eidBeaconKey != nil {
      let option = eidKey != nil ? "--eid-key" : "--eid-beacon-key"
      guard let eidExponent, (0...15).contains(eidExponent) else {
        throw ValidationError("\(option) needs --eid-exponent K, K from 0 to 15")
      }
      guard let eid else {
        throw ValidationError(
          "\(option) needs --eid HEX, the 8-byte id the beacon broadcasts now")
      }
      advertised = .init(
        _type: .eddystoneEid, id: Hex.encode(try Self.hex(eid, bytes: 8, option: "--eid")))
      if let eidKey {
        let key = try Self.hex(eidKey, bytes: 16, option: "--eid-key")
        eidParameters = .init(
          identityKey: Hex.encode(key), rotationExponent: eidExponent,
          clockValue: Int64(eidClock ?? 0))
      } else if let eidBeaconKey {
        let key = try Self.hex(eidBeaconKey, bytes: 32, option: "--eid-beacon-key")
        eidParameters = .init(
          beaconEcdhPublicKey: Data(key).base64EncodedString(),
          serviceEcdhPublicKey: serviceKey, rotationExponent: eidExponent,
          clockValue: Int64(eidClock ?? 0))
      }
    } else {
      throw ValidationError("give one of --uid, --ibeacon, --altbeacon or --eid-key")
    }
    return .init(advertisedId: advertised, description: description, eid: eidParameters)
  }

  func run() async throws {
    try await BeaconServer.run {
      let connection = try await BeaconServer.connect(server)
      let serviceKey =
        eidBeaconKey == nil
        ? nil : try await BeaconsEIDParamsCommand.parameters(connection).serviceEcdhPublicKey
      let body = try registration(serviceKey: serviceKey)
      let beacon: Components.Schemas.Beacon
      switch try await connection.client.registerBeacon(body: .json(body)) {
      case .created(let created): beacon = try created.body.json
      case .badRequest(let answer): throw connection.refused(400, try? answer.body.json)
      case .unauthorized(let answer): throw connection.refused(401, try? answer.body.json)
      case .forbidden(let answer): throw connection.refused(403, try? answer.body.json)
      case .conflict(let answer): throw connection.refused(409, try? answer.body.json)
      case .contentTooLarge(let answer): throw connection.refused(413, try? answer.body.json)
      case .unprocessableContent(let answer): throw connection.refused(422, try? answer.body.json)
      case .tooManyRequests(let answer): throw connection.refused(429, try? answer.body.json)
      case .undocumented(let status, _): throw connection.refused(status, nil)
      }
      let line = server.json ? try BeaconServer.json(beacon) : beacon.beaconName
      print(line)
    }
  }

  /// Exactly `bytes` bytes of hex, or a message naming the option and the length.
  static func hex(_ text: String, bytes: Int, option: String) throws -> [UInt8] {
    let value = try HexArgument.bytes(text, option: option)
    guard value.count == bytes else {
      throw ValidationError(
        "\(option) is \(bytes) bytes (\(bytes * 2) hex digits), got \(value.count) bytes")
    }
    return value
  }
}
