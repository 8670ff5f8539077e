import Core
import Foundation
import Strategy
import Tokens

/// The body of each kind of message (big-endian; lengths precede what they measure):
///
/// ```
/// whoHas:         query id u64 ‖ token 8
/// iHave:          query id u64 ‖ token 8 ‖ cookie u64
/// query:          query id u64 ‖ cookie u64 ‖ token 8 ‖ mediums u32 ‖ sender 16 ‖
///                 known digest u64 (0: none) ‖ handles digest u64 (0: none) ‖
///                 flags u8 (1: handles left out) ‖ [handles]
/// answer:         query id u64 ‖ token 8 ‖ sender 16 ‖ cookie u64 ‖ token valid for (ms) u32 ‖
///                 digest u64 (0: none) ‖ hears you (mediums) u32 ‖ yours u64 (0: none) ‖
///                 flags u8 (1: unchanged, 2: handles wanted) ‖ publication count u8 ‖
///                 publications (none when a flag is set)
/// handles:        publication count u8 ‖ publications ‖ subscription count u8 ‖ subscriptions
/// publication:    content (u32 length) ‖ type (u8 length) ‖ namespace (u8 length) ‖ strategy
/// subscription:   namespace (u8 length) ‖ has type u8 ‖ [type (u8 length)] ‖ strategy ‖
///                 device types u8
/// strategy:       mediums u32 ‖ mode u8 ‖ flags u8 (1: background, 2: earshot) ‖
///                 remaining TTL (ms) u32, 0xffffffff for infinite
/// ```
///
/// Decoding checks every count and length against ``PeerLimits`` and every value as the
/// resolver would (message and strategy validation), and refuses trailing bytes.
extension PeerMessage {
  /// The body, before sealing.
  public var body: [UInt8] {
    var writer = ByteWriter()
    switch self {
    case .whoHas(let queryID, let token):
      writer.u64(queryID)
      writer.raw(token.bytes)
    case .iHave(let queryID, let token, let cookie):
      writer.u64(queryID)
      writer.raw(token.bytes)
      writer.u64(cookie)
    case .query(let query):
      writer.u64(query.queryID)
      writer.u64(query.cookie)
      writer.raw(query.token.bytes)
      writer.u32(query.mediums.rawValue)
      Self.write(query.sender, to: &writer)
      writer.u64(query.knownDigest?.value ?? 0)
      writer.u64(query.handlesDigest?.value ?? 0)
      if let handles = query.handles {
        writer.u8(0)
        Self.write(handles, to: &writer)
      } else {
        writer.u8(Self.handlesLeftOut)
      }
    case .answer(let answer):
      writer.u64(answer.queryID)
      writer.raw(answer.token.bytes)
      Self.write(answer.sender, to: &writer)
      writer.u64(answer.cookie)
      writer.u32(answer.tokenValidFor)
      writer.u64(answer.digest?.value ?? 0)
      writer.u32(answer.hearsYou.rawValue)
      writer.u64(answer.yours?.value ?? 0)
      writer.u8(
        (answer.unchanged ? Self.answerUnchanged : 0)
          | (answer.handlesWanted ? Self.answerHandlesWanted : 0))
      writer.u8(UInt8(answer.publications.count))
      for publication in answer.publications { Self.write(publication, to: &writer) }
    }
    return writer.bytes
  }

