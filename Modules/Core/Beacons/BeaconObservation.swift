/// An observed beacon id as the manager asks the resolver about it, with the telemetry heard
/// from the same transmitter since the manager last asked.
///
/// A resolver that keeps beacon diagnostics (the resolver server) records the telemetry as
/// the beacon's latest; the others ignore it.
@_spi(Resolver) public struct BeaconObservation: Sendable, Hashable {
  /// The id the beacon advertised.
  public var id: BeaconID
  /// An Eddystone-TLM frame from the frame type on (14 bytes plain, 18 encrypted) heard from
  /// the transmitter that advertised ``id``; `nil` if none was heard.
  public var telemetry: [UInt8]?

  public init(id: BeaconID, telemetry: [UInt8]? = nil) {
    self.id = id
    self.telemetry = telemetry
  }
}
