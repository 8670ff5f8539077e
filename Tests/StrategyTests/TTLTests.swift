import Foundation
import Strategy
import Testing

@Suite("TTL")
struct TTLTests {
  @Test func defaultIsThreeHundredSeconds() {
    #expect(TTL.default.seconds == 300)
    #expect(!TTL.default.isInfinite)
    #expect(TTL.default.description == "300 s")
  }

  @Test func maximumIsOneDay() throws {
    #expect(TTL.maximumSeconds == 86_400)
    let longest = try TTL(seconds: 86_400)
    #expect(longest.seconds == 86_400)
    #expect(longest.description == "86400 s")
  }

  @Test func infinite() {
    #expect(TTL.infinite.isInfinite)
    #expect(TTL.infinite.seconds == nil)
    #expect(TTL.infinite.description == "infinite")
    #expect(TTL.infinite != TTL.default)
  }

  @Test(arguments: [0.001, 1, 1.5, 300, 3_600, 86_399.999, 86_400])
  func acceptsValidSeconds(_ seconds: Double) throws {
    let ttl = try TTL(seconds: seconds)
    #expect(ttl.seconds == seconds)
    #expect(!ttl.isInfinite)
  }

  @Test(arguments: [
    0, -0.0, -1, -300, -Double.infinity, Double.infinity, Double.nan, 86_400.5, 86_401, 1e12,
    Double.greatestFiniteMagnitude,
  ])
  func rejectsOutOfRangeSeconds(_ seconds: Double) throws {
    let error = #expect(throws: StrategyError.self) { try TTL(seconds: seconds) }
    let thrown = try #require(error)
    guard case .ttlOutOfRange(let reported) = thrown else {
      Issue.record("expected ttlOutOfRange, got \(thrown)")
      return
    }
    if seconds.isNaN {
      #expect(reported.isNaN)
    } else {
      #expect(reported == seconds)
    }
    #expect(thrown.description.contains("86400"))
  }

  @Test func rejectsWithEquatableError() {
    #expect(throws: StrategyError.ttlOutOfRange(seconds: 0)) { try TTL(seconds: 0) }
    #expect(throws: StrategyError.ttlOutOfRange(seconds: -5)) { try TTL(seconds: -5) }
    #expect(throws: StrategyError.ttlOutOfRange(seconds: 86_400.5)) {
      try TTL(seconds: 86_400.5)
    }
  }

  @Test func descriptionOfFractionalSeconds() throws {
    #expect(try TTL(seconds: 1.5).description == "1.5 s")
    #expect(try TTL(seconds: 60).description == "60 s")
  }

  @Test func infiniteEncodesAsString() throws {
    let data = try JSONEncoder().encode([TTL.infinite])
    #expect(String(decoding: data, as: UTF8.self) == #"["infinite"]"#)
    #expect(try JSONDecoder().decode([String].self, from: data) == ["infinite"])
    #expect(try jsonRoundTrip(TTL.infinite) == .infinite)
    #expect(try jsonRoundTrip([TTL.infinite]) == [.infinite])
  }

  @Test func finiteEncodesAsNumber() throws {
    let data = try JSONEncoder().encode([TTL.default, try TTL(seconds: 1.5)])
    #expect(try JSONDecoder().decode([Double].self, from: data) == [300, 1.5])
    #expect(try jsonRoundTrip(TTL.default) == .default)
    #expect(try jsonRoundTrip(try TTL(seconds: 86_400)) == (try TTL(seconds: 86_400)))
  }

  @Test(arguments: [
    "[0]", "[-1]", "[86400.5]", "[1e9]", #"["forever"]"#, #"["Infinite"]"#, "[true]",
  ])
  func decodingInvalidThrows(_ json: String) {
    #expect(throws: DecodingError.self) { try decode([TTL].self, json: json) }
  }

  @Test func decodesIntegerSeconds() throws {
    #expect(try decode([TTL].self, json: "[42]") == [try TTL(seconds: 42)])
    #expect(try decode([TTL].self, json: "[86400]") == [try TTL(seconds: 86_400)])
  }
}
