public import Foundation
public import Resolution
import Core
import Tokens

/// What a beacon transmits and is registered by (contract §6): Eddystone's namespace +
/// instance (16 bytes), an Eddystone-EID (8 bytes, the one broadcast at registration),
/// iBeacon's proximity UUID + major + minor (20 bytes), AltBeacon's id (20 bytes).
public struct AdvertisedID: Sendable, Hashable, Codable {
  public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
    case eddystone
    case eddystoneEID = "eddystone-eid"
    case ibeacon
    case altbeacon

    /// The id's length in bytes.
    public var byteCount: Int {
      switch self {
      case .eddystone: 16
      case .eddystoneEID: 8
      case .ibeacon, .altbeacon: 20
      }
    }
  }

  public var kind: Kind
  public var bytes: [UInt8]

  /// Parses the id from hex digits (either case), strictly over ASCII: any other character
  /// (fullwidth digits included, which `Character.isHexDigit` accepts) is refused.
  /// - Throws: ``BeaconInputError`` naming the expected length or the bad text.
  public init(kind: Kind, hex: String) throws(BeaconInputError) {
    let utf8 = hex.utf8
    guard utf8.count == kind.byteCount * 2 else {
      throw .invalid(
        "a \(kind.rawValue) advertisedId.id is \(kind.byteCount * 2) hex digits "
          + "(\(kind.byteCount) bytes), got \(utf8.count) bytes of text")
    }
    guard let bytes = Self.parseHex(utf8) else {
      throw .invalid("advertisedId.id must be hex digits [0-9a-fA-F], got '\(hex.prefix(64))'")
    }
    try self.init(kind: kind, bytes: bytes)
  }

  /// Bytes from pairs of ASCII hex digits; nil for an odd count or any other byte.
  public static func parseHex(_ utf8: String.UTF8View) -> [UInt8]? {
    guard utf8.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(utf8.count / 2)
    var high: UInt8?
    for char in utf8 {
      guard let value = hexValue(char) else { return nil }
      if let first = high {
        bytes.append(first << 4 | value)
        high = nil
      } else {
        high = value
      }
    }
    return bytes
  }

  /// Parses a beacon's name (`kind!hex`, as ``name`` writes it: lower-case hex).
  /// - Throws: ``BeaconInputError`` saying what is malformed.
  public init(name: String) throws(BeaconInputError) {
    guard name.utf8.count <= Self.maximumNameBytes, let bang = name.firstIndex(of: "!"),
      let kind = Kind(rawValue: String(name[..<bang]))
    else {
      throw .invalid(
        "a beacon name is kind!hex-id (kind: eddystone, eddystone-eid, ibeacon or altbeacon), "
          + "got '\(name.prefix(64))'")
    }
    let hex = String(name[name.index(after: bang)...])
    try self.init(kind: kind, hex: hex)
    guard self.hex == hex else {
      throw .invalid("a beacon name's id is lower-case hex, got '\(name.prefix(64))'")
    }
  }

  /// The longest beacon name: `eddystone-eid!` or `altbeacon!` with its id.
  public static let maximumNameBytes = 64

  /// - Throws: ``BeaconInputError`` naming the expected length.
  public init(kind: Kind, bytes: [UInt8]) throws(BeaconInputError) {
    guard bytes.count == kind.byteCount else {
      throw .invalid(
        "a \(kind.rawValue) advertisedId.id is \(kind.byteCount) bytes "
          + "(\(kind.byteCount * 2) hex digits), got \(bytes.count)")
    }
    self.kind = kind
    self.bytes = bytes
  }

  public var hex: String { bytes.map { String(format: "%02x", $0) }.joined() }

  /// The beacon's name: `kind!hex`.
  public var name: String { "\(kind.rawValue)!\(hex)" }
}

/// A beacon input that breaks a rule; the text names it.
public enum BeaconInputError: Error, Sendable, Hashable, CustomStringConvertible {
  case invalid(String)
  /// Over a documented limit (attachment data, description).
  case overLimit(String)

  public var description: String {
    switch self {
    case .invalid(let why), .overLimit(let why): why
    }
  }

  /// The same error with `field: ` before its text (unchanged for an empty field).
  public func prefixed(_ field: String) -> BeaconInputError {
    guard !field.isEmpty else { return self }
    switch self {
    case .invalid(let why): return .invalid("\(field).\(why)")
    case .overLimit(let why): return .overLimit("\(field).\(why)")
    }
  }
}

/// Data attached to a beacon for one `namespace/type`.
public struct AttachmentRecord: Sendable, Hashable {
  /// The most bytes of data an attachment holds.
  public static let maximumDataBytes = 1024

  public var name: String
  public var namespace: String
  public var type: String
  public var data: [UInt8]
  public var createdAt: Date

  public var namespacedType: String { "\(namespace)/\(type)" }
}

