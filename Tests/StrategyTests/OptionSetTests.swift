import Foundation
import Strategy
import Testing

/// Encodes `value` with `JSONEncoder` and decodes the result back.
func jsonRoundTrip<Value: Codable>(_ value: Value) throws -> Value {
  let data = try JSONEncoder().encode(value)
  return try JSONDecoder().decode(Value.self, from: data)
}

/// Encodes `value` and reads the JSON back as an array of strings.
func encodedNames(_ value: some Encodable) throws -> [String] {
  try JSONDecoder().decode([String].self, from: JSONEncoder().encode(value))
}

/// Decodes `T` from a JSON text.
func decode<T: Decodable>(_ type: T.Type, json: String) throws -> T {
  try JSONDecoder().decode(type, from: Data(json.utf8))
}

@Suite("DiscoveryMediums")
struct DiscoveryMediumsTests {
  @Test func defaultIsEveryMedium() {
    #expect(DiscoveryMediums.default == [.ble, .audio])
    #expect(DiscoveryMediums.default.contains(.ble))
    #expect(DiscoveryMediums.default.contains(.audio))
    #expect(DiscoveryMediums.ble != DiscoveryMediums.audio)
    #expect(DiscoveryMediums.ble.intersection(.audio).isEmpty)
  }

  @Test func namesAreStableAndOrdered() {
    #expect(DiscoveryMediums.default.names == ["ble", "audio"])
    let audioFirst: DiscoveryMediums = [.audio, .ble]
    #expect(audioFirst.names == ["ble", "audio"])
    #expect(DiscoveryMediums.ble.names == ["ble"])
    #expect(DiscoveryMediums.audio.names == ["audio"])
    #expect(DiscoveryMediums().names.isEmpty)
    #expect(DiscoveryMediums.named.map(\.name) == ["ble", "audio", "lan", "optical"])
    #expect(!DiscoveryMediums.default.contains(.lan))
    #expect(!DiscoveryMediums.default.contains(.optical))
    #expect(DiscoveryMediums.optical.rawValue == 1 << 3)
  }

  @Test func elementsAreSingleMediums() {
    #expect(DiscoveryMediums.default.elements == [.ble, .audio])
    #expect(DiscoveryMediums.audio.elements == [.audio])
    #expect(DiscoveryMediums().elements.isEmpty)
    for element in DiscoveryMediums.default.elements {
      #expect(element.rawValue.nonzeroBitCount == 1)
    }
  }

  @Test func parsesNames() {
    #expect(DiscoveryMediums(name: "ble") == .ble)
    #expect(DiscoveryMediums(name: "audio") == .audio)
    #expect(DiscoveryMediums(name: "BLE") == nil)
    #expect(DiscoveryMediums(name: "") == nil)
    #expect(DiscoveryMediums(name: "wifi") == nil)
  }

  @Test func description() {
    #expect(DiscoveryMediums.default.description == "ble,audio")
    #expect(DiscoveryMediums.audio.description == "audio")
    #expect(DiscoveryMediums().description == "none")
  }

  @Test(arguments: [DiscoveryMediums(), .ble, .audio, .default])
  func codableRoundTrip(_ mediums: DiscoveryMediums) throws {
    #expect(try jsonRoundTrip(mediums) == mediums)
    #expect(try encodedNames(mediums) == mediums.names)
  }

  @Test func encodesAsArrayOfNames() throws {
    #expect(try encodedNames(DiscoveryMediums.default) == ["ble", "audio"])
    #expect(try encodedNames(DiscoveryMediums()) == [])
  }

