import Testing
import BeaconFrames
import Tokens

@Suite("Eddystone-URL")
struct EddystoneURLTests {
  @Test("decodes the specification's example URL and TX power")
  func specificationExample() throws {
    // https:// (0x03) goo.gl/S6zT6P at -18 dBm (0xEE, the specification's TX power example).
    let frame = [0x10, 0xee, 0x03] + Array("goo.gl/S6zT6P".utf8)
    let url = try EddystoneURL(frame: frame)
    #expect(url.url == "https://goo.gl/S6zT6P")
    #expect(url.txPower == -18)
    #expect(url.frame == frame)
  }

  @Test(
    "every scheme prefix",
    arguments: [
      (0x00, "http://www."), (0x01, "https://www."), (0x02, "http://"), (0x03, "https://"),
    ] as [(UInt8, String)])
  func schemes(byte: UInt8, prefix: String) throws {
    let url = try EddystoneURL(frame: [0x10, 0x12, byte] + Array("a".utf8))
    #expect(url.url == prefix + "a")
    #expect(url.txPower == 18)
    #expect(url.frame == [0x10, 0x12, byte, 0x61])
  }

  @Test("every expansion code", arguments: Array(0...13))
  func expansions(code: Int) throws {
    let url = try EddystoneURL(frame: [0x10, 0, 0x03, 0x61, UInt8(code), 0x62])
    let expansion = EddystoneURL.expansions[code]
    #expect(url.url == "https://a" + expansion + "b")
    #expect(url.frame == [0x10, 0, 0x03, 0x61, UInt8(code), 0x62])
  }

  @Test("the expansion table is the specification's")
  func expansionTable() {
    #expect(
      EddystoneURL.expansions == [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
      ])
    #expect(EddystoneURL.schemes == ["http://www.", "https://www.", "http://", "https://"])
  }

  @Test("building encodes the longest scheme and expansions")
  func encoding() throws {
    let url = try EddystoneURL(url: "https://www.example.com/shop.info", txPower: -4)
    #expect(
      url.frame == [0x10, 0xfc, 0x01] + Array("example".utf8) + [0x00] + Array("shop".utf8) + [0x0b]
    )
    let plain = try EddystoneURL(url: "http://x.org", txPower: 0)
    #expect(plain.frame == [0x10, 0x00, 0x02, 0x78, 0x08])
  }

  @Test("literal text that an expansion could shorten decodes to the same URL")
  func literalExpansion() throws {
    let literal = try EddystoneURL(frame: [0x10, 0, 0x02] + Array("www.a.com".utf8))
    #expect(literal.url == "http://www.a.com")
    let rebuilt = try EddystoneURL(frame: literal.frame)
    #expect(rebuilt == literal)
    #expect(literal.frame == [0x10, 0, 0x00, 0x61, 0x07])
  }

  @Test func roundTripLongest() throws {
    // 17 encoded bytes, each an expansion: the longest URL a frame holds.
    let url = "https://www." + String(repeating: ".info/", count: 17)
    let frame = try EddystoneURL(url: url, txPower: 1)
    #expect(frame.frame.count == 20)
    #expect(try EddystoneURL(frame: frame.frame).url == url)
  }

  @Test("reserved bytes, unknown schemes and lengths are typed errors")
  func malformed() {
    for byte in [0x0e, 0x20, 0x7f, 0x80, 0xff] as [UInt8] {
      #expect(
        parseError { () throws(BeaconFrameError) in
          try EddystoneURL(frame: [0x10, 0, 0x03, 0x61, byte])
        } == .reservedURLByte(byte, offset: 4))
    }
    #expect(
      parseError { () throws(BeaconFrameError) in try EddystoneURL(frame: [0x10, 0, 0x04, 0x61]) }
        == .unknownURLScheme(4))
    for count in [0, 1, 2, 21, 30] {
      let frame = [0x10, 0, 0x03] + [UInt8](repeating: 0x61, count: 30)
      #expect(
        parseError { () throws(BeaconFrameError) in try EddystoneURL(frame: frame.prefix(count)) }
          == .urlFrameLength(count: count))
    }
    #expect(
      parseError { () throws(BeaconFrameError) in try EddystoneURL(frame: [0x00, 0, 0x03]) }
        == .unknownEddystoneFrameType(0))
  }

  @Test("URLs that cannot be sent are typed errors")
  func unencodable() {
    #expect(
      parseError { () throws(BeaconFrameError) in try EddystoneURL(url: "ftp://x", txPower: 0) }
        == .unsupportedURLScheme("ftp://x"))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneURL(url: "https://a b", txPower: 0)
      } == .unencodableURLCharacter(" "))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneURL(url: "https://café", txPower: 0)
      } == .unencodableURLCharacter("é"))
    #expect(
      parseError { () throws(BeaconFrameError) in
        try EddystoneURL(url: "https://abcdefghijklmnopqr", txPower: 0)
      } == .urlTooLong(encodedLength: 18, maximum: 17))
  }

  @Test("an empty URL after the scheme is valid")
  func emptyBody() throws {
    let url = try EddystoneURL(frame: [0x10, 0, 0x03])
    #expect(url.url == "https://")
    #expect(try EddystoneURL(url: "https://", txPower: 0).frame == [0x10, 0, 0x03])
  }
}
