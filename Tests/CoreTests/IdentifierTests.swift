import Core
import Foundation
import Testing

@Suite("Identifiers")
struct IdentifierTests {
  @Test("random identifiers are UUID version 4, distinct, and round-trip through text and JSON")
  func roundTrip() throws {
    var seen = Set<DeviceID>()
    for _ in 0..<1_000 {
      let identifier = DeviceID.random()
      let text = identifier.description
      #expect(text.count == 36)
      #expect(text == text.lowercased())
      #expect(Array(text)[14] == "4")
      #expect("89ab".contains(Array(text)[19]))
      #expect(DeviceID(text) == identifier)
      #expect(DeviceID(text.uppercased()) == identifier)
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
    #expect(DeviceID(text) == nil)
    #expect(SubscriptionID(text) == nil)
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode(PublicationID.self, from: Data("\"\(text)\"".utf8))
    }
  }

  @Test("a known UUID parses to its bytes, and identifiers sort by them")
  func knownValue() throws {
    let identifier = try #require(DeviceID("123E4567-e89b-12d3-a456-426614174000"))
    #expect(
      identifier.uuid
        == UUID(
          uuid: (
            0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17,
            0x40, 0x00
          )))
    #expect(identifier.description == "123e4567-e89b-12d3-a456-426614174000")
    let larger = try #require(DeviceID("123e4567-e89b-12d3-a456-426614174001"))
    #expect(identifier < larger)
  }
}