  /// The message of `kind` in `body` (an opened body).
  /// - Throws: ``PeerWireError`` naming the field that is missing, too large or invalid.
  public init(kind: PeerMessageKind, body: [UInt8]) throws(PeerWireError) {
    var reader = ByteReader(body)
    switch kind {
    case .whoHas:
      self = .whoHas(queryID: try reader.u64(), token: try Self.readToken(&reader))
    case .iHave:
      let queryID = try reader.u64()
      let token = try Self.readToken(&reader)
      self = .iHave(queryID: queryID, token: token, cookie: try reader.u64())
    case .query:
      let queryID = try reader.u64()
      let cookie = try reader.u64()
      let token = try Self.readToken(&reader)
      let mediums = DiscoveryMediums(rawValue: try reader.u32())
      guard mediums.unknown.isEmpty else { throw .invalid("mediums") }
      let sender = try Self.readIdentifier(&reader)
      let knownDigest = HandlesDigest(try reader.u64())
      let handlesDigest = HandlesDigest(try reader.u64())
      var handles: PeerHandles?
      switch try reader.u8() {
      case 0:
        let publications = try Self.readPublications(&reader)
        let subscriptionCount = Int(try reader.u8())
        guard subscriptionCount <= PeerLimits.maximumSubscriptions else {
          throw .tooLarge("subscriptions")
        }
        var subscriptions: [PeerSubscription] = []
        for _ in 0..<subscriptionCount {
          subscriptions.append(try Self.readSubscription(&reader))
        }
        handles = PeerHandles(publications: publications, subscriptions: subscriptions)
      case Self.handlesLeftOut:
        // Left out, they are named by their digest.
        guard handlesDigest != nil else { throw .invalid("handles left out without a digest") }
      default:
        throw .invalid("query flags")
      }
      self = .query(
        PeerQuery(
          queryID: queryID, cookie: cookie, token: token, mediums: mediums, sender: sender,
          knownDigest: knownDigest, handlesDigest: handlesDigest, handles: handles))
    case .answer:
      let queryID = try reader.u64()
      let token = try Self.readToken(&reader)
      let sender = try Self.readIdentifier(&reader)
      let cookie = try reader.u64()
      let validFor = try reader.u32()
      let digest = HandlesDigest(try reader.u64())
      let hearsYou = DiscoveryMediums(rawValue: try reader.u32())
      guard hearsYou.unknown.isEmpty else { throw .invalid("hears you") }
      let yours = HandlesDigest(try reader.u64())
      let flags = try reader.u8()
      let unchanged = flags & Self.answerUnchanged != 0
      let handlesWanted = flags & Self.answerHandlesWanted != 0
      guard flags & ~(Self.answerUnchanged | Self.answerHandlesWanted) == 0,
        !(unchanged && handlesWanted)
      else { throw .invalid("answer flags") }
      // "Unchanged" names what stands by the digest.
      guard !unchanged || digest != nil else { throw .invalid("unchanged without a digest") }
      let publications = try Self.readPublications(&reader)
      guard publications.isEmpty || !(unchanged || handlesWanted) else {
        throw .invalid("publications in an answer that carries none")
      }
      self = .answer(
        PeerAnswer(
          queryID: queryID, token: token, sender: sender, cookie: cookie, tokenValidFor: validFor,
          publications: publications, digest: digest, hearsYou: hearsYou, yours: yours,
          unchanged: unchanged, handlesWanted: handlesWanted))
    }
    guard reader.isAtEnd else { throw .invalid("trailing bytes") }
  }

  /// A query's flag: its handles are left out (the owner holds those of its digest).
  private static let handlesLeftOut: UInt8 = 1
  /// An answer's flags: ``PeerAnswer/unchanged`` and ``PeerAnswer/handlesWanted``.
  private static let answerUnchanged: UInt8 = 1
  private static let answerHandlesWanted: UInt8 = 2

  // MARK: Writing

  private static func write(_ identifier: Identifier, to writer: inout ByteWriter) {
    writer.u64(identifier.high)
    writer.u64(identifier.low)
  }

  /// `handles` as a query carries them (what their digest is computed over, too).
  static func write(_ handles: PeerHandles, to writer: inout ByteWriter) {
    writer.u8(UInt8(handles.publications.count))
    for publication in handles.publications { write(publication, to: &writer) }
    writer.u8(UInt8(handles.subscriptions.count))
    for subscription in handles.subscriptions { write(subscription, to: &writer) }
  }

  private static func write(_ publication: PeerPublication, to writer: inout ByteWriter) {
    writer.longBytes(publication.message.content)
    writer.shortString(publication.message.type)
    writer.shortString(publication.message.namespace)
    write(publication.strategy, to: &writer)
  }

