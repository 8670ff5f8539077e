/// A wire value that does not convert to the library's type; the text names the field and the
/// rule, for a 400/422 answer (server) or a log line (client).
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
  public var description: String
  /// Whether the value breaks a documented limit (the server answers 422) rather than being
  /// malformed (400).
  public var isOverLimit: Bool
  public init(_ description: String, isOverLimit: Bool = false) {
    self.description = description
    self.isOverLimit = isOverLimit
  }
}
