/// How long a publication or subscription stays active before it expires.
///
/// The default is 300 seconds; the longest finite TTL is 86 400 seconds (one day);
/// ``infinite`` never expires. Encoded as a number of seconds, or the string `"infinite"`.
public struct TTL: Sendable, Hashable {
  /// The lifetime in seconds, or `nil` for ``infinite``.
  public let seconds: Double?

  /// The default lifetime: 300 seconds.
  public static let `default` = TTL(uncheckedSeconds: 300)
  /// Never expires.
  public static let infinite = TTL(uncheckedSeconds: nil)
  /// The longest finite lifetime: 86 400 seconds.
  public static let maximumSeconds: Double = 86_400

  /// A finite lifetime.
  /// - Throws: ``StrategyError/ttlOutOfRange(seconds:)`` unless `0 < seconds ≤ 86 400`.
  public init(seconds: Double) throws(StrategyError) {
    guard seconds.isFinite, seconds > 0, seconds <= Self.maximumSeconds else {
      throw .ttlOutOfRange(seconds: seconds)
    }
    self.seconds = seconds
  }

  private init(uncheckedSeconds: Double?) { self.seconds = uncheckedSeconds }

  /// Whether this TTL never expires.
  public var isInfinite: Bool { seconds == nil }
}

extension TTL: Codable {
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let text = try? container.decode(String.self) {
      guard text == "infinite" else {
        throw DecodingError.dataCorruptedError(
          in: container, debugDescription: "TTL must be a number of seconds or \"infinite\"")
      }
      self = .infinite
      return
    }
    let seconds = try container.decode(Double.self)
    do {
      self = try TTL(seconds: seconds)
    } catch {
      throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(error)")
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    if let seconds { try container.encode(seconds) } else { try container.encode("infinite") }
  }
}

extension TTL: CustomStringConvertible {
  public var description: String {
    guard let seconds else { return "infinite" }
    return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
  }
}
