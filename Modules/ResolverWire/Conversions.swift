public import ResolverAPI
@_spi(Resolver) public import Core
public import Foundation
import OpenAPIRuntime
public import Strategy
import Tokens

/// The library's strategy (inside the wire types' extensions, `Strategy` is the wire type).
public typealias LibraryStrategy = Strategy

/// The ranges of a sighting's measurements on the wire (openapi.yaml's `Sighting`): rssi and
/// snr within ±1000 dB(m), txPower a signed byte as frames carry it. The client leaves a value
/// outside them out (the server does not use them to match); the server refuses it.
public enum SightingRanges {
  public static let decibelRange: ClosedRange<Double> = -1000...1000
  public static let txPowerRange: ClosedRange<Int> = -128...127

  /// `value` if it is within ``decibelRange``, else nil.
  public static func decibels(_ value: Double?) -> Double? {
    value.flatMap { decibelRange.contains($0) ? $0 : nil }
  }

  /// `value` if it is within ``txPowerRange``, else nil.
  public static func txPower(_ value: Int?) -> Int? {
    value.flatMap { txPowerRange.contains($0) ? $0 : nil }
  }

  /// - Throws: ``WireError`` naming the field out of range.
  static func check(_ sighting: Components.Schemas.Sighting, field: String) throws(WireError) {
    for (name, value) in [("rssi", sighting.rssi), ("snr", sighting.snr)] {
      if let value, !decibelRange.contains(value) {
        throw WireError("\(field).\(name): \(value) is outside -1000...1000")
      }
    }
    if let value = sighting.txPower, !txPowerRange.contains(value) {
      throw WireError("\(field).txPower: \(value) is outside -128...127")
    }
  }
}

// Conversions between the wire types generated from openapi.yaml and the library's types.
// Wire → library conversions throw `WireError` naming the field; library → wire never fail.

extension Components.Schemas.Message {
  public init(_ message: Core.Message) {
    self.init(
      content: StrictBase64.encode(message.content), _type: message.type,
      namespace: message.namespace)
  }

  /// The message, its content decoded strictly and its limits checked (the ones of
  /// ``Core/Message/validate()``: UTF-8 bytes, no control characters).
  /// - Throws: ``WireError`` naming the field (`field.content`, `field.type`, ...); over a
  ///   limit it is ``WireError/isOverLimit``.
  public func message(field: String) throws(WireError) -> Core.Message {
    let message = Core.Message(
      content: Data(try StrictBase64.decode(content, field: "\(field).content")),
      type: _type ?? "", namespace: namespace ?? "")
    do { try message.validate() } catch {
      throw WireError(messageError: error, field: field)
    }
    return message
  }
}

extension WireError {
  /// A message limit broken in `field` (a message or a subscription's filter).
  init(messageError error: MessageError, field: String) {
    switch error {
    case .contentTooLarge:
      self.init("\(field).content: \(error)", isOverLimit: true)
    case .typeTooLong:
      self.init("\(field).type: \(error)", isOverLimit: true)
    case .typeHasControlCharacters:
      self.init("\(field).type: \(error) (U+0000–U+001F, U+007F–U+009F)")
    case .namespaceTooLong:
      self.init("\(field).namespace: \(error)", isOverLimit: true)
    case .namespaceInvalidCharacter:
      self.init("\(field).namespace: \(error)")
    }
  }
}

extension Components.Schemas.Strategy {
  public init(_ strategy: LibraryStrategy) {
    self.init(
      mediums: strategy.mediums.elements.compactMap(Components.Schemas.Medium.init),
      mode: strategy.mode.elements.compactMap(Components.Schemas.Mode.init),
      ttl: strategy.ttl.seconds.map { .case1($0) } ?? .case2(.infinite),
      allowInBackground: strategy.allowInBackground,
      distanceType: strategy.distanceType == .earshot ? .earshot : ._default)
  }

  /// The strategy, with the documented defaults for absent fields.
  /// - Throws: ``WireError`` for a TTL out of range (finite, above 0, at most 86 400 s).
  public func strategy(field: String) throws -> LibraryStrategy {
    var result = LibraryStrategy.default
    if let mediums { result.mediums = DiscoveryMediums(mediums.map(\.medium)) }
    if let mode { result.mode = DiscoveryMode(mode.map(\.mode)) }
    switch ttl {
    case .none: break
    case .case2: result.ttl = .infinite
    case .case1(let seconds):
      do { result.ttl = try TTL(seconds: seconds) } catch {
        throw WireError("\(field).ttl: \(error)")
      }
    }
    if let allowInBackground { result.allowInBackground = allowInBackground }
    if let distanceType { result.distanceType = distanceType == .earshot ? .earshot : .default }
    return result
  }
}