/// A registered beacon with its attachments.
public struct BeaconRecord: Sendable, Hashable {
  public var project: String
  public var advertisedID: AdvertisedID
  public var description: String
  public var createdAt: Date
  public var attachments: [AttachmentRecord]
  /// An Eddystone-EID beacon's parameters (the identity key is secret: never answer it).
  public var eid: EddystoneEIDRegistration?

  public var name: String { advertisedID.name }
}

/// An attachment to add: `namespace/type` and data, checked against the limits.
public struct NewAttachment: Sendable, Hashable {
  public var namespace: String
  public var type: String
  public var data: [UInt8]

  /// - Throws: ``BeaconInputError`` for a malformed `namespacedType`, or data over
  ///   ``AttachmentRecord/maximumDataBytes``.
  public init(namespacedType: String, data: [UInt8]) throws(BeaconInputError) {
    let parts = namespacedType.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
      throw .invalid(
        "namespacedType must be 'namespace/type', got '\(TextRules.printable(namespacedType))'")
    }
    let (namespace, type) = (String(parts[0]), String(parts[1]))
    guard namespace.utf8.count <= 64,
      namespace.utf8.allSatisfy({ byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
          UInt8(ascii: "-"):
          true
        default: false
        }
      })
    else {
      throw .invalid(
        "namespacedType: the namespace must be 1 to 64 characters of [A-Za-z0-9._-], "
          + "got '\(TextRules.printable(namespace))'")
    }
    try TextRules.check(
      type, field: "namespacedType's type", maximumBytes: Message.maximumTypeLength)
    guard data.count <= AttachmentRecord.maximumDataBytes else {
      throw .overLimit(
        "attachment data is \(data.count) bytes; the limit is \(AttachmentRecord.maximumDataBytes) bytes"
      )
    }
    self.namespace = namespace
    self.type = type
    self.data = data
  }
}

/// Beacons and attachments (contract §7), always scoped to one project: a project never sees
/// another's beacons or attachments.
extension SQLStore {
  /// Registers a beacon, with its EID parameters for an Eddystone-EID beacon; nil if the
  /// project has it already.
  public func registerBeacon(
    project: String, advertisedID: AdvertisedID, description: String,
    eid: EddystoneEIDRegistration? = nil, attachments: [NewAttachment], now: Date
  ) throws -> BeaconRecord? {
    let exists = try sql.queryFirst(
      "SELECT 1 FROM beacons WHERE project = ? AND name = ?",
      [.text(project), .text(advertisedID.name)])
    guard exists == nil else { return nil }
    try sql.execute(
      """
      INSERT INTO beacons (project, name, kind, advertised_id, description, created_at)
      VALUES (?, ?, ?, ?, ?, ?)
      """,
      [
        .text(project), .text(advertisedID.name), .text(advertisedID.kind.rawValue),
        .blob(advertisedID.bytes), .text(description), SQLValue(now),
      ])
    if let eid {
      try sql.execute(
        """
        INSERT INTO beacon_eids
          (project, beacon, identity_key, rotation_exponent, clock_value, registered_at)
        VALUES (?, ?, ?, ?, ?, ?)
        """,
        [
          .text(project), .text(advertisedID.name), .blob(eid.generator.identityKey),
          .integer(Int64(eid.generator.rotationExponent)), .integer(Int64(eid.clockValue)),
          SQLValue(eid.registeredAt),
        ])
    }
    var record = BeaconRecord(
      project: project, advertisedID: advertisedID, description: description, createdAt: now,
      attachments: [], eid: eid)
    for attachment in attachments {
      if let added = try addAttachment(
        project: project, beacon: advertisedID.name, attachment, now: now)
      {
        record.attachments.append(added)
      }
    }
    return record
  }

  /// The project's beacons (all, or those with these advertised ids), with attachments.
  public func beacons(project: String, advertisedIDs: [AdvertisedID]? = nil) throws
    -> [BeaconRecord]
  {
    let select = """
      SELECT b.kind, b.advertised_id, b.description, b.created_at,
        e.identity_key, e.rotation_exponent, e.clock_value, e.registered_at
      FROM beacons b LEFT JOIN beacon_eids e ON e.project = b.project AND e.beacon = b.name
      """
    var rows: [SQLRow]
    if let advertisedIDs {
      rows = []
      for name in Set(advertisedIDs.map(\.name)).sorted() {
        rows += try sql.query(
          "\(select) WHERE b.project = ? AND b.name = ?", [.text(project), .text(name)])
      }
    } else {
      rows = try sql.query(
        "\(select) WHERE b.project = ? ORDER BY b.created_at, b.name", [.text(project)])
    }
    return try rows.map { row in
      guard let kind = AdvertisedID.Kind(rawValue: try row.text(0)) else {
        throw SQLStorageError.unexpectedValue("beacon kind \(try row.text(0))")
      }
      let id: AdvertisedID
      do { id = try AdvertisedID(kind: kind, bytes: try row.blob(1)) } catch {
        throw SQLStorageError.unexpectedValue("beacon id: \(error)")
      }
      var record = BeaconRecord(
        project: project, advertisedID: id, description: try row.text(2),
        createdAt: Date(timeIntervalSince1970: try row.real(3)), attachments: [],
        eid: try Self.eidRegistration(row, from: 4))
      record.attachments = try attachments(project: project, beacon: record.name)
      return record
    }
  }

