public import Logging
public import Strategy
public import Tokens

/// A way of sending and hearing tokens: BLE, audio, or one a plugin adds.
///
/// A medium belongs to one ``MessageManager``: the manager tells it which token to transmit
/// and whether to scan, and it is the single consumer of ``sightings`` and ``statusUpdates``.
/// Implementations are reference types that are safe to call from any task (keep state in an
/// actor or behind a lock). New requirements arrive with default implementations, so a plugin
/// written today keeps compiling.
///
/// Every medium should pass `MediumTestKit`'s conformance suite.
public protocol Medium: AnyObject, Sendable {
  /// Which discovery medium this is: a single medium such as `.ble` or `.audio`.
  var kind: DiscoveryMediums { get }
  /// A short name for logs and messages, such as `"bluez hci0"`.
  var name: String { get }
  /// What this medium can do.
  var capabilities: MediumCapabilities { get }
  /// Tokens heard while scanning. The medium never reports the token it transmits itself.
  var sightings: AsyncStream<Sighting> { get }
  /// The medium's health; the first element is its state at start.
  var statusUpdates: AsyncStream<MediumStatus> { get }

  /// Starts transmitting `token`, replacing any token being transmitted.
  /// - Throws: an error describing why the medium cannot transmit.
  func transmit(_ token: Token) async throws
  /// Starts transmitting `token` with `digest` beside it where the medium's frames have room
  /// for it (peer resolution's ``HandlesDigest``; nil: none), replacing what was transmitted.
  /// Called again with the same token when only the digest changed. Default: transmits the
  /// token alone (``transmit(_:)``).
  /// - Throws: an error describing why the medium cannot transmit.
  func transmit(_ token: Token, digest: HandlesDigest?) async throws
  /// Stops transmitting. Does nothing when not transmitting.
  func stopTransmitting() async
  /// Repeats `token` at `pace` while it is the token transmitted (a pace for another token
  /// is ignored; a new token starts at ``TransmitPace/seeking``). For mediums that share one
  /// air among every transmitter, such as audio. Default: nothing (the medium keeps its own
  /// rate).
  func setPace(_ pace: TransmitPace, for token: Token) async
  /// Starts reporting sightings. Does nothing when already scanning.
  /// - Throws: an error describing why the medium cannot scan.
  func startScanning() async throws
  /// Stops reporting sightings. Does nothing when not scanning.
  func stopScanning() async
  /// Stops everything and releases the medium's resources; finishes its streams.
  func shutdown() async

  /// Beacon frames heard while beacon scanning is on (mediums with the `.beacons`
  /// capability). Default: a stream that is finished at once.
  var beaconSightings: AsyncStream<BeaconSighting> { get }
  /// Starts reporting beacon frames on ``beaconSightings``, or changes how: `lowPower` asks
  /// for passive scanning where the hardware offers it (active discovery otherwise). Does
  /// not touch token scanning. Default: throws ``ManagerError/unsupported(_:)``.
  /// - Throws: an error describing why the medium cannot scan for beacons.
  func startBeaconScanning(lowPower: Bool) async throws
  /// Stops reporting beacon frames. Does nothing when not scanning for beacons.
  func stopBeaconScanning() async
}

extension Medium {
  /// No room for a digest: the token alone.
  public func transmit(_ token: Token, digest: HandlesDigest?) async throws {
    try await transmit(token)
  }

  /// One rate whoever hears: nothing to change.
  public func setPace(_ pace: TransmitPace, for token: Token) async {}
}

extension Medium {
  /// No beacons: a finished stream.
  public var beaconSightings: AsyncStream<BeaconSighting> { AsyncStream { $0.finish() } }

  /// No beacons: throws ``ManagerError/unsupported(_:)``.
  public func startBeaconScanning(lowPower: Bool) async throws {
    throw ManagerError.unsupported("\(name) cannot scan for beacons")
  }

  /// No beacons: nothing to stop.
  public func stopBeaconScanning() async {}
}

extension Medium {
  /// Stops transmitting and scanning.
  public func shutdown() async {
    await stopTransmitting()
    await stopScanning()
    await stopBeaconScanning()
  }
}

/// What a medium can do.
public struct MediumCapabilities: OptionSet, Sendable, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// It can transmit a token.
  public static let broadcast = MediumCapabilities(rawValue: 1 << 0)
  /// It can hear tokens.
  public static let scan = MediumCapabilities(rawValue: 1 << 1)
  /// It keeps working while the app is in background.
  public static let background = MediumCapabilities(rawValue: 1 << 2)
  /// It can hear BLE beacons.
  public static let beacons = MediumCapabilities(rawValue: 1 << 3)
}

/// The health of a medium.
public enum MediumStatus: Sendable, Hashable {
  /// Working.
  case ready
  /// The radio is off (Bluetooth adapter missing or not powered).
  case poweredOff
  /// The system refused access (Bluetooth policy, microphone access); the text says how to fix.
  case permissionDenied(String)
  /// Not usable for another reason; the text says why and how to fix it.
  case unavailable(String)
}

/// What a medium factory gets from the manager that creates the medium.
public struct MediumContext: Sendable {
  /// The device the medium works for.
  public var deviceID: DeviceID
  /// The manager's logger; plugins log through it (with their own metadata).
  public var logger: Logger

  public init(deviceID: DeviceID, logger: Logger) {
    self.deviceID = deviceID
    self.logger = logger
  }
}

/// Makes a medium for a manager. Plugins add static factories, such as `.bluez()`:
///
/// ```swift
/// extension MediumProvider {
///   public static func bluez(adapter: String? = nil) -> MediumProvider { ... }
/// }
/// ```
public struct MediumProvider: Sendable {
  /// A short description for logs.
  public var name: String
  /// Creates the medium.
  public var make: @Sendable (MediumContext) async throws -> any Medium

  public init(name: String, make: @escaping @Sendable (MediumContext) async throws -> any Medium) {
    self.name = name
    self.make = make
  }
}
