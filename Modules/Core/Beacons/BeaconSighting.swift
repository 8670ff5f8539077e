import Tokens
public import BeaconFrames

/// One beacon frame heard by a medium that scans for beacons (``Medium/beaconSightings``).
///
/// A medium reports every beacon frame it hears while beacon scanning is on, one sighting a
/// frame (an Eddystone beacon interleaving UID and TLM frames gives two kinds of sighting
/// from one ``address``). The manager smooths the signal, resolves the beacon's attachments and
/// turns them into found, lost, distance and signal events.
public struct BeaconSighting: Sendable, Hashable {
  /// The transmitter's address (`AA:BB:CC:DD:EE:FF`), or another name the medium keeps
  /// stable for one transmitter while it is heard.
  public var address: String
  /// The frame heard.
  public var frame: BeaconFrame
  /// Received signal strength in dBm, when the medium measures it.
  public var rssi: Int?
  /// When it was heard, on the continuous clock (for the medium's own use and logs: the
  /// manager times a sighting on its own clock, ``MessageManager/Configuration/clock``, as
  /// it arrives).
  public var time: ContinuousClock.Instant

  public init(
    address: String, frame: BeaconFrame, rssi: Int?, time: ContinuousClock.Instant = .now
  ) {
    self.address = address
    self.frame = frame
    self.rssi = rssi
    self.time = time
  }
}
