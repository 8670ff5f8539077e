public import Core
public import Foundation
public import Resolution
public import Tokens
import Crypto
import Strategy

/// The resolution engine's state, and the server's own tables (event log, API keys), in a SQL
/// database: one instance wraps one connection inside one transaction.
///
/// It is made by ``ResolverStorage/transaction(_:)`` and used only inside that call, on the
/// storage's thread; nothing outlives the transaction, so several server processes can share
/// one PostgreSQL database (see ``PostgresStorage``).
public final class SQLStore: ResolutionStore {
  /// The connection, for the storage's own statements inside the same transaction (the
  /// batcher's savepoints, PostgreSQL's advisory lock) and this package's tests; not API.
  package let sql: any SQLConnection
  private let encoder: JSONEncoder
  private let decoder = JSONDecoder()
  /// Devices read or written in this transaction (`.some(nil)`: known to be absent). A store
  /// lives for one transaction (one savepoint of a batch), so nothing here goes stale.
  var devices: [DeviceID: DeviceRecord?] = [:]
  /// Token bindings read in this transaction (`.some(nil)`: no binding), same lifetime.
  var bindings: [UInt64: (device: DeviceID, until: Date)?] = [:]
  /// Last sighting times read or written in this transaction (`.some(nil)`: none).
  var sightingTimes: [ProximityKey: Date?] = [:]
  /// Sightings recorded but not yet written: written together, in one statement, before
  /// anything reads the table and when the transaction's work is done (``finish()``).
  private var pendingSightings: [ProximityKey: Date] = [:]

  /// What the storage remembers about its deadlines between transactions (SQLite), if
  /// anything.
  public let deadlineHint: DeadlineHint?

  /// A store over a connection that is inside a transaction.
  /// - Parameters:
  ///   - sql: the connection, inside its transaction.
  ///   - deadlineHint: the storage's, when it has one writer (see ``DeadlineHint``).
  public init(_ sql: any SQLConnection, deadlineHint: DeadlineHint? = nil) {
    self.sql = sql
    self.deadlineHint = deadlineHint
    encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
  }

  // MARK: Devices

  public func device(_ id: DeviceID) throws -> DeviceRecord? {
    if let cached = devices[id] { return cached }
    let record = try sql.queryFirst(
      """
      SELECT \(Self.deviceColumns()) FROM devices WHERE id = ?
      """, [.text(id.description)]
    ).map(deviceRecord)
    devices[id] = record
    return record
  }

  /// Locks the rows of `ids` until the transaction ends (PostgreSQL: one `SELECT … ORDER BY id
  /// FOR UPDATE`, so every transaction takes its locks in the same order; SQLite: nothing to
  /// do, its one writer excludes everyone) and keeps what it read for this transaction.
  /// Devices that do not exist are remembered as absent.
  /// - Parameter waiting: false for locks taken out of order (after others): then a row
  ///   another transaction holds is not waited for (`NOWAIT`).
  /// - Throws: ``SQLStorageError/lockBusy`` when not `waiting` and a row is held; the
  ///   database's error.
  func lockDevices(_ ids: some Collection<DeviceID>, waiting: Bool = true) throws {
    guard sql.dialect == .postgres, !ids.isEmpty else { return }
    let list = StatementShapes.inList(ids.map { .text($0.description) })
    let rows = try sql.query(
      """
      SELECT \(Self.deviceColumns()) FROM devices
      WHERE id IN (\(list.marks)) ORDER BY id FOR UPDATE\(waiting ? "" : " NOWAIT")
      """, list.binds)
    for id in ids { devices[id] = .some(nil) }
    for row in rows {
      let record = try deviceRecord(row)
      devices[record.id] = record
    }
  }

  /// Reads the rows of `ids` (without locking them) into this transaction's cache.
  func readDevices(_ ids: some Collection<DeviceID>) throws {
    let list = StatementShapes.inList(ids.map { .text($0.description) })
    let rows = try sql.query(
      """
      SELECT \(Self.deviceColumns()) FROM devices WHERE id IN (\(list.marks))
      """, list.binds)
    for id in ids { devices[id] = .some(nil) }
    for row in rows {
      let record = try deviceRecord(row)
      devices[record.id] = record
    }
  }

