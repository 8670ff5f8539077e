public import Foundation

/// What a key may do. Every installed copy of an app carries its key, so the key apps carry
/// must not also manage the project.
public enum APIKeyRole: String, Sendable, Hashable, Codable, CaseIterable {
  /// Devices: register, report, read events, ask for the attachments of observed beacons.
  case client
  /// Everything a client key may do, and the project's beacons and their attachments.
  /// Keys made before roles existed are admin keys.
  case admin

  /// Whether a key of this role may do what `role` may.
  public func includes(_ role: APIKeyRole) -> Bool {
    self == .admin || role == .client
  }
}

/// A project API key as the server keeps it: its digest, never the key itself.
public struct APIKeyRecord: Sendable, Hashable, Codable {
  /// A short public name for the key (shown in lists, used to revoke it).
  public var id: String
  public var project: String
  public var role: APIKeyRole
  public var label: String
  public var createdAt: Date
  public var revokedAt: Date?

  public var isRevoked: Bool { revokedAt != nil }
}

/// A newly created key: the only time its secret text is known.
public struct NewAPIKey: Sendable, Hashable, Codable {
  public var record: APIKeyRecord
  /// The key to give to apps (`nk_` + 32 random bytes in base64url).
  public var key: String
}
