@_spi(Resolver) public import Core
import Crypto
import Foundation
import Tokens

/// A device's secret is kept as a digest and checked in constant time: whoever reads the
/// database (a backup, a leaked file) cannot act as a device, and the time an answer takes
/// does not tell how much of a guess was right.
extension DeviceRecord {
  /// The prefix of a stored digest; a stored value without it is a secret kept before
  /// digests.
  static let digestPrefix = "sha256:"

  /// The stored form of `secret`: `sha256:` and its SHA-256 in hex.
  public static func digest(ofSecret secret: String) -> String {
    digestPrefix + Hex.encode(SHA256.hash(data: Data(secret.utf8)))
  }

  /// Whether `secret` is this device's, compared in constant time (for digests of equal
  /// length, as all are).
  public func accepts(secret: String) -> Bool {
    let given = holdsPlainSecret ? secret : Self.digest(ofSecret: secret)
    return Self.constantTimeEqual(Array(secretDigest.utf8), Array(given.utf8))
  }

  /// `record` if `credentials` are its own: the device `credentials.id` names, found, and
  /// the secret its own.
  /// - Throws: `ResolverError.unknownDevice` (Core) when `record` is nil,
  ///   `ResolverError.wrongSecret` when the secret is not the device's.
  @_spi(Resolver) public static func authenticated(
    _ record: DeviceRecord?, as credentials: DeviceCredentials
  ) throws -> DeviceRecord {
    guard let record else { throw ResolverError.unknownDevice(credentials.id) }
    guard record.accepts(secret: credentials.secret) else {
      throw ResolverError.wrongSecret(credentials.id)
    }
    return record
  }

  /// Whether the stored value is a secret kept before digests (to be replaced by its
  /// digest).
  public var holdsPlainSecret: Bool { !secretDigest.hasPrefix(Self.digestPrefix) }

  static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
  }
}