  public func saveDevice(_ device: DeviceRecord) throws {
    devices[device.id] = nil
    try sql.execute(
      """
      INSERT INTO devices (\(Self.deviceColumns()))
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET project = excluded.project, secret = excluded.secret,
        token = excluded.token, token_expires_at = excluded.token_expires_at,
        usage = excluded.usage, revision = excluded.revision,
        last_event_sequence = excluded.last_event_sequence,
        last_report_at = excluded.last_report_at,
        new_neighbors_since = excluded.new_neighbors_since,
        new_neighbors = excluded.new_neighbors, scoped_handles = excluded.scoped_handles
      """,
      [
        .text(device.id.description), .text(device.project), .text(device.secretDigest),
        SQLValue(bits: device.token.value), SQLValue(device.tokenExpiresAt),
        .text(UsageText.encode(device.usage)), SQLValue(bits: device.revision),
        SQLValue(bits: device.lastEventSequence), SQLValue(device.lastReportAt),
        SQLValue(device.newNeighbors.since),
        .integer(Int64(device.newNeighbors.count)), .integer(device.scopesHandles ? 1 : 0),
      ])
    devices[device.id] = device
  }

  public func removeDevice(_ id: DeviceID) throws {
    devices[id] = .some(nil)
    try sql.execute("DELETE FROM devices WHERE id = ?", [.text(id.description)])
    try sql.execute("DELETE FROM events WHERE device = ?", [.text(id.description)])
  }
  public func silentDevices(before time: Date, limit: Int) throws -> [DeviceID] {
    try sql.query(
      "SELECT id FROM devices WHERE last_report_at < ? ORDER BY last_report_at LIMIT ?",
      [SQLValue(time), .integer(Int64(max(limit, 0)))]
    ).map { try identifier($0.text(0)) }
  }

  func deviceRecord(_ row: SQLRow) throws -> DeviceRecord { try Self.deviceRecord(from: row) }

  /// The device in a row of ``deviceColumns(prefix:)``.
  static func deviceRecord(from row: SQLRow) throws -> DeviceRecord {
    var record = DeviceRecord(
      id: try identifier(row.text(0)), project: try row.text(1), secretDigest: try row.text(2),
      token: Token(value: UInt64(bitPattern: try row.integer(3))),
      tokenExpiresAt: Date(timeIntervalSince1970: try row.real(4)),
      usage: try UsageText.decode(row.text(5)))
    record.revision = UInt64(bitPattern: try row.integer(6))
    record.lastEventSequence = UInt64(bitPattern: try row.integer(7))
    record.lastReportAt = Date(timeIntervalSince1970: try row.real(8))
    record.newNeighbors = NewNeighborWindow(
      since: try row.optionalReal(9).map(Date.init(timeIntervalSince1970:)),
      count: Int(try row.integer(10)))
    record.scopesHandles = try row.integer(11) != 0
    return record
  }

  /// The columns ``deviceRecord(_:)`` reads, in its order, each after `prefix`.
  static func deviceColumns(prefix: String = "") -> String {
    [
      "id", "project", "secret", "token", "token_expires_at", "usage", "revision",
      "last_event_sequence", "last_report_at", "new_neighbors_since", "new_neighbors",
      "scoped_handles",
    ].map { prefix + $0 }.joined(separator: ", ")
  }

  // MARK: Tokens

  public func bind(_ token: Token, to device: DeviceID, until: Date) throws {
    bindings[token.value] = (device, until)
    try sql.execute(
      """
      INSERT INTO tokens (token, device, valid_until) VALUES (?, ?, ?)
      ON CONFLICT (token) DO UPDATE SET device = excluded.device,
        valid_until = excluded.valid_until
      """, [SQLValue(bits: token.value), .text(device.description), SQLValue(until)])
  }

  public func device(heard token: Token, at time: Date) throws -> DeviceID? {
    if let known = bindings[token.value] {
      guard let known, known.until > time else { return nil }
      return known.device
    }
    return try sql.queryFirst(
      "SELECT device FROM tokens WHERE token = ? AND valid_until > ?",
      [SQLValue(bits: token.value), SQLValue(time)]
    ).map { try identifier($0.text(0)) }
  }

  public func binding(of token: Token) throws -> Date? {
    try sql.queryFirst(
      "SELECT valid_until FROM tokens WHERE token = ?", [SQLValue(bits: token.value)]
    ).map { Date(timeIntervalSince1970: try $0.real(0)) }
  }

