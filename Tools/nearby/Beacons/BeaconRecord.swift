import Tokens
import BeaconFrames

/// A beacon frame's fields for printing: every parsed field under a stable name, as one JSON
/// object or one `kind key=value …` line.
struct BeaconRecord: Encodable {
  /// A field value: JSON number, string, boolean or null.
  enum Value: Encodable, CustomStringConvertible {
    case int(Int)
    case double(Double)
    case string(String)
    case bool(Bool)
    case null

    func encode(to encoder: any Encoder) throws {
      var container = encoder.singleValueContainer()
      switch self {
      case .int(let value): try container.encode(value)
      case .double(let value): try container.encode(value)
      case .string(let value): try container.encode(value)
      case .bool(let value): try container.encode(value)
      case .null: try container.encodeNil()
      }
    }

    var description: String {
      switch self {
      case .int(let value): String(value)
      case .double(let value): String(value)
      case .string(let value): value
      case .bool(let value): String(value)
      case .null: "none"
      }
    }
  }

  let kind: BeaconKind
  /// Fields in print order (JSON sorts them).
  var fields: [(name: String, value: Value)]

  init(_ frame: BeaconFrame) {
    kind = frame.kind
    switch frame {
    case .eddystoneUID(let uid):
      fields = [
        ("namespace", .string(uid.namespace.hex)), ("instance", .string(uid.instance.hex)),
        ("txPower", .int(Int(uid.txPower))),
        ("reserved", uid.reserved.map { .int(Int($0)) } ?? .null),
        ("legacy", .bool(uid.reserved == nil)),
      ]
    case .eddystoneURL(let url):
      fields = [("url", .string(url.url)), ("txPower", .int(Int(url.txPower)))]
    case .eddystoneTLM(let tlm):
      fields = [
        ("encrypted", .bool(false)), ("version", .int(Int(EddystoneTLM.version))),
        ("batteryMillivolts", tlm.battery.map { .int(Int($0)) } ?? .null),
        ("temperatureCelsius", tlm.temperatureCelsius.map { .double($0) } ?? .null),
        ("advertisingCount", .int(Int(tlm.advertisingCount))),
        ("uptimeSeconds", .double(Double(tlm.uptimeDeciseconds) / 10)),
      ]
    case .eddystoneEncryptedTLM(let etlm):
      fields = [
        ("encrypted", .bool(true)), ("version", .int(Int(EddystoneEncryptedTLM.version))),
        ("etlm", .string(etlm.encrypted.hex)), ("salt", .string(etlm.salt.hex)),
        ("mic", .string(etlm.mic.hex)),
      ]
    case .eddystoneEID(let eid):
      fields = [("eid", .string(eid.ephemeralID.hex)), ("txPower", .int(Int(eid.txPower)))]
    case .iBeacon(let beacon):
      fields = [
        ("uuid", .string(beacon.proximityUUID.uuidString ?? beacon.proximityUUID.hex)),
        ("major", .int(Int(beacon.major))), ("minor", .int(Int(beacon.minor))),
        ("measuredPower", .int(Int(beacon.measuredPower))),
      ]
    case .altBeacon(let beacon):
      fields = [
        ("companyID", .string("0x" + String(beacon.companyID, radix: 16).leftPadded(to: 4))),
        ("beaconID", .string(beacon.beaconID.hex)),
        ("id1", .string(beacon.id1.uuidString ?? beacon.id1.hex)),
        ("id2", .int(Int(beacon.id2))), ("id3", .int(Int(beacon.id3))),
        ("referenceRSSI", .int(Int(beacon.referenceRSSI))),
        ("manufacturerReserved", .int(Int(beacon.manufacturerReserved))),
      ]
    }
  }

  /// `kind key=value …`.
  var line: String {
    ([kind.rawValue] + fields.map { "\($0.name)=\($0.value)" }).joined(separator: " ")
  }

  struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    try container.encode(kind.rawValue, forKey: Key(stringValue: "kind"))
    for (name, value) in fields { try container.encode(value, forKey: Key(stringValue: name)) }
  }
}
