import Core
import Foundation
import Resolution
import Strategy

/// How the `publications` and `subscriptions` tables' rows are read.
enum HandleRows {
  /// The columns ``SQLCoding/publication(from:)`` reads, in its order.
  static let publicationColumns =
    "id, device, project, namespace, type, content, strategy, expires_at"

  /// The columns ``SQLCoding/subscription(from:)`` reads, in its order.
  static let subscriptionColumns =
    "id, device, project, namespace, type, strategy, device_types, expires_at"
}

extension SQLCoding {
  /// The publication in a row of ``HandleRows/publicationColumns``.
  func publication(from row: SQLRow) throws -> PublicationRecord {
    PublicationRecord(
      id: try identifier(row.text(0)), device: try identifier(row.text(1)),
      project: try row.text(2),
      message: Message(
        content: Data(try row.blob(5)), type: try row.text(4), namespace: try row.text(3)),
      strategy: try decode(Strategy.self, row.text(6)),
      expiresAt: try row.optionalReal(7).map(Date.init(timeIntervalSince1970:)))
  }

  /// The subscription in a row of ``HandleRows/subscriptionColumns``.
  func subscription(from row: SQLRow) throws -> SubscriptionRecord {
    SubscriptionRecord(
      id: try identifier(row.text(0)), device: try identifier(row.text(1)),
      project: try row.text(2), namespace: try row.text(3), type: try row.optionalText(4),
      strategy: try decode(Strategy.self, row.text(5)),
      deviceTypes: DeviceTypes(rawValue: .init(truncatingIfNeeded: try row.integer(6))),
      expiresAt: try row.optionalReal(7).map(Date.init(timeIntervalSince1970:)))
  }
}
