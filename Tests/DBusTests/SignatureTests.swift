import DBus
import Testing

@Suite struct SignatureTests {
  @Test(arguments: [
    "y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "v", "ay", "as", "a{sv}",
    "a{qv}", "a{oa{sa{sv}}}", "(iu)", "a(sa{sv})", "aay", "(y(bn)a{s(qv)})",
  ])
  func parsesAndPrints(_ signature: String) throws {
    #expect(try DBusType(signature: signature).signature == signature)
  }

  @Test func listsABody() throws {
    #expect(
      try DBusType.list(signature: "sa{sv}as") == [
        .string, .dictionary(key: .string, value: .variant), .array(.string),
      ])
    #expect(try DBusType.list(signature: "").isEmpty)
  }

  @Test(arguments: [
    "", "a", "a{", "a{sv", "a{vs}", "a{sss}", "()", "(i", "i)", "h", "ah", "z", "{sv}",
    "a{(i)s}", String(repeating: "a", count: 33) + "i",
    String(repeating: "(", count: 33) + "i" + String(repeating: ")", count: 33),
  ])
  func refusesMalformed(_ signature: String) {
    #expect(throws: DBusError.self) { try DBusType(signature: signature) }
  }

  @Test func refusesTooLong() {
    let long = String(repeating: "i", count: 256)
    #expect(throws: DBusError.self) { try DBusType.list(signature: long) }
    #expect(throws: DBusError.self) { try DBusSignature(long) }
  }

  @Test func checksObjectPaths() throws {
    for good in ["/", "/org", "/org/bluez/hci0", "/a_b/C9"] {
      #expect(DBusObjectPath.isValid(good))
    }
    for bad in ["", "org", "/org/", "//", "/org//bluez", "/org/blu-ez", "/é"] {
      #expect(!DBusObjectPath.isValid(bad))
      #expect(throws: DBusError.self) { try DBusObjectPath(bad) }
    }
    let child = try DBusObjectPath("/org").appending("bluez")
    #expect(child.rawValue == "/org/bluez")
    #expect(child.isDescendant(of: try DBusObjectPath("/org")))
    #expect(!(try DBusObjectPath("/orgx")).isDescendant(of: try DBusObjectPath("/org")))
  }
}
