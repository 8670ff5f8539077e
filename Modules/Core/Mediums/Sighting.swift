public import Foundation
public import Strategy
public import Tokens

/// One token heard by a medium: which token, on which medium, how strongly, and when.
public struct Sighting: Sendable, Hashable, Codable {
  /// The token heard.
  public var token: Token
  /// The medium that heard it (a single medium).
  public var medium: DiscoveryMediums
  /// Received signal strength in dBm, where the medium measures it (BLE).
  public var rssi: Double?
  /// The transmitter's advertised power at 0 m in dBm, where the frame carries it.
  public var txPower: Int?
  /// Signal-to-noise ratio in dB, where the medium estimates it (audio).
  public var snr: Double?
  /// When it was heard.
  public var time: Date
  /// How to reach the sender through a ``PeerTransport``, where the medium knows it (the
  /// source address of a LAN datagram); `nil` otherwise. Peer resolution asks the token's
  /// owner there rather than asking every device.
  public var returnPath: PeerAddress?
  /// The digest of the sender's handles heard beside the token, where the medium carries one
  /// (``Medium/transmit(_:digest:)``); `nil` otherwise. Not authenticated beyond what the
  /// medium's frames are: peer resolution only ever compares it with the digest of an answer.
  public var digest: HandlesDigest?

  public init(
    token: Token, medium: DiscoveryMediums, rssi: Double? = nil, txPower: Int? = nil,
    snr: Double? = nil, time: Date = Date(), returnPath: PeerAddress? = nil,
    digest: HandlesDigest? = nil
  ) {
    self.token = token
    self.medium = medium
    self.rssi = rssi
    self.txPower = txPower
    self.snr = snr
    self.time = time
    self.returnPath = returnPath
    self.digest = digest
  }
}
