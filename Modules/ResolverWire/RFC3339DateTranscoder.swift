public import Foundation
public import OpenAPIRuntime

/// Times on the wire as RFC 3339 (`2026-11-21T14:15:35.123Z`), parsed and written by
/// Foundation's `Date.ISO8601FormatStyle`. OpenAPIRuntime's default transcoder goes through a
/// locked `ISO8601DateFormatter` (ICU), which cost a third of the server's CPU under load: every
/// sighting carries a time. Fractional seconds are written, and accepted with or without.
public struct RFC3339DateTranscoder: DateTranscoder {
  private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
  private static let withoutFraction = Date.ISO8601FormatStyle()

  public init() {}

  public func encode(_ date: Date) throws -> String { Self.withFraction.format(date) }

  public func decode(_ text: String) throws -> Date {
    if let date = try? Self.withFraction.parse(text) { return date }
    do { return try Self.withoutFraction.parse(text) } catch {
      throw WireError("'\(text.prefix(64))' is not an RFC 3339 time (2026-11-21T14:15:35Z)")
    }
  }
}

extension Configuration {
  /// The settings both the server and the client use: RFC 3339 times through
  /// ``RFC3339DateTranscoder`` and compact JSON.
  public static var nearby: Configuration {
    Configuration(dateTranscoder: RFC3339DateTranscoder(), jsonEncodingOptions: [])
  }
}