  public func unbind(_ token: Token) throws {
    bindings[token.value] = .some(nil)
    try sql.execute("DELETE FROM tokens WHERE token = ?", [SQLValue(bits: token.value)])
  }

  // MARK: Publications

  private static let publicationColumns =
    "id, device, project, namespace, type, content, strategy, expires_at"

  public func publication(_ id: PublicationID) throws -> PublicationRecord? {
    try sql.queryFirst(
      "SELECT \(Self.publicationColumns) FROM publications WHERE id = ?", [.text(id.description)]
    ).map(publicationRecord)
  }

  public func savePublication(_ publication: PublicationRecord) throws {
    let message = publication.message
    try sql.execute(
      """
      INSERT INTO publications
        (id, device, project, namespace, type, content, digest, strategy, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET device = excluded.device, project = excluded.project,
        namespace = excluded.namespace, type = excluded.type, content = excluded.content,
        digest = excluded.digest, strategy = excluded.strategy, expires_at = excluded.expires_at
      """,
      [
        .text(publication.id.description), .text(publication.device.description),
        .text(publication.project), .text(message.namespace), .text(message.type),
        .blob(Array(message.content)), .blob(Self.digest(of: message)),
        .text(try json(publication.strategy)), SQLValue(publication.expiresAt),
      ])
  }

  public func removePublication(_ id: PublicationID) throws -> PublicationRecord? {
    guard let record = try publication(id) else { return nil }
    try sql.execute("DELETE FROM publications WHERE id = ?", [.text(id.description)])
    return record
  }

  public func publications(on device: DeviceID) throws -> [PublicationRecord] {
    try sql.query(
      "SELECT \(Self.publicationColumns) FROM publications WHERE device = ? ORDER BY id",
      [.text(device.description)]
    ).map(publicationRecord)
  }

  /// Without the messages: the handle limit needs only the ids.
  public func publicationIDs(on device: DeviceID) throws -> [PublicationID] {
    try sql.query("SELECT id FROM publications WHERE device = ?", [.text(device.description)])
      .map { try identifier($0.text(0)) }
  }

  public func publications(on device: DeviceID, acceptedBy subscription: SubscriptionRecord)
    throws -> [PublicationRecord]
  {
    if let type = subscription.type {
      return try sql.query(
        """
        SELECT \(Self.publicationColumns) FROM publications
        WHERE device = ? AND namespace = ? AND type = ? ORDER BY id
        """, [.text(device.description), .text(subscription.namespace), .text(type)]
      ).map(publicationRecord)
    }
    return try sql.query(
      """
      SELECT \(Self.publicationColumns) FROM publications
      WHERE device = ? AND namespace = ? ORDER BY id
      """, [.text(device.description), .text(subscription.namespace)]
    ).map(publicationRecord)
  }

  private func publicationRecord(_ row: SQLRow) throws -> PublicationRecord {
    PublicationRecord(
      id: try identifier(row.text(0)), device: try identifier(row.text(1)),
      project: try row.text(2),
      message: Message(
        content: Data(try row.blob(5)), type: try row.text(4), namespace: try row.text(3)),
      strategy: try decode(Strategy.self, row.text(6)),
      expiresAt: try row.optionalReal(7).map(Date.init(timeIntervalSince1970:)))
  }

  // MARK: Subscriptions

  private static let subscriptionColumns =
    "id, device, project, namespace, type, strategy, device_types, expires_at"

  public func subscription(_ id: SubscriptionID) throws -> SubscriptionRecord? {
    try sql.queryFirst(
      "SELECT \(Self.subscriptionColumns) FROM subscriptions WHERE id = ?",
      [.text(id.description)]
    ).map(subscriptionRecord)
  }

  public func saveSubscription(_ subscription: SubscriptionRecord) throws {
    try sql.execute(
      """
      INSERT INTO subscriptions
        (id, device, project, namespace, type, strategy, device_types, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET device = excluded.device, project = excluded.project,
        namespace = excluded.namespace, type = excluded.type, strategy = excluded.strategy,
        device_types = excluded.device_types, expires_at = excluded.expires_at
      """,
      [
        .text(subscription.id.description), .text(subscription.device.description),
        .text(subscription.project), .text(subscription.namespace), SQLValue(subscription.type),
        .text(try json(subscription.strategy)),
        .integer(Int64(subscription.deviceTypes.rawValue)), SQLValue(subscription.expiresAt),
      ])
  }

