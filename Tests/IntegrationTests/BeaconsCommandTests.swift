import Foundation
import Testing
import TestSupport
import Tokens

/// Runs the built `nearby beacons parse` as a user would.
@Suite("nearby beacons parse")
struct BeaconsCommandTests {
  struct Outcome {
    var status: Int32
    var out: String
    var err: String
    var lines: [String] { out.split(separator: "\n").map(String.init) }
    func objects() throws -> [[String: Any]] {
      try lines.map {
        try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
      }
    }
  }

  /// Runs `nearby` with `arguments` on a thread of its own, killed after 30 s.
  static func run(_ arguments: [String]) async throws -> Outcome {
    let result = try await ChildProcess.run(
      try ChildProcess.built("nearby"), arguments, timeout: 30)
    return Outcome(status: result.status, out: result.outText, err: result.errText)
  }

  static let uid = "00ee00112233445566778899aabbccddeeff0000"
  static let advertisements = [
    // Eddystone-UID, URL (https://goo.gl/S6zT6P), TLM, encrypted TLM, EID.
    "0201060303aafe1716aafe" + uid,
    "0201060303aafe1316aafe10ee03"
      + Hex.encode("goo.gl/S6zT6P".utf8),
    "0201060303aafe1116aafe20000bb8178001020304000186a0",
    "0201060303aafe1516aafe20010102030405060708090a0b0cabcd1234",
    "0201060303aafe0d16aafe30f80123456789abcdef",
    // iBeacon, AltBeacon.
    "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000100020c5",
    "0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500",
  ]

  @Test("every kind from whole advertisements, one JSON object a line with every field")
  func everyKind() async throws {
    let result = try await Self.run(
      ["beacons", "parse", "--json"] + Self.advertisements.flatMap { ["--adv", $0] })
    #expect(result.status == 0, "\(result.err)")
    let objects = try result.objects()
    #expect(
      objects.compactMap { $0["kind"] as? String } == [
        "eddystone-uid", "eddystone-url", "eddystone-tlm", "eddystone-tlm", "eddystone-eid",
        "ibeacon", "altbeacon",
      ])
    guard objects.count == 7 else { return }
    #expect(objects[0]["namespace"] as? String == "00112233445566778899")
    #expect(objects[0]["instance"] as? String == "aabbccddeeff")
    #expect(objects[0]["txPower"] as? Int == -18)
    #expect(objects[0]["legacy"] as? Bool == false)
    #expect(objects[1]["url"] as? String == "https://goo.gl/S6zT6P")
    #expect(objects[2]["batteryMillivolts"] as? Int == 3000)
    #expect(objects[2]["temperatureCelsius"] as? Double == 23.5)
    #expect(objects[2]["advertisingCount"] as? Int == 0x0102_0304)
    #expect(objects[2]["uptimeSeconds"] as? Double == 10_000)
    #expect(objects[2]["encrypted"] as? Bool == false)
    #expect(objects[3]["encrypted"] as? Bool == true)
    #expect(objects[3]["etlm"] as? String == "0102030405060708090a0b0c")
    #expect(objects[3]["salt"] as? String == "abcd")
    #expect(objects[3]["mic"] as? String == "1234")
    #expect(objects[4]["eid"] as? String == "0123456789abcdef")
    #expect(objects[4]["txPower"] as? Int == -8)
    #expect(objects[5]["uuid"] as? String == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
    #expect(objects[5]["major"] as? Int == 16)
    #expect(objects[5]["minor"] as? Int == 32)
    #expect(objects[5]["measuredPower"] as? Int == -59)
    #expect(objects[6]["companyID"] as? String == "0x0118")
    #expect(objects[6]["beaconID"] as? String == "2f234454cf6d4a0fadf2f4911ba9ffa600010002")
    #expect(objects[6]["referenceRSSI"] as? Int == -59)
    #expect(objects[6]["manufacturerReserved"] as? Int == 0)
  }

  @Test("BlueZ-style service and manufacturer data entries; readable lines without --json")
  func entries() async throws {
    let result = try await Self.run([
      "beacons", "parse", "--service-data", "0000feaa-0000-1000-8000-00805f9b34fb=" + Self.uid,
      "--manufacturer-data", "0x004C=0215e2c56db5dffb48d2b060d0f5a71096e000100020c5",
    ])
    #expect(result.status == 0, "\(result.err)")
    #expect(
      result.lines == [
        "eddystone-uid namespace=00112233445566778899 instance=aabbccddeeff txPower=-18 "
          + "reserved=0 legacy=false",
        "ibeacon uuid=e2c56db5-dffb-48d2-b060-d0f5a71096e0 major=16 minor=32 measuredPower=-59",
      ])
  }

  @Test("bad hex exits 64 naming the character")
  func badHex() async throws {
    let result = try await Self.run(["beacons", "parse", "--adv", "0201g6"])
    #expect(result.status == 64)
    #expect(result.err.contains("\"g\" at character 5"))
    let odd = try await Self.run(["beacons", "parse", "--service-data", "feaa=001"])
    #expect(odd.status == 64)
    #expect(odd.err.contains("3 hex digits"))
    let uuid = try await Self.run(["beacons", "parse", "--service-data", "fe=00"])
    #expect(uuid.status == 64)
    #expect(uuid.err.contains("not a Bluetooth UUID"))
    let none = try await Self.run(["beacons", "parse"])
    #expect(none.status == 64)
  }

  @Test("a malformed frame exits 1 with what is wrong; the other inputs still print")
  func malformed() async throws {
    let result = try await Self.run([
      "beacons", "parse", "--json", "--service-data", "feaa=00ee0011", "--adv",
      Self.advertisements[4],
    ])
    #expect(result.status == 1)
    #expect(result.err.contains("eddystone-uid frame of 4 bytes: expected 20"))
    #expect(try result.objects().map { $0["kind"] as? String } == ["eddystone-eid"])
  }

  @Test("well-formed input without a beacon exits 2")
  func noBeacon() async throws {
    let result = try await Self.run(["beacons", "parse", "--adv", "020106"])
    #expect(result.status == 2)
    #expect(result.err.contains("no beacon"))
  }

  @Test("--help documents the exit codes")
  func help() async throws {
    let result = try await Self.run(["beacons", "parse", "--help"])
    #expect(result.status == 0)
    #expect(result.out.contains("Exit codes"))
    #expect(result.out.contains("64 bad arguments"))
  }
}
