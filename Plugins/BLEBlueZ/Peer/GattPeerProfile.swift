/// The GATT service peer resolution serves over Bluetooth LE, and the limits of its chunks.
/// One source for these constants: the transport, the double's tests and docs/design.md
/// ("Peer resolution over GATT") read them here.
///
/// The service has two characteristics. A hearer writes its datagrams into the **inbox**
/// (write with response), cut into chunks; it reads the owner's datagrams for it from the
/// **outbox** (read), one chunk per read, an empty value when nothing waits. A chunk read is
/// one flags byte (``startFlag``, ``endFlag``) and then at most ``maximumChunk`` − 1 bytes of
/// the datagram; a chunk written has, after its flags byte, the length of the rest (two bytes,
/// big-endian), because bluetoothd may hand it to the owner in pieces at growing offsets (a
/// long write). bluetoothd names the calling device's object path in each call, so every
/// connected hearer has its own outbox and reassembly.
///
/// **Notifications.** The outbox also notifies, so a long answer streams instead of taking
/// one read round trip per chunk. A hearer that subscribed (`StartNotify`) writes a *listen*
/// chunk into the inbox (``listenFlag``, then a random tag and the largest chunk its link
/// carries); from then on the owner sends that hearer's datagrams as notifications instead of
/// leaving them for reads, the first being an acknowledgement (``listenFlag`` again). A
/// notified chunk is its flags byte, the hearer's tag (4 bytes) and a sequence number (2 bytes,
/// big-endian, one more per chunk), then the datagram's bytes: bluetoothd sends a notification
/// to *every* subscribed device, so each hearer keeps only its own tag's, and a gap in the
/// sequence drops the datagram it cut. Until the acknowledgement arrives the hearer reads as
/// before, so an owner that does not notify (or a bluetoothd that refuses `StartNotify`) is
/// read.
public enum GattPeerProfile {
  /// The service's UUID (128-bit, next to the token frame's `BLETokenFrame.serviceUUID` in
  /// Tokens).
  public static let serviceUUID = "ad1cf74e-c1af-499e-bb67-00374f1e8f90"
  /// The characteristic hearers write their datagrams into.
  public static let inboxUUID = "ad1cf74e-c1af-499e-bb67-00374f1e8f91"
  /// The characteristic hearers read the owner's datagrams from.
  public static let outboxUUID = "ad1cf74e-c1af-499e-bb67-00374f1e8f92"

  /// A chunk's first byte: the chunk starts a datagram.
  public static let startFlag: UInt8 = 1 << 0
  /// A chunk's first byte: the chunk ends a datagram.
  public static let endFlag: UInt8 = 1 << 1
  /// A chunk's first byte: a listen chunk (written) or its acknowledgement (notified).
  public static let listenFlag: UInt8 = 1 << 2
  /// What a notified chunk carries before the datagram's bytes: flags, tag, sequence number.
  public static let notifiedHeader = 7
  /// What bluetoothd leaves of a notification's room on a link of `mtu`: it sends them as
  /// Multiple Handle Value Notifications to a BlueZ client (the MTU less 5, not 3), and never
  /// more than ATT's longest value.
  public static func notificationRoom(mtu: Int) -> Int {
    min(maximumChunk, max(minimumMTU, mtu) - 5)
  }

  /// The longest chunk (flags byte included): ATT's longest attribute value.
  public static let maximumChunk = 512
  /// The ATT MTU of a link that says nothing else (the Core spec's LE minimum).
  public static let minimumMTU = 23
  /// The largest datagram the transport carries: a 100 KiB message fits the peer exchange's
  /// 8 fragments of it.
  public static let maximumDatagramSize = 16_384

  /// The longest chunk a hearer writes: bluetoothd 5.66 counts a Write Request's 2-byte
  /// handle in the value's length (`check_length(length, 0)` in src/shared/gatt-server.c,
  /// fixed later), so 511 and 512 bytes are refused with Invalid Attribute Value Length.
  public static let maximumWrite = 510

  /// The longest chunk a hearer writes on a link of `mtu`: one Write Request (MTU − 3), at
  /// most ``maximumWrite``.
  public static func writeChunk(mtu: Int) -> Int {
    min(maximumWrite, max(minimumMTU, mtu) - 3)
  }
}