  public func removeSubscription(_ id: SubscriptionID) throws -> SubscriptionRecord? {
    guard let record = try subscription(id) else { return nil }
    try sql.execute("DELETE FROM subscriptions WHERE id = ?", [.text(id.description)])
    return record
  }

  public func subscriptions(on device: DeviceID) throws -> [SubscriptionRecord] {
    try sql.query(
      "SELECT \(Self.subscriptionColumns) FROM subscriptions WHERE device = ? ORDER BY id",
      [.text(device.description)]
    ).map(subscriptionRecord)
  }

  public func subscriptionIDs(on device: DeviceID) throws -> [SubscriptionID] {
    try sql.query("SELECT id FROM subscriptions WHERE device = ?", [.text(device.description)])
      .map { try identifier($0.text(0)) }
  }

  public func subscriptions(on device: DeviceID, accepting publication: PublicationRecord)
    throws -> [SubscriptionRecord]
  {
    try sql.query(
      """
      SELECT \(Self.subscriptionColumns) FROM subscriptions
      WHERE device = ? AND namespace = ? AND (type IS NULL OR type = ?) ORDER BY id
      """,
      [
        .text(device.description), .text(publication.message.namespace),
        .text(publication.message.type),
      ]
    ).map(subscriptionRecord)
  }

  private func subscriptionRecord(_ row: SQLRow) throws -> SubscriptionRecord {
    SubscriptionRecord(
      id: try identifier(row.text(0)), device: try identifier(row.text(1)),
      project: try row.text(2), namespace: try row.text(3), type: try row.optionalText(4),
      strategy: try decode(Strategy.self, row.text(5)),
      deviceTypes: DeviceTypes(rawValue: .init(truncatingIfNeeded: try row.integer(6))),
      expiresAt: try row.optionalReal(7).map(Date.init(timeIntervalSince1970:)))
  }

  // MARK: Sightings

  private func keyValues(_ key: ProximityKey) -> [SQLValue] {
    [.text(key.hearer.description), .text(key.heard.description), .integer(Int64(key.medium))]
  }

  public func lastSighting(_ key: ProximityKey) throws -> Date? {
    if let known = sightingTimes[key] { return known }
    try writePendingSightings()
    let time = try sql.queryFirst(
      "SELECT seen_at FROM sightings WHERE hearer = ? AND heard = ? AND medium = ?",
      keyValues(key)
    ).map { Date(timeIntervalSince1970: try $0.real(0)) }
    sightingTimes[key] = time
    return time
  }

  public func recordSighting(_ key: ProximityKey, at time: Date) throws -> Date? {
    let previous = try lastSighting(key)
    pendingSightings[key] = time
    sightingTimes[key] = time
    return previous
  }

  public func removeSighting(_ key: ProximityKey) throws {
    try writePendingSightings()
    sightingTimes[key] = .some(nil)
    try sql.execute(
      "DELETE FROM sightings WHERE hearer = ? AND heard = ? AND medium = ?", keyValues(key))
  }

  /// Writes what this store holds back: call once the transaction's work is done, before
  /// COMMIT (the storages do; a store's caller never needs to).
  /// - Throws: the database's error.
  public func finish() throws {
    try writePendingSightings()
  }

  private func writePendingSightings() throws {
    guard !pendingSightings.isEmpty else { return }
    // Rows keyed by a device this transaction holds (or, on SQLite, the only writer): no
    // other transaction writes them, so their order does not matter.
    let pending = Array(pendingSightings)
    pendingSightings = [:]
    var start = 0
    for size in StatementShapes.chunks(pending.count) {
      var binds: [SQLValue] = []
      binds.reserveCapacity(size * 4)
      for (key, time) in pending[start..<start + size] {
        binds += keyValues(key) + [SQLValue(time)]
      }
      let values = Array(repeating: "(?, ?, ?, ?)", count: size).joined(separator: ", ")
      try sql.execute(
        """
        INSERT INTO sightings (hearer, heard, medium, seen_at) VALUES \(values)
        ON CONFLICT (hearer, heard, medium) DO UPDATE SET seen_at = excluded.seen_at
        """, binds)
      start += size
    }
  }

