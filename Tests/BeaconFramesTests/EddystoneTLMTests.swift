import Testing
import BeaconFrames
import Tokens

@Suite("Eddystone-TLM, plain and encrypted")
struct EddystoneTLMTests {
  @Test("reads every field of a plain frame, big-endian")
  func plainLayout() throws {
    // 3000 mV, 23.5 °C (0x1780 in 8.8), 0x01020304 PDUs, 0x000186a0 × 0.1 s = 10 000 s.
    let frame = hexBytes("20 00 0bb8 1780 01020304 000186a0")
    let tlm = try EddystoneTLM(frame: frame)
    #expect(tlm.batteryMillivolts == 3000)
    #expect(tlm.battery == 3000)
    #expect(tlm.temperatureRaw == 0x1780)
    #expect(tlm.temperatureCelsius == 23.5)
    #expect(tlm.advertisingCount == 0x0102_0304)
    #expect(tlm.uptimeDeciseconds == 100_000)
    #expect(tlm.uptime == .seconds(10_000))
    #expect(tlm.frame == frame)
  }

  @Test("the specification's Service Data length 0x11 and its 'not supported' values")
  func notSupported() throws {
    // Battery zeroed (USB powered) and temperature 0x8000 (-128 °C): not supported.
    let advertisement = eddystoneHeader + hexBytes("11 16 aafe 20 00 0000 8000 00000001 00000002")
    let frames = try BeaconFrame.frames(inAdvertisement: advertisement)
    let tlm = EddystoneTLM(
      batteryMillivolts: nil, temperatureCelsius: nil, advertisingCount: 1, uptimeDeciseconds: 2)
    #expect(frames == [.eddystoneTLM(tlm)])
    #expect(tlm.battery == nil)
    #expect(tlm.temperatureCelsius == nil)
    #expect(tlm.temperatureRaw == -32768)
    #expect(BeaconFrame.eddystoneTLM(tlm).advertisement == advertisement)
  }

  @Test(
    "8.8 fixed point, negative temperatures included",
    arguments: [
      (0x0000, 0.0), (0x0100, 1.0), (0x0080, 0.5), (0xff00, -1.0), (0xfe80, -1.5),
      (0x7fff, 32767.0 / 256), (0x8001, -32767.0 / 256),
    ] as [(UInt16, Double)])
  func temperature(raw: UInt16, celsius: Double) throws {
    let frame =
      hexBytes("2000 0000") + [UInt8(raw >> 8), UInt8(raw & 0xff)]
      + [UInt8](
        repeating: 0, count: 8)
    let tlm = try EddystoneTLM(frame: frame)
    #expect(tlm.temperatureCelsius == celsius)
    let built = EddystoneTLM(
      batteryMillivolts: nil, temperatureCelsius: celsius, advertisingCount: 0,
      uptimeDeciseconds: 0)
    #expect(built.temperatureRaw == Int16(bitPattern: raw))
  }

  @Test("building clamps and rounds temperatures")
  func temperatureClamp() {
    func raw(_ celsius: Double) -> Int16 {
      EddystoneTLM(
        batteryMillivolts: 1, temperatureCelsius: celsius, advertisingCount: 0,
        uptimeDeciseconds: 0
      ).temperatureRaw
    }
    #expect(raw(1000) == 32767)
    #expect(raw(-1000) == -32767)
    #expect(raw(.nan) == EddystoneTLM.temperatureNotSupported)
    #expect(raw(0.001) == 0)
  }

  @Test func plainRoundTrip() throws {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<500 {
      let tlm = EddystoneTLM(
        batteryMillivolts: .random(in: 0 ... .max, using: &generator),
        temperatureRaw: .random(in: .min ... .max, using: &generator),
        advertisingCount: .random(in: 0 ... .max, using: &generator),
        uptimeDeciseconds: .random(in: 0 ... .max, using: &generator))
      #expect(try EddystoneTLM(frame: tlm.frame) == tlm)
      #expect(try Eddystone.parse(frame: tlm.frame) == .eddystoneTLM(tlm))
    }
  }

  @Test("reads an encrypted frame: 12 encrypted bytes, salt and MIC kept as bytes")
  func encrypted() throws {
    let frame = hexBytes("20 01 0102030405060708090a0b0c abcd 1234")
    let etlm = try EddystoneEncryptedTLM(frame: frame)
    #expect(etlm.encrypted.hex == "0102030405060708090a0b0c")
    #expect(etlm.salt.bytes == [0xab, 0xcd])
    #expect(etlm.mic.bytes == [0x12, 0x34])
    #expect(etlm.frame == frame)
    let frames = try BeaconFrame.frames(inAdvertisement: hexBytes("15 16 aafe") + frame)
    #expect(frames == [.eddystoneEncryptedTLM(etlm)])
    #expect(frames.first?.kind == .eddystoneTLM)
    #expect(frames.first?.referencePower == nil)
  }

  @Test func encryptedFieldLengths() throws {
    let twelve = try BeaconBytes(hex: "0102030405060708090a0b0c")
    let two = try BeaconBytes(hex: "0102")
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneEncryptedTLM(encrypted: two, salt: two, mic: two)
      } == .wrongFieldLength(field: "encrypted TLM", count: 2, expected: 12))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneEncryptedTLM(encrypted: twelve, salt: twelve, mic: two)
      } == .wrongFieldLength(field: "salt", count: 12, expected: 2))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneEncryptedTLM(encrypted: twelve, salt: two, mic: twelve)
      } == .wrongFieldLength(field: "MIC", count: 12, expected: 2))
    let built = try EddystoneEncryptedTLM(encrypted: twelve, salt: two, mic: two)
    #expect(try EddystoneEncryptedTLM(frame: built.frame) == built)
  }

  @Test("malformed TLM frames are typed errors")
  func malformed() {
    #expect(
      parseError { () throws(BeaconFrameError) in try Eddystone.parse(frame: [0x20]) }
        == .wrongLength(.eddystoneTLM, count: 1, expected: 14))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try Eddystone.parse(frame: [0x20, 0x02] + [UInt8](repeating: 0, count: 12))
      } == .unknownTLMVersion(2))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try Eddystone.parse(frame: hexBytes("2000 0000 0000 00000000 000000"))
      } == .wrongLength(.eddystoneTLM, count: 13, expected: 14))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try Eddystone.parse(frame: hexBytes("2000 0000 0000 00000000 0000000000"))
      } == .wrongLength(.eddystoneTLM, count: 15, expected: 14))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try Eddystone.parse(frame: hexBytes("2001 0000 0000 00000000 0000000000"))
      } == .wrongLength(.eddystoneTLM, count: 15, expected: 18))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneTLM(frame: hexBytes("2001 0000 0000 00000000 00000000"))
      } == .unknownTLMVersion(1))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneEncryptedTLM(frame: hexBytes("2000 0000 0000 00000000 00000000 0000 0000"))
      } == .unknownTLMVersion(0))
  }
}
