public import Foundation
public import Logging

/// Which database a `--database` value names, and opening it.
///
/// - nothing: the default SQLite file (``SQLiteStorage/defaultPath(environment:)``);
/// - `postgres://…` or `postgresql://…`: PostgreSQL (``PostgresStorage``);
/// - `sqlite:PATH`, or any other text: a SQLite file at that path.
public enum StorageLocation: Sendable, Hashable, CustomStringConvertible {
  case sqlite(path: String)
  case postgres(url: String)

  public init(_ text: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
  {
    guard let text, !text.isEmpty else {
      self = .sqlite(path: SQLiteStorage.defaultPath(environment: environment))
      return
    }
    if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
      self = .postgres(url: text)
    } else if text.hasPrefix("sqlite:") {
      self = .sqlite(path: String(text.dropFirst("sqlite:".count)))
    } else {
      self = .sqlite(path: text)
    }
  }

  public var description: String {
    switch self {
    case .sqlite(let path): "sqlite:\(path)"
    case .postgres(let url): PostgresStorage.redacted(url)
    }
  }

  /// Opens the database, creating and migrating it as needed.
  /// - Throws: ``SQLStorageError`` or the database's error, with the location in the text.
  public func open(logger: Logger = Logger(label: "nearby.storage")) async throws
    -> any ResolverStorage
  {
    switch self {
    case .sqlite(let path): try SQLiteStorage(path: path, logger: logger)
    case .postgres(let url): try await PostgresStorage(url: url, logger: logger)
    }
  }
}