  public func neighbors(of device: DeviceID) throws -> [DeviceID] {
    try writePendingSightings()
    return try sql.query(
      """
      SELECT heard FROM sightings WHERE hearer = ?
      UNION SELECT hearer FROM sightings WHERE heard = ?
      """, [.text(device.description), .text(device.description)]
    ).map { try identifier($0.text(0)) }.sorted { $0.identifier < $1.identifier }
  }

  // MARK: Deliveries

  public func addDelivery(
    subscription: SubscriptionID, publication: PublicationID, message: MessageKey
  ) throws -> Bool {
    let digest = Self.digest(of: message.message)
    let others =
      try sql.queryFirst(
        "SELECT COUNT(*) FROM deliveries WHERE subscription = ? AND digest = ?",
        [.text(subscription.description), .blob(digest)])?.integer(0) ?? 0
    let existing = try sql.queryFirst(
      "SELECT 1 FROM deliveries WHERE subscription = ? AND publication = ?",
      [.text(subscription.description), .text(publication.description)])
    guard existing == nil else { return false }
    try sql.execute(
      "INSERT INTO deliveries (subscription, publication, digest) VALUES (?, ?, ?)",
      [.text(subscription.description), .text(publication.description), .blob(digest)])
    return others == 0
  }

  public func removeDelivery(
    subscription: SubscriptionID, publication: PublicationID, message: MessageKey
  ) throws -> Bool {
    guard try isDelivered(subscription: subscription, publication: publication) else {
      return false
    }
    try sql.execute(
      "DELETE FROM deliveries WHERE subscription = ? AND publication = ?",
      [.text(subscription.description), .text(publication.description)])
    let remaining =
      try sql.queryFirst(
        "SELECT COUNT(*) FROM deliveries WHERE subscription = ? AND digest = ?",
        [.text(subscription.description), .blob(Self.digest(of: message.message))])?.integer(0) ?? 0
    return remaining == 0
  }

  public func isDelivered(subscription: SubscriptionID, publication: PublicationID) throws -> Bool {
    try sql.queryFirst(
      "SELECT 1 FROM deliveries WHERE subscription = ? AND publication = ?",
      [.text(subscription.description), .text(publication.description)]) != nil
  }

  public func deliveries(of publication: PublicationID) throws -> [SubscriptionID] {
    try sql.query(
      "SELECT subscription FROM deliveries WHERE publication = ? ORDER BY subscription",
      [.text(publication.description)]
    ).map { try identifier($0.text(0)) }
  }

  public func deliveries(to subscription: SubscriptionID) throws -> [(PublicationID, MessageKey)] {
    try sql.query(
      """
      SELECT p.\(Self.publicationColumns.replacingOccurrences(of: ", ", with: ", p."))
      FROM deliveries d JOIN publications p ON p.id = d.publication
      WHERE d.subscription = ? ORDER BY p.id
      """, [.text(subscription.description)]
    ).map { row in
      let record = try publicationRecord(row)
      return (record.id, record.key)
    }
  }

  // MARK: Deadlines

  public func schedule(_ deadline: Deadline) throws {
    let (kind, subject) = Self.encode(deadline.kind)
    try sql.execute(
      "INSERT INTO deadlines (due_at, kind, subject) VALUES (?, ?, ?)",
      [SQLValue(deadline.at), .text(kind), .text(subject)])
    deadlineHint?.lower(to: deadline.at)
  }

  public func popDeadline(dueAt now: Date) throws -> Deadline? {
    if sql.dialect == .postgres {
      // Several instances sweep at once: each takes a deadline no other is handling.
      return try sql.queryFirst(
        """
        DELETE FROM deadlines WHERE id = (
          SELECT id FROM deadlines WHERE due_at <= ? ORDER BY due_at, id LIMIT 1
          FOR UPDATE SKIP LOCKED)
        RETURNING id, due_at, kind, subject
        """, [SQLValue(now)]
      ).map { row in
        Deadline(
          at: Date(timeIntervalSince1970: try row.real(1)),
          kind: try Self.decodeDeadline(kind: row.text(2), subject: row.text(3)))
      }
    }
    guard
      let row = try sql.queryFirst(
        "SELECT id, due_at, kind, subject FROM deadlines WHERE due_at <= ? ORDER BY due_at, id LIMIT 1",
        [SQLValue(now)])
    else { return nil }
    try sql.execute("DELETE FROM deadlines WHERE id = ?", [.integer(try row.integer(0))])
    return Deadline(
      at: Date(timeIntervalSince1970: try row.real(1)),
      kind: try Self.decodeDeadline(kind: row.text(2), subject: row.text(3)))
  }

