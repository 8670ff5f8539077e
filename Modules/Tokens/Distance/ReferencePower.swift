/// The power a beacon declares so that a receiver can estimate its distance.
///
/// Eddystone frames carry the TX power *at 0 m*; iBeacon and AltBeacon the received power *at
/// 1 m* (measured power, reference RSSI). ``PathLossModel`` turns either into the power at
/// 1 m, which its formula uses.
public enum ReferencePower: Sendable, Hashable {
  /// Received power at 0 m in dBm (Eddystone).
  case atZeroMetres(Int8)
  /// Received power at 1 m in dBm (iBeacon measured power, AltBeacon reference RSSI).
  case atOneMetre(Int8)
}
