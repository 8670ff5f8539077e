public import Core
import Glibc

/// The `PeerAddress` (Core) form of a LAN (UDP over IPv4) endpoint: the kind `"lan"` and
/// seven bytes, `4` ‖ the IPv4 address ‖ the port (both in network order).
public enum LANPeerAddress {
  /// The transport kind of LAN addresses.
  public static let kind = "lan"

  /// The address of `ipv4` (four bytes, network order) and `port`.
  public static func make(ipv4: [UInt8], port: UInt16) -> PeerAddress? {
    guard ipv4.count == 4, port != 0 else { return nil }
    return PeerAddress(
      transport: kind, bytes: [4] + ipv4 + [UInt8(port >> 8), UInt8(port & 0xff)])
  }

  /// The address of a socket address (IPv4 only).
  static func make(_ address: sockaddr_in) -> PeerAddress? {
    let ip = withUnsafeBytes(of: address.sin_addr.s_addr) { Array($0) }
    return make(ipv4: ip, port: UInt16(bigEndian: address.sin_port))
  }

  /// The host of a LAN address: `4` ‖ the IPv4 address, without the port; any other address
  /// unchanged.
  public static func host(of address: PeerAddress) -> PeerAddress {
    guard address.transport == kind, address.bytes.count == 7, address.bytes[0] == 4,
      let host = PeerAddress(transport: kind, bytes: Array(address.bytes[0..<5]))
    else { return address }
    return host
  }

  /// The socket address a LAN peer address names; nil for another kind or another form.
  static func socketAddress(_ address: PeerAddress) -> sockaddr_in? {
    let bytes = address.bytes
    guard address.transport == kind, bytes.count == 7, bytes[0] == 4 else { return nil }
    var result = sockaddr_in()
    result.sin_family = sa_family_t(AF_INET)
    result.sin_port = (UInt16(bytes[5]) << 8 | UInt16(bytes[6])).bigEndian
    withUnsafeMutableBytes(of: &result.sin_addr.s_addr) { $0.copyBytes(from: bytes[1..<5]) }
    return result
  }
}
