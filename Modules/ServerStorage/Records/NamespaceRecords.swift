public import Foundation

/// Who may read a namespace's attachments besides its owner.
public enum NamespaceVisibility: String, Sendable, Hashable, Codable, CaseIterable {
  /// Any project whose request names the namespace reads its attachments.
  case `public`
  /// The owner only (the default).
  case unlisted
}

/// A namespace and the project that owns it.
public struct NamespaceRecord: Sendable, Hashable, Codable {
  public var name: String
  public var project: String
  public var visibility: NamespaceVisibility
  public var createdAt: Date
}
