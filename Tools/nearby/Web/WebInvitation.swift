import Foundation

/// What the link a `nearby --web` box prints grants: the right to be a phone of this box
/// (register, report, read its events) and nothing else. Random, made at each start; the box
/// revokes it by stopping, for every phone at once. It travels in the link's fragment, which
/// browsers never send in a request line (so no proxy or access log holds it); the box itself
/// prints the link, so whoever reads the box's output has it.
struct WebInvitation: Sendable {
  let text: String

  /// 32 random bytes, base64url.
  static func make() -> WebInvitation {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    let text = Data(bytes).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
    return WebInvitation(text: "ni_" + text)
  }

  func admits(_ presented: String?) -> Bool {
    guard let presented else { return false }
    return Self.equal(text, presented)
  }

  /// Compares in time that depends on the lengths only.
  static func equal(_ a: String, _ b: String) -> Bool {
    let (x, y) = (Array(a.utf8), Array(b.utf8))
    guard x.count == y.count else { return false }
    var difference: UInt8 = 0
    for index in x.indices { difference |= x[index] ^ y[index] }
    return difference == 0
  }
}
