import CommandLineSupport
import ArgumentParser
import Foundation
import Tokens
import BeaconFrames

/// `nearby beacons parse`: decodes beacon frames given as hex.
struct BeaconsParseCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "parse",
    abstract:
      "Decode beacon frames given as hex: a whole advertisement, service or manufacturer data.",
    discussion: """
      Prints each beacon found, in the order given: one line of key=value fields, or with \
      --json one JSON object a line with every parsed field and a "kind" (eddystone-uid, \
      eddystone-url, eddystone-tlm, eddystone-eid, ibeacon, altbeacon). Each option may be \
      repeated. Hex may start with 0x and have ":", "-" or spaces between bytes.

      --adv HEX                    a whole advertising payload (AD structures)
      --service-data UUID=HEX      a service-data entry as BlueZ reports it; UUID is \
      0000feaa-0000-1000-8000-00805f9b34fb, feaa or 0xFEAA; HEX the bytes after the UUID
      --manufacturer-data ID=HEX   a manufacturer-data entry as BlueZ reports it; ID is the \
      company identifier in hex (004c or 0x004C); HEX the bytes after it

      Exit codes: 0 at least one beacon printed and every input well formed; 1 an input is a \
      malformed beacon frame or advertisement (the error names what is wrong; the beacons of \
      the other inputs are still printed); 2 the inputs are well formed but carry no beacon; \
      64 bad arguments (bad hex, UUID or company identifier).

      Example:
        nearby beacons parse --json --service-data feaa=00ee00112233445566778899aabbccddeeff0000
      """)

  @Option(name: .customLong("adv"), help: "A whole advertising payload in hex.")
  var advertisements: [String] = []

  @Option(name: .customLong("service-data"), help: "A service-data entry, UUID=HEX.")
  var serviceData: [String] = []

  @Option(name: .customLong("manufacturer-data"), help: "A manufacturer-data entry, ID=HEX.")
  var manufacturerData: [String] = []

  @Flag(help: "Print one JSON object a line.")
  var json = false

  /// One input, checked.
  enum Input {
    case advertisement([UInt8])
    case serviceData(uuid: String, [UInt8])
    case manufacturerData(companyID: UInt16, [UInt8])
  }

  func inputs() throws -> [Input] {
    var inputs: [Input] = []
    for text in advertisements {
      inputs.append(.advertisement(try HexArgument.bytes(text, option: "--adv")))
    }
    for text in serviceData {
      let (uuid, bytes) = try HexArgument.keyAndBytes(
        text, option: "--service-data", key: "UUID")
      do {
        _ = try ADStructure.uuid16(uuid)
      } catch {
        throw ValidationError("--service-data: \(error)")
      }
      inputs.append(.serviceData(uuid: String(uuid), bytes))
    }
    for text in manufacturerData {
      let (key, bytes) = try HexArgument.keyAndBytes(
        text, option: "--manufacturer-data", key: "ID")
      var digits = key
      if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
      guard (1...4).contains(digits.count), digits.allSatisfy(\.isHexDigit),
        let companyID = UInt16(digits, radix: 16)
      else {
        throw ValidationError(
          "--manufacturer-data: the company identifier is 1 to 4 hex digits (e.g. 004c), "
            + "got \"\(key)\"")
      }
      inputs.append(.manufacturerData(companyID: companyID, bytes))
    }
    return inputs
  }

  func validate() throws {
    guard !advertisements.isEmpty || !serviceData.isEmpty || !manufacturerData.isEmpty else {
      throw ValidationError("give at least one of --adv, --service-data, --manufacturer-data")
    }
    _ = try inputs()
  }

  func run() throws {
    var found = 0
    var malformed = 0
    for input in try inputs() {
      let frames: [BeaconFrame]
      do throws(BeaconFrameError) {
        switch input {
        case .advertisement(let bytes):
          frames = try BeaconFrame.frames(inAdvertisement: bytes)
        case .serviceData(let uuid, let bytes):
          frames = try BeaconFrame.parse(serviceData: bytes, uuid: uuid).map { [$0] } ?? []
        case .manufacturerData(let companyID, let bytes):
          frames =
            try BeaconFrame.parse(manufacturerData: bytes, companyID: companyID).map { [$0] } ?? []
        }
      } catch {
        malformed += 1
        StandardStreams.error("Error: \(input.label): \(error)\n")
        continue
      }
      for frame in frames {
        print(json ? JSONLine.encode(BeaconRecord(frame)) : BeaconRecord(frame).line)
      }
      found += frames.count
    }
    if malformed > 0 { throw ExitCode(1) }
    if found == 0 {
      StandardStreams.error("no beacon found in the input\n")
      throw ExitCode(2)
    }
  }
}

extension BeaconsParseCommand.Input {
  /// The option this input came from, for error messages.
  var label: String {
    switch self {
    case .advertisement: "--adv"
    case .serviceData(let uuid, _): "--service-data \(uuid)"
    case .manufacturerData(let companyID, _):
      "--manufacturer-data 0x" + String(companyID, radix: 16).leftPadded(to: 4)
    }
  }
}
