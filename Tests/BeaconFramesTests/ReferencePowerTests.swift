import BeaconFrames
import Testing
import Tokens

@Suite("A frame's reference power")
struct ReferencePowerTests {
  @Test("a beacon frame gives the reference power its specification declares")
  func frameReference() throws {
    let eid = try EddystoneEID(ephemeralID: BeaconBytes(hex: "0102030405060708"), txPower: -21)
    #expect(BeaconFrame.eddystoneEID(eid).referencePower == .atZeroMetres(-21))
  }
}
