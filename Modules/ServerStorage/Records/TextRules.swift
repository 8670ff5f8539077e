import Core

/// The rules every text the server stores or looks up by must keep: a length in UTF-8 bytes
/// (one `Character` can be megabytes of combining marks) and no control characters (U+0000–
/// U+001F, U+007F–U+009F: PostgreSQL refuses NUL in text, SQLite keeps it, so both engines
/// must never see one).
public enum TextRules {
  /// Checks `text` for the field named `field`.
  /// - Throws: ``BeaconInputError/overLimit(_:)`` over `maximumBytes`,
  ///   ``BeaconInputError/invalid(_:)`` for a control character; both name the field.
  public static func check(_ text: String, field: String, maximumBytes: Int)
    throws(BeaconInputError)
  {
    let bytes = text.utf8.count
    guard bytes <= maximumBytes else {
      throw .overLimit("\(field) is \(bytes) bytes of UTF-8; the limit is \(maximumBytes) bytes")
    }
    guard !Message.containsControlCharacters(text) else {
      throw .invalid(
        "\(field) must not contain control characters (U+0000–U+001F, U+007F–U+009F), got "
          + "'\(printable(text))'")
    }
  }

  /// The start of `text` (100 scalars) with control characters escaped, for error messages.
  public static func printable(_ text: String) -> String {
    text.unicodeScalars.prefix(100).map { scalar in
      Message.containsControlCharacters(String(scalar))
        ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
    }.joined()
  }
}