extension Components.Schemas.Medium {
  public init?(_ medium: DiscoveryMediums) {
    switch medium {
    case .ble: self = .ble
    case .audio: self = .audio
    case .lan: self = .lan
    case .optical: self = .optical
    default: return nil
    }
  }

  public var medium: DiscoveryMediums {
    switch self {
    case .ble: .ble
    case .audio: .audio
    case .lan: .lan
    case .optical: .optical
    }
  }
}

extension Components.Schemas.Mode {
  public init?(_ mode: DiscoveryMode) {
    switch mode {
    case .broadcast: self = .broadcast
    case .scan: self = .scan
    default: return nil
    }
  }

  public var mode: DiscoveryMode {
    switch self {
    case .broadcast: .broadcast
    case .scan: .scan
    }
  }
}

/// Parses an identifier field.
/// - Throws: ``WireError`` naming the field.
public func wireIdentifier<Tag>(_ text: String, field: String) throws -> TaggedIdentifier<Tag> {
  guard let id = TaggedIdentifier<Tag>(text) else {
    throw WireError("\(field): '\(text)' is not a UUID")
  }
  return id
}

extension Components.Schemas.Report {
  @_spi(Resolver) public init(_ report: Core.Report) {
    self.init(
      publish: report.publish.map {
        .init(id: $0.id.description, message: .init($0.message), strategy: .init($0.strategy))
      },
      unpublish: report.unpublish.map(\.description),
      subscribe: report.subscribe.map {
        .init(
          id: $0.id.description, namespace: $0.namespace, _type: $0.type,
          strategy: .init($0.strategy),
          deviceTypes: $0.deviceTypes.elements.map {
            $0 == .bleBeacons ? .bleBeacons : .nearbyDevices
          })
      },
      unsubscribe: report.unsubscribe.map(\.description),
      sightings: report.sightings.compactMap { sighting in
        Components.Schemas.Medium(sighting.medium).map {
          .init(
            token: sighting.token.hex, medium: $0, rssi: SightingRanges.decibels(sighting.rssi),
            txPower: SightingRanges.txPower(sighting.txPower),
            snr: SightingRanges.decibels(sighting.snr), time: sighting.time)
        }
      })
  }

  /// The report. Its sightings' times are put on the receiver's clock: with `sentAt`, a
  /// sighting heard `sentAt - time` before sending was heard that long before `receivedAt`.
  /// - Throws: ``WireError`` naming the first field that does not convert.
  @_spi(Resolver) public func report(receivedAt: Date = Date()) throws -> Core.Report {
    // Counted before anything is converted: the work a report asks for stays bounded.
    let lists: [(String, Int, Int)] = [
      ("publish", publish?.count ?? 0, Core.Report.maximumHandleChanges),
      ("unpublish", unpublish?.count ?? 0, Core.Report.maximumHandleChanges),
      ("subscribe", subscribe?.count ?? 0, Core.Report.maximumHandleChanges),
      ("unsubscribe", unsubscribe?.count ?? 0, Core.Report.maximumHandleChanges),
      ("sightings", sightings?.count ?? 0, Core.Report.maximumSightings),
    ]
    for (field, count, limit) in lists where count > limit {
      throw WireError(
        "\(field): \(count) items; the limit is \(limit) per report (send the rest in another)",
        isOverLimit: true)
    }
    var report = Core.Report()
    for (index, item) in (publish ?? []).enumerated() {
      let field = "publish[\(index)]"
      report.publish.append(
        PublicationSpec(
          id: try wireIdentifier(item.id, field: "\(field).id"),
          message: try item.message.message(field: "\(field).message"),
          strategy: try item.strategy?.strategy(field: "\(field).strategy") ?? .default))
    }
    for (index, id) in (unpublish ?? []).enumerated() {
      report.unpublish.append(try wireIdentifier(id, field: "unpublish[\(index)]"))
    }
    for (index, item) in (subscribe ?? []).enumerated() {
      let field = "subscribe[\(index)]"
      var deviceTypes = DeviceTypes.default
      if let types = item.deviceTypes {
        deviceTypes = DeviceTypes(types.map { $0 == .bleBeacons ? .bleBeacons : .nearbyDevices })
      }
      let namespace = item.namespace ?? ""
      do {
        try Core.Message.validate(namespace: namespace)
        if let type = item._type { try Core.Message.validate(type: type) }
      } catch {
        throw WireError(messageError: error, field: field)
      }
      report.subscribe.append(
        SubscriptionSpec(
          id: try wireIdentifier(item.id, field: "\(field).id"), namespace: namespace,
          type: item._type,
          strategy: try item.strategy?.strategy(field: "\(field).strategy") ?? .default,
          deviceTypes: deviceTypes))
    }
    for (index, id) in (unsubscribe ?? []).enumerated() {
      report.unsubscribe.append(try wireIdentifier(id, field: "unsubscribe[\(index)]"))
    }
    for (index, item) in (sightings ?? []).enumerated() {
      let token: Token
      do { token = try Token(hex: item.token) } catch {
        throw WireError("sightings[\(index)].token: \(error)")
      }
      try SightingRanges.check(item, field: "sightings[\(index)]")
      let time = sentAt.map { receivedAt.addingTimeInterval(item.time.timeIntervalSince($0)) }
      report.sightings.append(
        Sighting(
          token: token, medium: item.medium.medium, rssi: item.rssi, txPower: item.txPower,
          snr: item.snr, time: time ?? item.time))
    }
    return report
  }
}

