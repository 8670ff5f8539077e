public import Foundation

/// Something that happened to a ``DefaultsStore``'s file, as published by
/// ``DefaultsStore/events()``.
public enum StoreEvent: Sendable, Hashable {
  /// Where a change came from.
  public enum Origin: Sendable, Hashable {
    /// A write through this `DefaultsStore` instance.
    case thisStore
    /// Another process, or another `DefaultsStore` instance on the same file.
    case elsewhere
  }

  /// The values of `keys` changed (were set, changed or removed).
  case changed(keys: Set<String>, origin: Origin)
  /// The file could not be read or parsed: it was moved aside and the store started clean.
  case corruptFileMovedAside(CorruptFile)
  /// Changes made elsewhere can no longer be watched for; the text says why.
  case watchFailed(String)
}

/// A store file that could not be read or parsed and was renamed, never deleted.
public struct CorruptFile: Sendable, Hashable {
  /// Where the file was moved: `<app id>.json.corrupt-<UTC time>`.
  public var movedTo: URL
  /// Why it was moved aside (the parse or read error).
  public var reason: String
  /// When.
  public var at: Date
}
