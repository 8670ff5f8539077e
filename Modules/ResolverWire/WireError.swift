/// A wire value that does not convert to the library's type; the text names the field and the
/// rule, for a 400/422 answer (server) or a log line (client).
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
  public var description: String
  public init(_ description: String) { self.description = description }
}
