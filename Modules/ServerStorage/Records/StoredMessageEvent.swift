import Core

/// How a found or lost event is logged: the subscription; its message is the row's `message`.
enum StoredMessageEvent: Codable {
  case found(SubscriptionID)
  case lost(SubscriptionID)
}
