import Tokens
import BeaconFrames

/// The mixed set of advertisements `nearby bench beacons` parses, and the three ways a scanner
/// parses them. Depends on Tokens only.
struct BeaconsWorkload {
  /// How a payload is parsed.
  enum Path: String, CaseIterable, Encodable {
    /// A whole advertising payload into an array: `BeaconFrame.frames(inAdvertisement:)`.
    case frames = "advertisement-array"
    /// A whole advertising payload, visited: `BeaconFrame.forEach(inAdvertisement:_:)`.
    case forEach = "advertisement-visit"
    /// The service-data or manufacturer-data entry BlueZ reports, keyed by its 128-bit UUID
    /// string or company identifier: `BeaconFrame.parse(serviceData:uuid:)` and
    /// `BeaconFrame.parse(manufacturerData:companyID:)`.
    case blueZ = "bluez-entry"
  }

  /// One BlueZ property entry.
  enum Entry {
    case serviceData(uuid: String, [UInt8])
    case manufacturerData(companyID: UInt16, [UInt8])
  }

  let advertisements: [[UInt8]]
  let entries: [Entry]

  /// `count` payloads: evenly the seven beacon frames and one in eight without a beacon.
  init(count: Int, using generator: inout some RandomNumberGenerator) {
    var advertisements: [[UInt8]] = []
    var entries: [Entry] = []
    for index in 0..<count {
      if let frame = Self.frame(index % 8, using: &generator) {
        advertisements.append(frame.advertisement)
        if let data = frame.serviceData {
          entries.append(.serviceData(uuid: ADStructure.uuidString(Eddystone.serviceUUID), data))
        } else if let (companyID, data) = frame.manufacturerData {
          entries.append(.manufacturerData(companyID: companyID, data))
        }
      } else {
        // A phone: Flags, Apple "nearby info" manufacturer data, a short name.
        advertisements.append(
          [2, 0x01, 0x1a, 7, 0xff, 0x4c, 0x00, 0x10, 0x02, 0x0b, 0x1c, 6, 0x09]
            + Array("Phone".utf8))
        entries.append(.manufacturerData(companyID: 0x004c, [0x10, 0x02, 0x0b, 0x1c]))
      }
    }
    self.advertisements = advertisements
    self.entries = entries
  }

  /// Parses the whole set once along `path`; returns the number of beacons found, or a
  /// negative number when a payload failed to parse.
  func run(_ path: Path) -> Int {
    var found = 0
    switch path {
    case .frames:
      for payload in advertisements {
        found &+= (try? BeaconFrame.frames(inAdvertisement: payload))?.count ?? -1_000_000
      }
    case .forEach:
      for payload in advertisements {
        do throws(BeaconFrameError) {
          try BeaconFrame.forEach(inAdvertisement: payload) { _ in found &+= 1 }
        } catch {
          found &-= 1_000_000
        }
      }
    case .blueZ:
      for entry in entries {
        let frame: BeaconFrame??
        switch entry {
        case .serviceData(let uuid, let data):
          frame = try? BeaconFrame.parse(serviceData: data, uuid: uuid)
        case .manufacturerData(let companyID, let data):
          frame = try? BeaconFrame.parse(manufacturerData: data, companyID: companyID)
        }
        switch frame {
        case .some(.some): found &+= 1
        case .some(.none): break
        case .none: found &-= 1_000_000
        }
      }
    }
    return found
  }

  /// A random frame of kind `index` (0–6), `nil` for 7 (no beacon).
  static func frame(_ index: Int, using generator: inout some RandomNumberGenerator)
    -> BeaconFrame?
  {
    func bytes(_ count: Int) -> BeaconBytes {
      try! BeaconBytes((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
    let power = Int8.random(in: -100...20, using: &generator)
    switch index {
    case 0:
      return .eddystoneUID(
        try! EddystoneUID(namespace: bytes(10), instance: bytes(6), txPower: power))
    case 1:
      let path = String(UInt32.random(in: 0...UInt32.max, using: &generator), radix: 36)
      return .eddystoneURL(
        try! EddystoneURL(url: "https://example.com/" + path, txPower: power))
    case 2:
      return .eddystoneTLM(
        EddystoneTLM(
          batteryMillivolts: UInt16.random(in: 2_000...3_300, using: &generator),
          temperatureCelsius: Double.random(in: -20...40, using: &generator),
          advertisingCount: UInt32.random(in: 0...UInt32.max, using: &generator),
          uptimeDeciseconds: UInt32.random(in: 0...UInt32.max, using: &generator)))
    case 3:
      return .eddystoneEncryptedTLM(
        try! EddystoneEncryptedTLM(encrypted: bytes(12), salt: bytes(2), mic: bytes(2)))
    case 4:
      return .eddystoneEID(try! EddystoneEID(ephemeralID: bytes(8), txPower: power))
    case 5:
      return .iBeacon(
        try! IBeacon(
          proximityUUID: bytes(16), major: UInt16.random(in: 0...UInt16.max, using: &generator),
          minor: UInt16.random(in: 0...UInt16.max, using: &generator), measuredPower: power))
    case 6:
      return .altBeacon(
        try! AltBeacon(companyID: 0x0118, beaconID: bytes(20), referenceRSSI: power))
    default:
      return nil
    }
  }
}
