/// Why a ``PulseAudioConfiguration`` was refused (by ``PulseAudioMedium/init(configuration:clock:logger:)``).
public enum PulseAudioConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A field out of its range: the field, the value given, and the range it must be in.
  case outOfRange(field: String, value: String, range: String)

  public var description: String {
    switch self {
    case .outOfRange(let field, let value, let range):
      "PulseAudioConfiguration.\(field) \(value) is out of range: it must be \(range)"
    }
  }
}
