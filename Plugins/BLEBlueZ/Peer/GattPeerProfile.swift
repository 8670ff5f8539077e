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
