import Tokens
public import BeaconFrames

/// Beacon frames of every kind with fixed fields, for tests that simulate beacons.
public enum SampleBeacons {
  /// Eddystone-UID, namespace 00112233445566778899, instance aabbccddeeff, TX power −18 dBm.
  public static let eddystoneUID = BeaconFrame.eddystoneUID(
    try! EddystoneUID(
      namespace: BeaconBytes(hex: "00112233445566778899"),
      instance: BeaconBytes(hex: "aabbccddeeff"),
      txPower: -18))
  /// Eddystone-EID 0123456789abcdef, TX power −20 dBm.
  public static let eddystoneEID = BeaconFrame.eddystoneEID(
    try! EddystoneEID(ephemeralID: BeaconBytes(hex: "0123456789abcdef"), txPower: -20))
  /// Eddystone-URL https://example.com, TX power −20 dBm.
  public static let eddystoneURL = BeaconFrame.eddystoneURL(
    try! EddystoneURL(url: "https://example.com", txPower: -20))
  /// iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major 1, minor 2, measured power −59 dBm.
  public static let iBeacon = BeaconFrame.iBeacon(
    try! IBeacon(
      proximityUUID: BeaconBytes(hex: "e2c56db5dffb48d2b060d0f5a71096e0"), major: 1, minor: 2,
      measuredPower: -59))
  /// AltBeacon of company 0x0118, id 2f234454…00010002, reference RSSI −60 dBm.
  public static let altBeacon = BeaconFrame.altBeacon(
    try! AltBeacon(
      companyID: 0x0118,
      beaconID: BeaconBytes(hex: "2f234454cf6d4a0fadf2f4911ba9ffa600010002"), referenceRSSI: -60))
}
