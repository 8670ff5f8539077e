import Core
import Foundation
import Testing

@Suite("Identifiers")
struct IdentifierTests {
  @Test("random identifiers are UUID version 4, distinct, and round-trip through text and JSON")
  func roundTrip() throws {
    var seen = Set<Identifier>()
    for _ in 0..<1_000 {
      let identifier = Identifier.random()
      let text = identifier.description
      #expect(text.count == 36)
      #expect(Array(text)[14] == "4")
      #expect("89ab".contains(Array(text)[19]))
      #expect(Identifier(text) == identifier)
      #expect(Identifier(text.uppercased()) == identifier)
      seen.insert(identifier)
    }
    #expect(seen.count == 1_000)
    let device = DeviceID.random()
    let data = try JSONEncoder().encode(device)
    #expect(String(decoding: data, as: UTF8.self) == "\"\(device)\"")
    #expect(try JSONDecoder().decode(DeviceID.self, from: data) == device)
  }

  @Test(
    "text that is not a UUID is refused",
    arguments: [
      "", "not-a-uuid", "123e4567-e89b-12d3-a456-42661417400", "123e4567e89b12d3a456426614174000",
      "123e4567-e89b-12d3-a456-42661417400g", "123e4567-e89b-12d3-a456_426614174000",
      " 123e4567-e89b-12d3-a456-42661417400",
    ])
  func refuses(_ text: String) {
    #expect(Identifier(text) == nil)
    #expect(SubscriptionID(text) == nil)
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(PublicationID.self, from: Data("\"\(text)\"".utf8))
    }
  }

  @Test("a known UUID parses to its bits")
  func knownValue() throws {
    let identifier = try #require(Identifier("123e4567-e89b-12d3-a456-426614174000"))
    #expect(identifier.bits == 0x123e_4567_e89b_12d3_a456_4266_1417_4000)
    #expect(identifier.description == "123e4567-e89b-12d3-a456-426614174000")
  }

  @Test("the two words are the UUID's halves, order and bits agree with them")
  func words() throws {
    let identifier = try #require(Identifier("123e4567-e89b-12d3-a456-426614174000"))
    #expect(identifier.high == 0x123e_4567_e89b_12d3)
    #expect(identifier.low == 0xa456_4266_1417_4000)
    #expect(Identifier(bits: identifier.bits) == identifier)
    #expect(Identifier(high: 1, low: 0) > Identifier(high: 0, low: .max))
    #expect(Identifier(high: 1, low: 2) < Identifier(high: 1, low: 3))
  }

  // Swift 6.3's optimized async frames under-align 16-byte-aligned values; a UInt128 stored
  // in Identifier crashed every release `nearby publish` (docs/design.md, "The release-build
  // crash"). The ids travel through every async path, so they keep a pointer's alignment.
  @Test("identifiers need no more than a pointer's alignment")
  func alignment() {
    #expect(MemoryLayout<Identifier>.alignment <= MemoryLayout<UInt64>.alignment)
    #expect(MemoryLayout<DeviceID>.alignment <= MemoryLayout<UInt64>.alignment)
    #expect(MemoryLayout<Identifier>.size == 16)
  }
}