  @Test func decodesNamesInAnyOrderWithDuplicates() throws {
    let mediums = try decode(DiscoveryMediums.self, json: #"["audio", "ble", "audio"]"#)
    #expect(mediums == .default)
    #expect(try decode(DiscoveryMediums.self, json: "[]").isEmpty)
  }

  @Test(arguments: [#"["wifi"]"#, #"["ble", "nfc"]"#, #"["BLE"]"#, "[1]", #""ble""#])
  func decodingUnknownOrMalformedThrows(_ json: String) {
    #expect(throws: DecodingError.self) { try decode(DiscoveryMediums.self, json: json) }
  }
}

@Suite("DiscoveryMode")
struct DiscoveryModeTests {
  @Test func defaultIsBroadcastAndScan() {
    #expect(DiscoveryMode.default == [.broadcast, .scan])
    #expect(DiscoveryMode.broadcast.intersection(.scan).isEmpty)
  }

  @Test func names() {
    #expect(DiscoveryMode.default.names == ["broadcast", "scan"])
    let scanFirst: DiscoveryMode = [.scan, .broadcast]
    #expect(scanFirst.names == ["broadcast", "scan"])
    #expect(DiscoveryMode.scan.names == ["scan"])
    #expect(DiscoveryMode().names.isEmpty)
    #expect(DiscoveryMode(name: "broadcast") == .broadcast)
    #expect(DiscoveryMode(name: "scan") == .scan)
    #expect(DiscoveryMode(name: "Scan") == nil)
    #expect(DiscoveryMode(name: "listen") == nil)
  }

  @Test func description() {
    #expect(DiscoveryMode.default.description == "broadcast,scan")
    #expect(DiscoveryMode.broadcast.description == "broadcast")
    #expect(DiscoveryMode().description == "none")
  }

  @Test(arguments: [DiscoveryMode(), .broadcast, .scan, .default])
  func codableRoundTrip(_ mode: DiscoveryMode) throws {
    #expect(try jsonRoundTrip(mode) == mode)
    #expect(try encodedNames(mode) == mode.names)
  }

  @Test func decodingUnknownNameThrows() {
    #expect(throws: DecodingError.self) {
      try decode(DiscoveryMode.self, json: #"["broadcast", "listen"]"#)
    }
  }
}

@Suite("DeviceTypes")
struct DeviceTypesTests {
  @Test func defaultIsNearbyDevices() {
    #expect(DeviceTypes.default == .nearbyDevices)
    #expect(!DeviceTypes.default.contains(.bleBeacons))
    #expect(DeviceTypes.nearbyDevices.intersection(.bleBeacons).isEmpty)
  }

  @Test func names() {
    #expect(DeviceTypes.default.names == ["nearbyDevices"])
    #expect(DeviceTypes.bleBeacons.names == ["bleBeacons"])
    let both: DeviceTypes = [.bleBeacons, .nearbyDevices]
    #expect(both.names == ["nearbyDevices", "bleBeacons"])
    #expect(DeviceTypes().names.isEmpty)
  }

  @Test(arguments: [DeviceTypes(), .nearbyDevices, .bleBeacons, [.nearbyDevices, .bleBeacons]])
  func codableRoundTrip(_ types: DeviceTypes) throws {
    #expect(try jsonRoundTrip(types) == types)
    #expect(try encodedNames(types) == types.names)
  }

  @Test func encodesAsArrayOfNames() throws {
    let both: DeviceTypes = [.nearbyDevices, .bleBeacons]
    #expect(try encodedNames(both) == ["nearbyDevices", "bleBeacons"])
    let decoded = try decode(DeviceTypes.self, json: #"["bleBeacons", "nearbyDevices"]"#)
    #expect(decoded == both)
  }

  @Test(arguments: [#"["eddystone"]"#, #"["nearbyDevices", "beacons"]"#, #"["BleBeacons"]"#])
  func decodingUnknownNameThrows(_ json: String) {
    #expect(throws: DecodingError.self) { try decode(DeviceTypes.self, json: json) }
  }
}

@Suite("DistanceType and BeaconStrategy")
struct DistanceAndBeaconTests {
  @Test func distanceTypeRawValues() throws {
    #expect(DistanceType.allCases == [.default, .earshot])
    #expect(DistanceType.default.rawValue == "default")
    #expect(DistanceType.earshot.rawValue == "earshot")
    #expect(try jsonRoundTrip([DistanceType.earshot]) == [.earshot])
  }

  @Test func beaconStrategyDefaults() {
    let strategy = BeaconStrategy()
    #expect(strategy.includeIBeacons)
    #expect(strategy.lowPowerPreferred)
    #expect(!strategy.allowInBackground)
    #expect(BeaconStrategy.default == strategy)
  }

  @Test func beaconStrategyCodableRoundTrip() throws {
    let custom = BeaconStrategy(
      includeIBeacons: false, lowPowerPreferred: false, allowInBackground: true)
    #expect(try jsonRoundTrip(custom) == custom)
    #expect(try jsonRoundTrip(BeaconStrategy.default) == .default)
    #expect(custom != .default)
  }
}
