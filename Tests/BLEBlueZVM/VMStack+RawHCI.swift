import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension VMStack {
  /// Stops adapter `index`'s controller from advertising with a raw HCI command (LE Set
  /// Advertising Enable, off), behind the back of the kernel's advertising instances and of
  /// bluetoothd: the advert leaves the air as when its device walks away, and nobody
  /// re-registers it.
  ///
  /// Needed because powering an adapter off does not silence it in the VM (finding M): Linux
  /// 6.1 closes the index without disabling advertising, and btvirt's emulated controller goes
  /// on sending the advert (hci1 still got its LE Advertising Reports, and every restart of a
  /// monitor reported it again). Call it while the adapter is up, then power it off.
  /// - Throws: ``Failure`` naming the call that failed (errno).
  static func stopAdvertisingBehindTheStack(on index: Int) throws {
    let fd = socket(31 /* AF_BLUETOOTH */, Int32(SOCK_RAW.rawValue), 1 /* BTPROTO_HCI */)
    guard fd >= 0 else { throw Failure(description: "socket(AF_BLUETOOTH): errno \(errno)") }
    defer { close(fd) }
    // struct sockaddr_hci { sa_family_t hci_family; unsigned short hci_dev, hci_channel; }:
    // the raw channel (0) of hciINDEX.
    var address: [UInt16] = [31, UInt16(index), 0]
    let bound = address.withUnsafeMutableBytes { bytes in
      bytes.baseAddress!.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(bytes.count))
      }
    }
    guard bound == 0 else { throw Failure(description: "bind(hci\(index)): errno \(errno)") }
    // An HCI command packet: type 0x01, opcode 0x200A (OGF 0x08 LE, OCF 0x000A), one
    // parameter byte, 0x00 = advertising disabled.
    let command: [UInt8] = [0x01, 0x0a, 0x20, 0x01, 0x00]
    let written = command.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == command.count else {
      throw Failure(description: "write(hci\(index), LE Set Advertising Enable): errno \(errno)")
    }
  }
}
