import Foundation
@_spi(Resolver) import ResolverWire
import Testing

@Suite("RFC 3339 times")
struct DateTranscoderTests {
  let transcoder = RFC3339DateTranscoder()

  @Test func roundTripsWithMilliseconds() throws {
    let date = Date(timeIntervalSince1970: 1_800_000_000.25)
    let text = try transcoder.encode(date)
    #expect(text == "2027-01-15T08:00:00.250Z")
    #expect(try transcoder.decode(text) == date)
  }

  @Test func acceptsWholeSecondsAndOffsets() throws {
    #expect(
      try transcoder.decode("2027-01-15T08:00:00Z") == Date(timeIntervalSince1970: 1_800_000_000))
    #expect(
      try transcoder.decode("2027-01-15T09:00:00+01:00")
        == Date(timeIntervalSince1970: 1_800_000_000))
  }

  @Test func refusesWhatIsNotATime() {
    #expect(throws: WireError.self) { try transcoder.decode("yesterday") }
    #expect(throws: WireError.self) { try transcoder.decode("") }
  }
}
