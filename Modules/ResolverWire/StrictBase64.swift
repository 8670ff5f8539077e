import Foundation

/// Base64 (RFC 4648 §4, with padding) decoded strictly: only the canonical encoding of some
/// bytes is accepted. The generated `Base64EncodedData` decodes permissively (it skips any
/// character outside the alphabet), so the API's base64 fields are plain strings on the wire
/// and pass through here.
public enum StrictBase64 {
  /// The bytes `text` encodes.
  /// - Throws: ``WireError`` naming `field` for a length that is not a multiple of 4, a
  ///   character outside `[A-Za-z0-9+/]`, misplaced `=`, or non-zero padding bits.
  public static func decode(_ text: String, field: String) throws(WireError) -> [UInt8] {
    let utf8 = text.utf8
    guard utf8.count % 4 == 0 else {
      throw WireError(
        "\(field): base64 is a multiple of 4 characters (with '=' padding), got \(utf8.count)")
    }
    guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else {
      throw WireError(
        "\(field): not canonical base64 (RFC 4648: [A-Za-z0-9+/], '=' padding, no spaces), "
          + "got '\(text.unicodeScalars.prefix(40).map { $0.escaped(asASCII: true) }.joined())'")
    }
    return Array(data)
  }

  /// The canonical encoding of `bytes`.
  public static func encode(_ bytes: some Collection<UInt8>) -> String {
    Data(bytes).base64EncodedString()
  }
}
