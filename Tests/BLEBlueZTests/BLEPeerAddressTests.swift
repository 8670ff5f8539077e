@testable import BLEBlueZ
import Core
import Testing

@Suite struct BLEPeerAddressTests {
  @Test func anAddressRoundTripsAndMalformedOnesAreRefused() throws {
    let address = try #require(
      BLEPeerAddress.make(role: .advertiser, address: "00:aa:01:00:00:0F", isRandom: true))
    #expect(address.transport == "ble")
    #expect(address.bytes == [0, 0x00, 0xAA, 0x01, 0x00, 0x00, 0x0F, 1])
    let parts = try #require(BLEPeerAddress.parts(address))
    #expect(parts == .init(role: .advertiser, address: "00:AA:01:00:00:0F", isRandom: true))
    #expect(BLEPeerAddress.make(role: .client, address: "00:AA:01:00:00", isRandom: false) == nil)
    #expect(
      BLEPeerAddress.make(role: .client, address: "zz:AA:01:00:00:00", isRandom: false) == nil)
    // A role or type that does not exist, or another length.
    #expect(
      BLEPeerAddress.parts(PeerAddress(transport: "ble", bytes: [7, 0, 0, 0, 0, 0, 0, 0])!) == nil)
    #expect(
      BLEPeerAddress.parts(PeerAddress(transport: "ble", bytes: [0, 0, 0, 0, 0, 0, 0, 2])!) == nil)
    #expect(BLEPeerAddress.parts(PeerAddress(transport: "ble", bytes: [0, 1])!) == nil)
    #expect(BLEPeerAddress.parts(PeerAddress(transport: "lan", bytes: address.bytes)!) == nil)
  }

  @Test func devicePathsAndAddressesAgree() {
    let path = BLEPeerAddress.devicePath(
      adapterPath: "/org/bluez/hci1", address: "00:aa:01:00:00:00")
    #expect(path == "/org/bluez/hci1/dev_00_AA_01_00_00_00")
    #expect(BLEPeerAddress.address(ofDevicePath: path) == "00:AA:01:00:00:00")
    #expect(BLEPeerAddress.address(ofDevicePath: "/org/bluez/hci1") == nil)
    #expect(BLEPeerAddress.address(ofDevicePath: "/org/bluez/hci1/dev_00_AA") == nil)
  }

  @Test func chunksSplitWithinTheLimitAndComeBackWhole() {
    let datagram = (0..<1_000).map { UInt8(truncatingIfNeeded: $0) }
    let chunks = GattChunks.split(datagram, limit: 20)
    #expect(chunks.allSatisfy { $0.count <= 20 })
    var reassembly = GattReassembly()
    var result: GattReassembly.Outcome = .partial
    for chunk in chunks { result = reassembly.take(chunk) }
    #expect(result == .datagram(datagram))
    let written = GattChunks.splitForWriting(datagram, limit: 20)
    #expect(written.allSatisfy { $0.count <= 20 })
    #expect(written.count == 59)
    #expect(written[0][0] == GattPeerProfile.startFlag && written[0][1] == 0 && written[0][2] == 17)
    #expect(
      GattChunks.split([], limit: 20) == [[GattPeerProfile.startFlag | GattPeerProfile.endFlag]])
    #expect(GattPeerProfile.writeChunk(mtu: 517) == 510)
    #expect(GattPeerProfile.writeChunk(mtu: 23) == 20)
    #expect(GattPeerProfile.writeChunk(mtu: 0) == 20)
  }
}
