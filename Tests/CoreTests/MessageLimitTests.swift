import Core
import Foundation
import Testing

@Suite("Message limits")
struct MessageLimitTests {
  @Test("content up to 102 400 bytes; over it the error names the limit")
  func content() throws {
    try Message(content: Data(count: 102_400)).validate()
    #expect(throws: MessageError.contentTooLarge(bytes: 102_401, limit: 102_400)) {
      try Message(content: Data(count: 102_401)).validate()
    }
    #expect("\(MessageError.contentTooLarge(bytes: 102_401, limit: 102_400))".contains("102400"))
  }

  @Test("type up to 32 characters")
  func type() throws {
    try Message(text: "", type: String(repeating: "t", count: 32)).validate()
    #expect(throws: MessageError.typeTooLong(bytes: 33, limit: 32)) {
      try Message(text: "", type: String(repeating: "t", count: 33)).validate()
    }
    #expect(throws: MessageError.typeHasControlCharacters) {
      try Message(text: "", type: "a\nb").validate()
    }
    #expect(throws: MessageError.typeHasControlCharacters) {
      try Message(text: "", type: "a\u{0}b").validate()
    }
    #expect(throws: MessageError.typeHasControlCharacters) {
      try Message(text: "", type: "a\u{85}b").validate()
    }
  }

  @Test("the type's limit counts UTF-8 bytes, not characters")
  func typeBytes() throws {
    try Message(text: "", type: String(repeating: "é", count: 16)).validate()
    #expect(throws: MessageError.typeTooLong(bytes: 34, limit: 32)) {
      try Message(text: "", type: String(repeating: "é", count: 17)).validate()
    }
    // One character of a base letter and 40 combining marks: 81 bytes.
    let flood = "a" + String(repeating: "\u{301}", count: 40)
    #expect(flood.count == 1)
    #expect(throws: MessageError.typeTooLong(bytes: 81, limit: 32)) {
      try Message(text: "", type: flood).validate()
    }
  }

  @Test("namespace up to 64 characters of [A-Za-z0-9._-]")
  func namespace() throws {
    try Message(text: "", namespace: String(repeating: "n", count: 64)).validate()
    try Message(text: "", namespace: "com.example-app_2").validate()
    #expect(throws: MessageError.namespaceTooLong(bytes: 65, limit: 64)) {
      try Message(text: "", namespace: String(repeating: "n", count: 65)).validate()
    }
    #expect(throws: MessageError.namespaceInvalidCharacter("/")) {
      try Message(text: "", namespace: "com/example").validate()
    }
    #expect("\(MessageError.namespaceTooLong(bytes: 65, limit: 64))".contains("64"))
  }

  @Test("messages round-trip through JSON")
  func codable() throws {
    let message = Message(content: Data([0, 1, 2, 255]), type: "bin", namespace: "ns")
    let data = try JSONEncoder().encode(message)
    #expect(try JSONDecoder().decode(Message.self, from: data) == message)
  }
}