  /// Whether a deadline may be due at `now`: false only when the storage's hint says none
  /// is (always true without a hint).
  @_spi(Resolver) public func deadlinesMayBeDue(at now: Date) -> Bool {
    guard let hint = deadlineHint else { return true }
    guard let earliest = hint.earliest else { return true }
    return earliest <= now
  }

  /// Reads when the next deadline is due into the storage's hint (after the due ones were
  /// handled); nothing without a hint.
  /// - Throws: the database's error.
  @_spi(Resolver) public func noteNextDeadline() throws {
    guard let hint = deadlineHint else { return }
    hint.set(try nextDeadline())
  }

  public func nextDeadline() throws -> Date? {
    try sql.queryFirst("SELECT MIN(due_at) FROM deadlines", []).flatMap {
      try $0.optionalReal(0).map(Date.init(timeIntervalSince1970:))
    }
  }

  static func encode(_ kind: DeadlineKind) -> (String, String) {
    switch kind {
    case .proximity(let key): ("proximity", "\(key.hearer) \(key.heard) \(key.medium)")
    case .publicationExpiry(let id): ("publication", id.description)
    case .subscriptionExpiry(let id): ("subscription", id.description)
    case .tokenRetirement(let token): ("token", token.hex)
    }
  }

  static func decodeDeadline(kind: String, subject: String) throws -> DeadlineKind {
    switch kind {
    case "proximity":
      let parts = subject.split(separator: " ")
      guard parts.count == 3, let hearer = DeviceID(String(parts[0])),
        let heard = DeviceID(String(parts[1])), let medium = UInt32(parts[2])
      else { throw SQLStorageError.unexpectedValue("proximity deadline \(subject)") }
      return .proximity(
        ProximityKey(hearer: hearer, heard: heard, medium: DiscoveryMediums(rawValue: medium)))
    case "publication": return .publicationExpiry(try identifier(subject))
    case "subscription": return .subscriptionExpiry(try identifier(subject))
    case "token":
      do { return .tokenRetirement(try Token(hex: subject)) } catch {
        throw SQLStorageError.unexpectedValue("token deadline \(subject)")
      }
    default: throw SQLStorageError.unexpectedValue("deadline kind \(kind)")
    }
  }

  // MARK: Counts

  public func counts() throws -> ResolutionCounts {
    try writePendingSightings()
    func count(_ table: String) throws -> Int {
      Int(try sql.queryFirst("SELECT COUNT(*) FROM \(table)", [])?.integer(0) ?? 0)
    }
    var counts = ResolutionCounts()
    counts.devices = try count("devices")
    counts.tokens = try count("tokens")
    counts.publications = try count("publications")
    counts.subscriptions = try count("subscriptions")
    counts.deliveries = try count("deliveries")
    counts.sightings = try count("sightings")
    counts.deadlines = try count("deadlines")
    return counts
  }

  // MARK: Encoding

  /// A digest of everything that makes two messages the same (namespace, type, content), so
  /// that "another publication of the same message" is one indexed comparison.
  static func digest(of message: Message) -> [UInt8] {
    var hash = SHA256()
    for part in [Data(message.namespace.utf8), Data(message.type.utf8)] {
      withUnsafeBytes(of: UInt64(part.count).bigEndian) { hash.update(bufferPointer: $0) }
      hash.update(data: part)
    }
    hash.update(data: message.content)
    return Array(hash.finalize())
  }

  func json(_ value: some Encodable) throws -> String {
    String(decoding: try encoder.encode(value), as: UTF8.self)
  }

  func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
    do { return try decoder.decode(type, from: Data(text.utf8)) } catch {
      throw SQLStorageError.unexpectedValue("\(T.self) \(text): \(error)")
    }
  }
}

/// An identifier read back from its text.
func identifier<Tag>(_ text: String) throws -> TaggedIdentifier<Tag> {
  guard let id = TaggedIdentifier<Tag>(text) else {
    throw SQLStorageError.unexpectedValue("identifier \(text)")
  }
  return id
}
