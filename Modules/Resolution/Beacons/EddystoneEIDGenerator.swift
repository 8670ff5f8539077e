import Crypto
import CryptoExtras

/// Computes the ephemeral ids of an Eddystone-EID beacon (the Eddystone-EID specification,
/// `eid-computation.md`): a pure value, safe on any thread.
///
/// The temporary key is AES-128 of `11 × 0x00 ‖ 0xFF ‖ 0x00 0x00 ‖ time >> 16` (big-endian)
/// under the identity key; the EID is the first 8 bytes of AES-128 of
/// `11 × 0x00 ‖ K ‖ time with its K low bits cleared` (32-bit big-endian) under the temporary
/// key, K being the rotation exponent and time the beacon's seconds counter.
public struct EddystoneEIDGenerator: Sendable, Hashable {
  /// The length of an identity key in bytes.
  public static let identityKeyByteCount = 16
  /// The length of an ephemeral id in bytes.
  public static let eidByteCount = 8
  /// The largest rotation exponent (a new id every 2^15 s, about 9 hours).
  public static let maximumRotationExponent = 15

  /// The beacon's AES-128 identity key (16 bytes).
  public let identityKey: [UInt8]
  /// K: the beacon broadcasts a new id every 2^K seconds (0…15).
  public let rotationExponent: Int
  private let key: SymmetricKey

  /// A generator for one beacon.
  /// - Throws: ``EddystoneEIDError`` for a key that is not 16 bytes or an exponent outside
  ///   0…15.
  public init(identityKey: [UInt8], rotationExponent: Int) throws(EddystoneEIDError) {
    guard identityKey.count == Self.identityKeyByteCount else {
      throw .invalid(
        "the identity key is 16 bytes (32 hex digits), got \(identityKey.count) bytes")
    }
    guard (0...Self.maximumRotationExponent).contains(rotationExponent) else {
      throw .invalid("the rotation exponent is 0 to 15, got \(rotationExponent)")
    }
    self.identityKey = identityKey
    self.rotationExponent = rotationExponent
    key = SymmetricKey(data: identityKey)
  }

  /// The rotation period: 2^K seconds.
  public var period: Int64 { 1 << Int64(rotationExponent) }

  /// The temporary key of the 65 536-second epoch `beaconTime` falls in.
  public func temporaryKey(beaconTime: UInt32) -> [UInt8] {
    var block = [UInt8](repeating: 0, count: 16)
    block[11] = 0xff
    block[14] = UInt8(truncatingIfNeeded: beaconTime >> 24)
    block[15] = UInt8(truncatingIfNeeded: beaconTime >> 16)
    return Self.encrypt(block, key: key)
  }

  /// The 8-byte id the beacon broadcasts at `beaconTime`.
  public func eid(beaconTime: UInt32) -> [UInt8] {
    eid(
      beaconTime: beaconTime, temporaryKey: SymmetricKey(data: temporaryKey(beaconTime: beaconTime))
    )
  }

  /// The ids of every rotation period that overlaps `range` of beacon time (seconds; the
  /// 32-bit counter wraps), each with the start of its period. Temporary keys are computed once
  /// per 65 536-second epoch.
  public func eids(overlapping range: ClosedRange<Int64>) -> [(periodStart: Int64, eid: [UInt8])] {
    var answer: [(periodStart: Int64, eid: [UInt8])] = []
    var start = range.lowerBound - ((range.lowerBound % period) + period) % period
    var epoch: (number: UInt32, key: SymmetricKey)?
    while start <= range.upperBound {
      let time = UInt32(truncatingIfNeeded: start)
      if epoch?.number != time >> 16 {
        epoch = (time >> 16, SymmetricKey(data: temporaryKey(beaconTime: time)))
      }
      answer.append((start, eid(beaconTime: time, temporaryKey: epoch!.key)))
      start += period
    }
    return answer
  }

  private func eid(beaconTime: UInt32, temporaryKey: SymmetricKey) -> [UInt8] {
    let cleared = beaconTime & ~UInt32((1 << UInt32(rotationExponent)) - 1)
    var block = [UInt8](repeating: 0, count: 16)
    block[11] = UInt8(rotationExponent)
    for index in 0..<4 {
      block[12 + index] = UInt8(truncatingIfNeeded: cleared >> UInt32(24 - 8 * index))
    }
    return Array(Self.encrypt(block, key: temporaryKey).prefix(Self.eidByteCount))
  }

  /// One AES-128 block; the block and key sizes are fixed here, so the primitive cannot fail.
  private static func encrypt(_ block: [UInt8], key: SymmetricKey) -> [UInt8] {
    var block = block
    do { try AES.permute(&block, key: key) } catch {
      preconditionFailure("AES-128 of one 16-byte block failed: \(error)")
    }
    return block
  }

  public static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.identityKey == rhs.identityKey && lhs.rotationExponent == rhs.rotationExponent
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(identityKey)
    hasher.combine(rotationExponent)
  }
}

/// Why Eddystone-EID parameters or an EID were refused; the text names the problem.
public enum EddystoneEIDError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A malformed parameter (key length, exponent range, EID length).
  case invalid(String)
  /// The EID given at registration is not one the parameters produce now.
  case mismatch(String)

  public var description: String {
    switch self {
    case .invalid(let why), .mismatch(let why): why
    }
  }
}
