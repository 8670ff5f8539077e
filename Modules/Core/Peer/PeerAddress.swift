/// Where a ``PeerTransport`` can reach a device: the transport's kind and bytes only that kind
/// of transport reads (an IP address and port, a Bluetooth address, an in-memory node).
///
/// Mediums fill ``Sighting/returnPath`` with one when the frame they heard tells them how to
/// reach its sender (a LAN datagram's source address); the peer resolver sends its question
/// there. Both parts are bounded, so an address read from the network costs little to keep.
public struct PeerAddress: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The longest ``transport`` name, in UTF-8 bytes.
  public static let maximumTransportLength = 16
  /// The most ``bytes`` an address holds.
  public static let maximumByteCount = 64

  /// The kind of transport that understands ``bytes``, as its ``PeerTransport/kind``
  /// (`"lan"`, `"memory"`).
  public let transport: String
  /// The address itself, opaque to everyone but the transport.
  public let bytes: [UInt8]

  /// An address of `transport`, or `nil` when either part is empty or longer than its limit
  /// (``maximumTransportLength``, ``maximumByteCount``).
  public init?(transport: String, bytes: [UInt8]) {
    guard !transport.isEmpty, transport.utf8.count <= Self.maximumTransportLength,
      !bytes.isEmpty, bytes.count <= Self.maximumByteCount
    else { return nil }
    self.transport = transport
    self.bytes = bytes
  }

  private enum CodingKeys: String, CodingKey {
    case transport, bytes
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let transport = try container.decode(String.self, forKey: .transport)
    let bytes = try container.decode([UInt8].self, forKey: .bytes)
    guard let address = PeerAddress(transport: transport, bytes: bytes) else {
      throw DecodingError.dataCorruptedError(
        forKey: .bytes, in: container,
        debugDescription:
          "a peer address has a transport of 1...\(Self.maximumTransportLength) bytes and "
          + "1...\(Self.maximumByteCount) address bytes")
    }
    self = address
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(transport, forKey: .transport)
    try container.encode(bytes, forKey: .bytes)
  }

  public var description: String {
    let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    return "\(transport):\(hex)"
  }
}
