public import Foundation

/// How a resolver learns an Eddystone-EID beacon: the identity key it shares with the beacon,
/// the rotation exponent, and the beacon's time counter when it is registered.
public struct EddystoneEIDParameters: Sendable, Hashable {
  /// The AES-128 identity key (16 bytes). Secret: whoever has it can follow the beacon.
  public var identityKey: [UInt8]
  /// K: the beacon broadcasts a new id every 2^K seconds (0…15).
  public var rotationExponent: Int
  /// The beacon's time counter (seconds) at registration.
  public var clockValue: UInt32

  public init(identityKey: [UInt8], rotationExponent: Int, clockValue: UInt32 = 0) {
    self.identityKey = identityKey
    self.rotationExponent = rotationExponent
    self.clockValue = clockValue
  }

  /// The registration of a beacon that broadcasts `eid` now, checked against these
  /// parameters.
  /// - Throws: ``EddystoneEIDError`` naming the problem: a malformed key, exponent or id, or an
  ///   id these parameters do not produce at ``clockValue`` (within the tolerance).
  public func register(eid: [UInt8], at now: Date) throws(EddystoneEIDError)
    -> EddystoneEIDRegistration
  {
    let registration = try EddystoneEIDRegistration(
      identityKey: identityKey, rotationExponent: rotationExponent, clockValue: clockValue,
      registeredAt: now)
    try registration.verify(eid: eid)
    return registration
  }
}