extension Components.Schemas.Event {
  @_spi(Resolver) public init(_ item: SequencedEvent) {
    let sequence = Int64(clamping: item.sequence)
    switch item.event {
    case .found(let subscription, let message):
      self.init(
        sequence: sequence, kind: .found, subscription: subscription.description,
        message: .init(message))
    case .lost(let subscription, let message):
      self.init(
        sequence: sequence, kind: .lost, subscription: subscription.description,
        message: .init(message))
    case .subscriptionExpired(let subscription):
      self.init(
        sequence: sequence, kind: .subscriptionExpired, subscription: subscription.description)
    case .publicationExpired(let publication):
      self.init(
        sequence: sequence, kind: .publicationExpired, publication: publication.description)
    }
  }

  /// The event.
  /// - Throws: ``WireError`` for a missing or malformed field.
  @_spi(Resolver) public func event() throws -> SequencedEvent {
    guard sequence > 0 else { throw WireError("event.sequence: must be at least 1") }
    func subscriptionID() throws -> SubscriptionID {
      guard let subscription else { throw WireError("event.subscription: missing") }
      return try wireIdentifier(subscription, field: "event.subscription")
    }
    func payload() throws -> Core.Message {
      guard let message else { throw WireError("event.message: missing") }
      return try message.message(field: "event.message")
    }
    let event: ResolverEvent
    switch kind {
    case .found: event = .found(try subscriptionID(), try payload())
    case .lost: event = .lost(try subscriptionID(), try payload())
    case .subscriptionExpired: event = .subscriptionExpired(try subscriptionID())
    case .publicationExpired:
      guard let publication else { throw WireError("event.publication: missing") }
      event = .publicationExpired(try wireIdentifier(publication, field: "event.publication"))
    }
    return SequencedEvent(sequence: UInt64(sequence), event: event)
  }
}

extension Components.Schemas.ReportAnswer {
  @_spi(Resolver) public init(_ answer: ReportAnswer) {
    let directives = answer.directives
    self.init(
      directives: .init(
        revision: Int64(clamping: directives.revision), token: directives.token.hex,
        tokenExpiresIn: directives.tokenExpiresIn,
        broadcast: directives.broadcast.elements.compactMap(Components.Schemas.Medium.init),
        scan: directives.scan.elements.compactMap(Components.Schemas.Medium.init)),
      events: answer.events.map(Components.Schemas.Event.init))
  }

  /// The answer.
  /// - Throws: ``WireError`` for a malformed token or event.
  @_spi(Resolver) public func answer() throws -> ReportAnswer {
    let token: Token
    do { token = try Token(hex: directives.token) } catch {
      throw WireError("directives.token: \(error)")
    }
    return ReportAnswer(
      directives: Directives(
        revision: UInt64(max(directives.revision, 0)), token: token,
        tokenExpiresIn: directives.tokenExpiresIn,
        broadcast: DiscoveryMediums(directives.broadcast.map(\.medium)),
        scan: DiscoveryMediums(directives.scan.map(\.medium))),
      events: try events.map { try $0.event() })
  }
}
