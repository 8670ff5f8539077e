import Crypto
import Foundation
@_spi(Resolver) import Core

/// The cookies an owner gives the addresses that ask it, so that it answers a query with its
/// publications only where the query's sender proved it receives what is sent to its address
/// (a return routability check: QUIC's Retry, DTLS's HelloVerifyRequest).
///
/// A cookie is the first 8 bytes of HMAC-SHA256 under a secret drawn at random for this
/// resolver, over the address and the current period (``period``): stateless, so a flood of
/// queries from forged sources costs no memory, and one address's cookie says nothing of
/// another's. A cookie stays valid for the period it was made in and the next.
struct AddressCookies: Sendable {
  /// How long a cookie's period lasts: 5 minutes (valid 5 to 10 minutes). A hearer gets a
  /// new one with every answer, so one that keeps asking never holds an expired cookie.
  static let period: Double = 300

  private let secret = SymmetricKey(size: .bits256)

  /// The cookie of `address` at `now` (never 0: 0 means no cookie on the wire).
  func cookie(for address: PeerAddress, now: Date) -> UInt64 {
    cookie(for: address, period: Self.periodIndex(now))
  }

  /// Whether `cookie` was made for `address` in the current period or the one before.
  func isValid(_ cookie: UInt64, for address: PeerAddress, now: Date) -> Bool {
    guard cookie != 0 else { return false }
    let current = Self.periodIndex(now)
    return cookie == self.cookie(for: address, period: current)
      || (current > 0 && cookie == self.cookie(for: address, period: current - 1))
  }

  private static func periodIndex(_ now: Date) -> UInt64 {
    UInt64(max(now.timeIntervalSince1970, 0) / period)
  }

  private func cookie(for address: PeerAddress, period: UInt64) -> UInt64 {
    var writer = ByteWriter(capacity: 96)
    writer.shortString(address.transport)
    writer.u8(UInt8(address.bytes.count))
    writer.raw(address.bytes)
    writer.u64(period)
    let code = HMAC<SHA256>.authenticationCode(for: writer.bytes, using: secret)
    let value = code.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    return value == 0 ? 1 : value
  }
}
