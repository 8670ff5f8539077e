public import Core
import Foundation
public import Resolution

/// Which publications are delivered to which subscriptions, in SQL: Resolution's
/// `DeliveryStore`, one of the ``ResolutionTables``.
public final class DeliveryTable: DeliveryStore {
  let sql: any SQLConnection
  let coding: SQLCoding

  init(_ sql: any SQLConnection, coding: SQLCoding) {
    self.sql = sql
    self.coding = coding
  }

  public func addDelivery(
    subscription: SubscriptionID, publication: PublicationID, message: MessageKey
  ) throws -> Bool {
    let digest = SQLCoding.digest(of: message.message)
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
        [.text(subscription.description), .blob(SQLCoding.digest(of: message.message))])?.integer(0)
      ?? 0
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
      SELECT p.\(HandleRows.publicationColumns.replacingOccurrences(of: ", ", with: ", p."))
      FROM deliveries d JOIN publications p ON p.id = d.publication
      WHERE d.subscription = ? ORDER BY p.id
      """, [.text(subscription.description)]
    ).map { row in
      let record = try coding.publication(from: row)
      return (record.id, record.key)
    }
  }
}
