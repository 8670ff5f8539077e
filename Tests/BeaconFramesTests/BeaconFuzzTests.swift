import Testing
import BeaconFrames
import Tokens

// SplitMix64 is Tokens': a failing case can be replayed from its seed.

/// Random bytes and mutations of valid frames through every parser: each call must return a
/// value or a typed error (a trap fails the whole test run), and whatever parses must rebuild
/// to bytes that parse to the same value.
@Suite("Beacon parsers under random input")
struct BeaconFuzzTests {
  static let iterations = 40_000
  /// How many inputs run between two yields.
  static let slice = 200

  /// Every parser entry point on `bytes`; records an issue when a parsed value does not
  /// survive build → parse. Returns how many inputs parsed to at least one beacon.
  @discardableResult
  static func exercise(_ bytes: [UInt8], companyID: UInt16) -> Int {
    var parsed = 0
    if case .success(let frames) = outcome({ () throws(BeaconFrameError) in
      try BeaconFrame.frames(inAdvertisement: bytes)
    }) {
      for frame in frames { checkRebuild(frame) }
      parsed += frames.isEmpty ? 0 : 1
    }
    if case .success(let frame?) = outcome({ () throws(BeaconFrameError) in
      try BeaconFrame.parse(serviceData: bytes, uuid: "feaa")
    }) {
      checkRebuild(frame)
      parsed += 1
    }
    if case .success(let frame?) = outcome({ () throws(BeaconFrameError) in
      try BeaconFrame.parse(manufacturerData: bytes, companyID: companyID)
    }) {
      checkRebuild(frame)
      parsed += 1
    }
    // The frame kinds' own readers, whatever the frame type byte says.
    _ = outcome { () throws(BeaconFrameError) in try EddystoneUID(frame: bytes) }
    _ = outcome { () throws(BeaconFrameError) in try EddystoneURL(frame: bytes) }
    _ = outcome { () throws(BeaconFrameError) in try EddystoneTLM(frame: bytes) }
    _ = outcome { () throws(BeaconFrameError) in try EddystoneEncryptedTLM(frame: bytes) }
    _ = outcome { () throws(BeaconFrameError) in try EddystoneEID(frame: bytes) }
    _ = outcome { () throws(BeaconFrameError) in try IBeacon(manufacturerData: bytes) }
    _ = outcome { () throws(BeaconFrameError) in
      try AltBeacon(companyID: companyID, manufacturerData: bytes)
    }
    if case .failure(let error) = outcome({ () throws(BeaconFrameError) in
      try BeaconFrame.frames(inAdvertisement: bytes)
    }) {
      #expect(!error.description.isEmpty)
    }
    return parsed
  }

  static func checkRebuild(_ frame: BeaconFrame) {
    let rebuilt = outcome { () throws(BeaconFrameError) in
      try BeaconFrame.frames(inAdvertisement: frame.advertisement)
    }
    if rebuilt != .success([frame]) {
      Issue.record("\(frame) rebuilt to \(frame.advertisement) which parses to \(rebuilt)")
    }
  }

  static func validAdvertisements(using generator: inout SplitMix64) -> [[UInt8]] {
    func bytes(_ count: Int) -> BeaconBytes {
      try! BeaconBytes((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
    let frames: [BeaconFrame] = [
      .eddystoneUID(try! EddystoneUID(namespace: bytes(10), instance: bytes(6), txPower: -10)),
      .eddystoneUID(
        try! EddystoneUID(namespace: bytes(10), instance: bytes(6), txPower: 3, reserved: nil)),
      .eddystoneURL(try! EddystoneURL(url: "https://www.example.com/a.org", txPower: -4)),
      .eddystoneTLM(
        EddystoneTLM(
          batteryMillivolts: 3000, temperatureRaw: 0x1780, advertisingCount: 77,
          uptimeDeciseconds: 1234)),
      .eddystoneEncryptedTLM(
        try! EddystoneEncryptedTLM(encrypted: bytes(12), salt: bytes(2), mic: bytes(2))),
      .eddystoneEID(try! EddystoneEID(ephemeralID: bytes(8), txPower: -20)),
      .iBeacon(try! IBeacon(proximityUUID: bytes(16), major: 1, minor: 2, measuredPower: -59)),
      .altBeacon(try! AltBeacon(companyID: 0x0118, beaconID: bytes(20), referenceRSSI: -60)),
    ]
    return frames.map(\.advertisement)
  }

  @Test("random bytes never crash a parser")
  func randomBytes() async {
    var generator = SplitMix64(seed: 0x5eed_0001)
    for iteration in 0..<Self.iterations {
      // Seconds of work in a debug build: let the cooperative pool's other tasks (two
      // threads here, one per core) run between slices, or the tests beside it starve.
      if iteration % Self.slice == 0 { await Task.yield() }
      let count = Int.random(in: 0...40, using: &generator)
      var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
      // Half the time, make the first structure look like beacon data so that the inner
      // parsers, not just the AD walk, see random bytes.
      if count > 4, Bool.random(using: &generator) {
        bytes[0] = UInt8(count - 1)
        bytes[1] = [0x16, 0xff, 0x20, 0x21].randomElement(using: &generator)!
        if bytes[1] == 0x16 { (bytes[2], bytes[3]) = (0xaa, 0xfe) }
      }
      let companyID: UInt16 = [0x004c, 0x0118, .random(in: 0...0xffff, using: &generator)]
        .randomElement(using: &generator)!
      Self.exercise(bytes, companyID: companyID)
    }
  }

  @Test("mutations of valid frames never crash a parser, and what parses rebuilds")
  func mutations() async {
    var generator = SplitMix64(seed: 0x5eed_0002)
    let valid = Self.validAdvertisements(using: &generator)
    var parsed = 0
    for iteration in 0..<Self.iterations {
      // Seconds of work in a debug build: let the cooperative pool's other tasks (two
      // threads here, one per core) run between slices, or the tests beside it starve.
      if iteration % Self.slice == 0 { await Task.yield() }
      var bytes = valid.randomElement(using: &generator)!
      for _ in 0...Int.random(in: 0...3, using: &generator) {
        let position = Int.random(in: 0..<max(bytes.count, 1), using: &generator)
        switch Int.random(in: 0..<6, using: &generator) {
        case 0 where !bytes.isEmpty: bytes[position] = .random(in: 0...255, using: &generator)
        case 1 where !bytes.isEmpty:
          bytes[position] ^= 1 << UInt8.random(in: 0...7, using: &generator)
        case 2 where !bytes.isEmpty: bytes.remove(at: position)
        case 3: bytes.insert(.random(in: 0...255, using: &generator), at: position)
        case 4: bytes.removeLast(Int.random(in: 0...min(5, bytes.count), using: &generator))
        default:
          // Another length byte: the AD walk must still stay inside the payload.
          if !bytes.isEmpty { bytes[position] = UInt8.random(in: 0...40, using: &generator) }
        }
      }
      parsed += Self.exercise(bytes, companyID: 0x004c)
      // The service and manufacturer data alone, as BlueZ hands them over.
      if bytes.count > 7 {
        parsed += Self.exercise(Array(bytes.dropFirst(11)), companyID: 0x004c)
        parsed += Self.exercise(Array(bytes.dropFirst(7)), companyID: 0x0118)
      }
    }
    // Light mutations leave many frames valid: the rebuild check ran on a good share.
    #expect(parsed > Self.iterations / 10)
  }
}
