@_spi(Resolver) public import Core
public import Crypto
public import Foundation
public import Tokens

/// The keys of one project's peer exchange, derived from its API key with HKDF-SHA256 under
/// fixed labels, each distinct, so none reveals another: the API key itself never leaves the
/// device.
///
/// - ``sealingKey`` (256 bits) seals every datagram's body with ChaCha20-Poly1305 and
///   authenticates its fixed header.
/// - `tagKey` makes each datagram's project tag, a MAC of its random nonce (see
///   `PeerHeader`): a receiver drops another project's datagrams before trying to open them,
///   yet the tag is new with every datagram, so no byte in the clear names the project or
///   links two datagrams (a constant tag did both, across token rotations and networks).
/// - ``announcementKey`` authenticates and seals the LAN medium's announcements in peer mode
///   (the medium's site key): a host without the project key can neither announce a token nor
///   name a way back.
/// - `digestKey` makes the digests of a device's handles (``digest(token:handles:at:)``): only
///   the project can make one, and nobody outside it can test a guess of what a device
///   publishes against one heard.
public struct PeerKeys: Sendable {
  /// The key that seals bodies and authenticates headers.
  public let sealingKey: SymmetricKey
  /// The key of each datagram's project tag.
  let tagKey: SymmetricKey
  /// The bytes of the LAN medium's key for this project (32), for
  /// `LANMulticastConfiguration.sharedKey`. Derived, so giving it to the medium reveals
  /// neither the API key nor the exchange's keys.
  public let announcementKey: [UInt8]
  /// The key of the handles' digests.
  let digestKey: SymmetricKey

  /// The salt of every derivation (the protocol).
  static let salt = Array("nearby-peer-resolution-v1".utf8)

  /// Derives the keys of the project that `apiKey` names.
  public init(apiKey: String) {
    let material = SymmetricKey(data: Array(apiKey.utf8))
    func derive(_ label: String) -> SymmetricKey {
      HKDF<SHA256>.deriveKey(
        inputKeyMaterial: material, salt: Self.salt, info: Array(label.utf8), outputByteCount: 32)
    }
    sealingKey = derive("sealing key")
    tagKey = derive("datagram tag key")
    announcementKey = derive("lan announcement key").withUnsafeBytes { Array($0) }
    digestKey = derive("handles digest key")
  }

  /// The digest of `handles` under `token` at `now`: the first 8 bytes of
  /// HMAC-SHA256(`digestKey`, token ‖ handles as a query carries them, each with an infinite
  /// TTL ‖ each handle's expiry, `now` plus its remaining TTL in whole seconds since 1970, 0
  /// for none), zero mapped to one. The remaining TTLs themselves are left out (they change
  /// every moment while nothing else does), their expiries are in (a handle renewed with a new
  /// TTL is a change its hearers must learn); the token is in, so the digest changes with
  /// every rotation and links nothing across them.
  public func digest(token: Token, handles: PeerHandles, at now: Date) -> HandlesDigest {
    var writer = ByteWriter()
    writer.raw(token.bytes)
    return digest(handles: handles, after: writer, at: now)
  }

  /// The digest a hearer gives its own handles in a question to the owner of `owner`
  /// (``PeerQuery/handlesDigest``): as ``digest(token:handles:at:)``, over the owner's token
  /// and the hearer's ephemeral id `hearer` first, so it names what one owner holds for one
  /// of the hearer's tokens and links nothing across either side's rotations.
  public func digest(
    of handles: PeerHandles, owner token: Token, hearer: Identifier, at now: Date
  ) -> HandlesDigest {
    var writer = ByteWriter()
    writer.raw(token.bytes)
    writer.u64(hearer.high)
    writer.u64(hearer.low)
    return digest(handles: handles, after: writer, at: now)
  }

  private func digest(handles: PeerHandles, after prefix: ByteWriter, at now: Date)
    -> HandlesDigest
  {
    var writer = prefix
    PeerMessage.write(
      PeerHandles(
        publications: handles.publications.map(\.identity),
        subscriptions: handles.subscriptions.map(\.identity)), to: &writer)
    let strategies =
      handles.publications.map(\.strategy) + handles.subscriptions.map(\.strategy)
    for strategy in strategies {
      // Rounded to the nearest second: the same expiry read at two instants agrees.
      writer.u64(
        strategy.ttl.seconds.map { UInt64(max(now.timeIntervalSince1970 + $0, 0).rounded()) }
          ?? 0)
    }
    let code = HMAC<SHA256>.authenticationCode(for: writer.bytes, using: digestKey)
    let value = code.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    return HandlesDigest(value) ?? HandlesDigest(1)!
  }

  /// Whether `other` names the same project (compared in constant time).
  func sameProject(as other: PeerKeys) -> Bool { sealingKey == other.sealingKey }

  /// The project tag of a datagram whose nonce is `nonce`: the first 8 bytes of
  /// HMAC-SHA256(`tagKey`, nonce).
  func tag(nonce: some DataProtocol) -> [UInt8] {
    Array(
      HMAC<SHA256>.authenticationCode(for: nonce, using: tagKey).prefix(PeerHeader.tagFieldSize))
  }
}
