import ArgumentParser
import LANMulticast

/// `--resolver` and what peer resolution needs from the command line: the who-has group's
/// port and how long a message stays found after its device goes quiet.
struct PeerOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      """
      How heard tokens become found and lost: peer (no server: devices ask each other over \
      the LAN), server (--server or $NEARBY_SERVER), local (a server on this host, started \
      when none answers). Default: server when one is given, local with --beacons, else peer.
      """,
      valueName: "peer|server|local"))
  var resolver: ResolverMode?

  @Option(
    help: ArgumentHelp(
      """
      Peer resolution's UDP port for who-has multicasts on the LAN, the same on every device \
      (default \(LANPeerConfiguration.defaultGroupPort)).
      """,
      valueName: "port"))
  var peerGroupPort = Int(LANPeerConfiguration.defaultGroupPort)

  @Option(
    help: ArgumentHelp(
      """
      Peer resolution: seconds a message stays found after its device is last heard \
      (default 10; a server has its own setting).
      """,
      valueName: "seconds"))
  var lostAfter: Double?

  func validate() throws {
    guard (1...65535).contains(peerGroupPort) else {
      throw ValidationError("--peer-group-port must be between 1 and 65535, got \(peerGroupPort)")
    }
    if let lostAfter, !(2...86_400).contains(lostAfter) {
      throw ValidationError("--lost-after takes seconds from 2 to 86400, got \(lostAfter)")
    }
  }
}
