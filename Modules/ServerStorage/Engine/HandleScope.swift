@_spi(Resolver) public import Core
import Crypto
import Foundation
@_spi(Resolver) public import Resolution

/// Keeps a device's publication and subscription ids apart from every other device's: the
/// resolver stores the id a device sends XOR a 128-bit mask derived from the device's id and
/// its secret's digest, and answers with the id unmasked. Two devices that send the same id
/// store two ids (so one device, of any project, cannot take an id another will use, nor learn
/// that the id is in use elsewhere); only a holder of the secret could aim at another device's
/// stored ids. XOR is its own inverse: one function masks and unmasks.
///
/// Applies to devices with ``DeviceRecord/scopesHandles`` (those registered since ids were
/// scoped); for the others there is no scope and the ids stay as sent.
@_spi(Resolver) public struct HandleScope: Sendable, Hashable {
  private let high: UInt64
  private let low: UInt64

  /// The device's scope, or nil for a device whose ids are stored as sent.
  public init?(_ device: DeviceRecord) {
    guard device.scopesHandles else { return nil }
    var hasher = SHA256()
    hasher.update(data: Array("nearby handle scope v1\u{0}".utf8))
    hasher.update(data: Array(device.id.description.utf8))
    hasher.update(data: [0])
    hasher.update(data: Array(device.secretDigest.utf8))
    let digest = Array(hasher.finalize())
    high = digest[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
    low = digest[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
  }

  /// The id as stored (from the device's), or as the device knows it (from the stored).
  public func callAsFunction<Tag>(_ id: TaggedIdentifier<Tag>) -> TaggedIdentifier<Tag> {
    TaggedIdentifier(Identifier(high: id.identifier.high ^ high, low: id.identifier.low ^ low))
  }

  /// The report with every id as stored.
  public func callAsFunction(_ report: Report) -> Report {
    var scoped = report
    scoped.publish = report.publish.map {
      var spec = $0
      spec.id = self(spec.id)
      return spec
    }
    scoped.unpublish = report.unpublish.map { self($0) }
    scoped.subscribe = report.subscribe.map {
      var spec = $0
      spec.id = self(spec.id)
      return spec
    }
    scoped.unsubscribe = report.unsubscribe.map { self($0) }
    return scoped
  }

  /// The event with its id as the other side knows it.
  public func callAsFunction(_ event: ResolverEvent) -> ResolverEvent {
    switch event {
    case .found(let id, let message): .found(self(id), message)
    case .lost(let id, let message): .lost(self(id), message)
    case .subscriptionExpired(let id): .subscriptionExpired(self(id))
    case .publicationExpired(let id): .publicationExpired(self(id))
    }
  }

  public func callAsFunction(_ event: SequencedEvent) -> SequencedEvent {
    SequencedEvent(sequence: event.sequence, event: self(event.event))
  }

  /// `text` (a refusal that names stored ids) with the report's ids as the device sent them.
  public func unmaskingIDs(in text: String, of report: Report) -> String {
    let ids =
      report.publish.map(\.id.identifier) + report.unpublish.map(\.identifier)
      + report.subscribe.map(\.id.identifier) + report.unsubscribe.map(\.identifier)
    return ids.reduce(text) { text, sent in
      let stored = Identifier(high: sent.high ^ high, low: sent.low ^ low)
      return text.replacingOccurrences(of: stored.description, with: sent.description)
    }
  }
}
