public import Core
import Foundation
public import Resolution
import Strategy

/// Publications and subscriptions in SQL, with the queries the engine matches them by:
/// Resolution's `HandleStore`, one of the ``ResolutionTables``.
public final class HandleTables: HandleStore {
  let sql: any SQLConnection
  let coding: SQLCoding

  init(_ sql: any SQLConnection, coding: SQLCoding) {
    self.sql = sql
    self.coding = coding
  }

  // MARK: Publications

  public func publication(_ id: PublicationID) throws -> PublicationRecord? {
    try sql.queryFirst(
      "SELECT \(HandleRows.publicationColumns) FROM publications WHERE id = ?",
      [.text(id.description)]
    ).map(coding.publication(from:))
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
        .blob(Array(message.content)), .blob(SQLCoding.digest(of: message)),
        .text(try coding.json(publication.strategy)), SQLValue(publication.expiresAt),
      ])
  }

  public func removePublication(_ id: PublicationID) throws -> PublicationRecord? {
    guard let record = try publication(id) else { return nil }
    try sql.execute("DELETE FROM publications WHERE id = ?", [.text(id.description)])
    return record
  }

  public func publications(on device: DeviceID) throws -> [PublicationRecord] {
    try sql.query(
      "SELECT \(HandleRows.publicationColumns) FROM publications WHERE device = ? ORDER BY id",
      [.text(device.description)]
    ).map(coding.publication(from:))
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
        SELECT \(HandleRows.publicationColumns) FROM publications
        WHERE device = ? AND namespace = ? AND type = ? ORDER BY id
        """, [.text(device.description), .text(subscription.namespace), .text(type)]
      ).map(coding.publication(from:))
    }
    return try sql.query(
      """
      SELECT \(HandleRows.publicationColumns) FROM publications
      WHERE device = ? AND namespace = ? ORDER BY id
      """, [.text(device.description), .text(subscription.namespace)]
    ).map(coding.publication(from:))
  }

  // MARK: Subscriptions

  public func subscription(_ id: SubscriptionID) throws -> SubscriptionRecord? {
    try sql.queryFirst(
      "SELECT \(HandleRows.subscriptionColumns) FROM subscriptions WHERE id = ?",
      [.text(id.description)]
    ).map(coding.subscription(from:))
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
        .text(try coding.json(subscription.strategy)),
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
      "SELECT \(HandleRows.subscriptionColumns) FROM subscriptions WHERE device = ? ORDER BY id",
      [.text(device.description)]
    ).map(coding.subscription(from:))
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
      SELECT \(HandleRows.subscriptionColumns) FROM subscriptions
      WHERE device = ? AND namespace = ? AND (type IS NULL OR type = ?) ORDER BY id
      """,
      [
        .text(device.description), .text(publication.message.namespace),
        .text(publication.message.type),
      ]
    ).map(coding.subscription(from:))
  }
}