  /// Removes a beacon with its attachments; false if the project has no such beacon.
  public func deleteBeacon(project: String, name: String) throws -> Bool {
    let exists = try sql.queryFirst(
      "SELECT 1 FROM beacons WHERE project = ? AND name = ?", [.text(project), .text(name)])
    guard exists != nil else { return false }
    try sql.execute(
      "DELETE FROM attachments WHERE project = ? AND beacon = ?", [.text(project), .text(name)])
    try sql.execute(
      "DELETE FROM beacon_eids WHERE project = ? AND beacon = ?", [.text(project), .text(name)])
    try sql.execute(
      "DELETE FROM beacons WHERE project = ? AND name = ?", [.text(project), .text(name)])
    return true
  }

  /// Adds an attachment; nil if the project has no such beacon.
  public func addAttachment(
    project: String, beacon: String, _ attachment: NewAttachment, now: Date
  ) throws -> AttachmentRecord? {
    let exists = try sql.queryFirst(
      "SELECT 1 FROM beacons WHERE project = ? AND name = ?", [.text(project), .text(beacon)])
    guard exists != nil else { return nil }
    var generator = SystemRandomNumberGenerator()
    let name = (0..<6).map { _ in
      String(format: "%02x", UInt8.random(in: 0...255, using: &generator))
    }
    .joined()
    try sql.execute(
      """
      INSERT INTO attachments (project, beacon, name, namespace, type, data, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      """,
      [
        .text(project), .text(beacon), .text(name), .text(attachment.namespace),
        .text(attachment.type), .blob(attachment.data), SQLValue(now),
      ])
    return AttachmentRecord(
      name: name, namespace: attachment.namespace, type: attachment.type, data: attachment.data,
      createdAt: now)
  }

  /// Removes an attachment; false if there is none by that name.
  public func deleteAttachment(project: String, beacon: String, name: String) throws -> Bool {
    let exists = try sql.queryFirst(
      "SELECT 1 FROM attachments WHERE project = ? AND beacon = ? AND name = ?",
      [.text(project), .text(beacon), .text(name)])
    guard exists != nil else { return false }
    try sql.execute(
      "DELETE FROM attachments WHERE project = ? AND beacon = ? AND name = ?",
      [.text(project), .text(beacon), .text(name)])
    return true
  }

  /// The project's Eddystone-EID beacons by name, with their parameters (for resolving
  /// observed ids).
  public func eidBeacons(project: String) throws
    -> [(name: String, registration: EddystoneEIDRegistration)]
  {
    try sql.query(
      """
      SELECT beacon, identity_key, rotation_exponent, clock_value, registered_at
      FROM beacon_eids WHERE project = ? ORDER BY beacon
      """, [.text(project)]
    ).compactMap { row in
      guard let registration = try Self.eidRegistration(row, from: 1) else { return nil }
      return (name: try row.text(0), registration: registration)
    }
  }

  /// The EID parameters in four columns from `column` (key, exponent, clock, time), or nil
  /// when they are NULL (a beacon of another kind, from a LEFT JOIN).
  private static func eidRegistration(_ row: SQLRow, from column: Int) throws
    -> EddystoneEIDRegistration?
  {
    guard let exponent = try row.optionalInteger(column + 1) else { return nil }
    do {
      return try EddystoneEIDRegistration(
        identityKey: try row.blob(column), rotationExponent: Int(exponent),
        clockValue: UInt32(truncatingIfNeeded: try row.integer(column + 2)),
        registeredAt: Date(timeIntervalSince1970: try row.real(column + 3)))
    } catch {
      throw SQLStorageError.unexpectedValue("beacon EID parameters: \(error)")
    }
  }

  private func attachments(project: String, beacon: String) throws -> [AttachmentRecord] {
    try sql.query(
      """
      SELECT name, namespace, type, data, created_at FROM attachments
      WHERE project = ? AND beacon = ? ORDER BY created_at, name
      """, [.text(project), .text(beacon)]
    ).map { row in
      AttachmentRecord(
        name: try row.text(0), namespace: try row.text(1), type: try row.text(2),
        data: try row.blob(3), createdAt: Date(timeIntervalSince1970: try row.real(4)))
    }
  }
}
