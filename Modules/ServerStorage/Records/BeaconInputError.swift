/// A beacon input that breaks a rule; the text names it.
public enum BeaconInputError: Error, Sendable, Hashable, CustomStringConvertible {
  case invalid(String)
  /// Over a documented limit (attachment data, description).
  case overLimit(String)
  /// A namespace another project owns: only its owner writes in it.
  case notOwned(String)
  /// The beacon's state forbids it: registered already, or decommissioned.
  case conflict(String)

  public var description: String {
    switch self {
    case .invalid(let why), .overLimit(let why), .notOwned(let why), .conflict(let why): why
    }
  }

  /// The same error with `field: ` before its text (unchanged for an empty field).
  public func prefixed(_ field: String) -> BeaconInputError {
    guard !field.isEmpty else { return self }
    switch self {
    case .invalid(let why): return .invalid("\(field).\(why)")
    case .overLimit(let why): return .overLimit("\(field).\(why)")
    case .notOwned(let why): return .notOwned("\(field).\(why)")
    case .conflict(let why): return .conflict("\(field).\(why)")
    }
  }
}
