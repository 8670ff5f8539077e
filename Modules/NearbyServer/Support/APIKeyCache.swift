import Foundation
import ServerStorage

/// API keys looked up in the database and remembered for a short time, so a busy key costs
/// one lookup per ``lifetime`` rather than one per request. A revoked key stops working within
/// ``lifetime`` on every instance. Texts that are no key are never remembered: a flood of
/// made-up keys cannot push the real ones out.
actor APIKeyCache {
  struct Entry {
    var record: APIKeyRecord?
    var fetchedAt: ContinuousClock.Instant
  }

  let storage: any ResolverStorage
  let lifetime: Duration
  /// The most keys remembered; past it the cache starts over.
  let capacity: Int
  private var entries: [String: Entry] = [:]

  init(storage: any ResolverStorage, lifetime: Duration = .seconds(5), capacity: Int = 10_000) {
    self.storage = storage
    self.lifetime = lifetime
    self.capacity = capacity
  }

  /// The key's record if the cache holds it, fresh and not revoked; nil otherwise (without
  /// asking the database).
  func cachedActiveKey(_ key: String) -> APIKeyRecord? {
    guard let entry = entries[key], entry.fetchedAt.duration(to: .now) < lifetime else {
      return nil
    }
    return entry.record.flatMap { $0.isRevoked ? nil : $0 }
  }

  /// The key's record if it is known and not revoked.
  /// - Throws: the storage's error.
  func activeKey(_ key: String) async throws -> APIKeyRecord? {
    let now = ContinuousClock.now
    if let entry = entries[key], entry.fetchedAt.duration(to: now) < lifetime {
      return entry.record.flatMap { $0.isRevoked ? nil : $0 }
    }
    guard let record = try await storage.read({ store in try store.apiKeys.apiKey(key) }) else {
      entries[key] = nil
      return nil
    }
    if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
    entries[key] = Entry(record: record, fetchedAt: now)
    return record.isRevoked ? nil : record
  }
}