  private static func write(_ subscription: PeerSubscription, to writer: inout ByteWriter) {
    writer.shortString(subscription.namespace)
    if let type = subscription.type {
      writer.u8(1)
      writer.shortString(type)
    } else {
      writer.u8(0)
    }
    write(subscription.strategy, to: &writer)
    writer.u8(subscription.deviceTypes.rawValue)
  }

  private static func write(_ strategy: Strategy, to writer: inout ByteWriter) {
    writer.u32(strategy.mediums.rawValue)
    writer.u8(strategy.mode.rawValue)
    writer.u8((strategy.allowInBackground ? 1 : 0) | (strategy.distanceType == .earshot ? 2 : 0))
    if let seconds = strategy.ttl.seconds {
      writer.u32(UInt32(min(max(seconds * 1000, 1), Double(UInt32.max - 1)).rounded(.up)))
    } else {
      writer.u32(.max)
    }
  }

  // MARK: Reading

  private static func readToken(_ reader: inout ByteReader) throws(PeerWireError) -> Token {
    Token(value: try reader.u64())
  }

  private static func readIdentifier(_ reader: inout ByteReader) throws(PeerWireError)
    -> Identifier
  {
    Identifier(high: try reader.u64(), low: try reader.u64())
  }

  private static func readPublications(_ reader: inout ByteReader) throws(PeerWireError)
    -> [PeerPublication]
  {
    let count = Int(try reader.u8())
    guard count <= PeerLimits.maximumPublications else { throw .tooLarge("publications") }
    var publications: [PeerPublication] = []
    for _ in 0..<count {
      let content = try reader.longBytes(limit: Message.maximumContentBytes, field: "content")
      let type = try reader.shortString(limit: Message.maximumTypeLength, field: "type")
      let namespace = try reader.shortString(
        limit: Message.maximumNamespaceLength, field: "namespace")
      let message = Message(content: Data(content), type: type, namespace: namespace)
      do { try message.validate() } catch { throw .invalid("message") }
      publications.append(PeerPublication(message: message, strategy: try readStrategy(&reader)))
    }
    return publications
  }

  private static func readSubscription(_ reader: inout ByteReader) throws(PeerWireError)
    -> PeerSubscription
  {
    let namespace = try reader.shortString(
      limit: Message.maximumNamespaceLength, field: "namespace")
    var type: String?
    switch try reader.u8() {
    case 0: type = nil
    case 1: type = try reader.shortString(limit: Message.maximumTypeLength, field: "type")
    default: throw .invalid("subscription type flag")
    }
    do {
      try Message.validate(namespace: namespace)
      if let type { try Message.validate(type: type) }
    } catch {
      throw .invalid("subscription filter")
    }
    let strategy = try readStrategy(&reader)
    let deviceTypes = DeviceTypes(rawValue: try reader.u8())
    return PeerSubscription(
      namespace: namespace, type: type, strategy: strategy, deviceTypes: deviceTypes)
  }

  private static func readStrategy(_ reader: inout ByteReader) throws(PeerWireError) -> Strategy {
    let mediums = DiscoveryMediums(rawValue: try reader.u32())
    let mode = DiscoveryMode(rawValue: try reader.u8())
    let flags = try reader.u8()
    guard flags & ~3 == 0 else { throw .invalid("strategy flags") }
    let milliseconds = try reader.u32()
    let ttl: TTL
    if milliseconds == .max {
      ttl = .infinite
    } else {
      do { ttl = try TTL(seconds: Double(milliseconds) / 1000) } catch { throw .invalid("ttl") }
    }
    let strategy = Strategy(
      mediums: mediums, mode: mode, allowInBackground: flags & 1 != 0,
      distanceType: flags & 2 != 0 ? .earshot : .default, ttl: ttl)
    do { try strategy.validate() } catch { throw .invalid("strategy") }
    return strategy
  }
}
