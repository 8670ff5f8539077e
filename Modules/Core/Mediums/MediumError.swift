public import Strategy

/// A medium problem the app should know about, as the seed's three error handlers report it,
/// plus a catch-all. Published on ``MessageManager/errors`` each time a problem starts
/// (`isActive == true`) or clears (`isActive == false`).
public struct MediumError: Error, Sendable, Hashable {
  /// What kind of problem.
  public enum Kind: String, Sendable, Hashable, Codable {
    /// The microphone cannot be used (audio scanning).
    case microphonePermission
    /// Bluetooth is off or there is no adapter.
    case bluetoothPower
    /// The system refused access to Bluetooth.
    case bluetoothPermission
    /// The medium is unavailable for another reason (see ``message``).
    case unavailable
  }

  /// What kind of problem.
  public var kind: Kind
  /// The medium it concerns.
  public var medium: DiscoveryMediums
  /// Whether the problem is present (true) or has just cleared (false).
  public var isActive: Bool
  /// What happened and how to fix it.
  public var message: String

  public init(kind: Kind, medium: DiscoveryMediums, isActive: Bool, message: String) {
    self.kind = kind
    self.medium = medium
    self.isActive = isActive
    self.message = message
  }

  /// The problem a status stands for, or `nil` for ``MediumStatus/ready``.
  public static func kind(for status: MediumStatus, on medium: DiscoveryMediums) -> Kind? {
    switch status {
    case .ready: nil
    case .poweredOff: medium == .ble ? .bluetoothPower : .unavailable
    case .permissionDenied:
      medium == .audio
        ? .microphonePermission : medium == .ble ? .bluetoothPermission : .unavailable
    case .unavailable: .unavailable
    }
  }
}
