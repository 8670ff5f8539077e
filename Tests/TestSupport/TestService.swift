import Foundation

// The trait needs Swift Testing, which the toolchain ships as a dynamic library only: a build
// with --static-swift-stdlib (the release build, which nearby-bench shares; issue 33) has no
// `Testing` module, and nearby-bench uses TestSupport but not the trait.
#if canImport(Testing)
  public import Testing
#endif

/// A real service some tests need, which `Tools/scripts/test.sh` starts (each with a script in
/// `Tools/scripts/services/`) and announces with an environment variable.
///
/// A test or suite that needs one carries ``Testing/Trait/requires(_:)``: a plain `swift test`
/// skips it, naming the service and the script that starts it. The test command sets
/// `NEARBY_TEST_REQUIRE_SERVICES=1`, under which nothing is skipped: a service that is missing
/// then fails the test that needs it, so CI never passes by skipping.
public enum TestService: String, CaseIterable, Sendable {
  /// A private PostgreSQL cluster (`NEARBY_TEST_POSTGRES_URL`).
  case postgres
  /// Private D-Bus system and session buses (`NEARBY_TEST_DBUS_SYSTEM_ADDRESS`,
  /// `NEARBY_TEST_DBUS_SESSION_ADDRESS`).
  case dbus
  /// The BlueZ double on the private system bus (`NEARBY_TEST_BLUEZ_DOUBLE`).
  case bluezDouble
  /// The notification daemon double on the private session bus (`NEARBY_TEST_NOTIFICATIONS`).
  case notifications
  /// PulseAudio with a null sink (`NEARBY_TEST_PULSE_SERVER`).
  case pulseaudio
  /// Network namespaces joined by veth links (`NEARBY_TEST_NETNS`; needs root).
  case networkNamespaces
  /// The real bluetoothd in the test VM (`NEARBY_BLUEZ_VM`): only
  /// `Tools/scripts/bluez-vm/vm-suite.sh` runs those tests, inside the VM.
  case bluezVM
  /// The web page's modem built to WebAssembly (`NEARBY_TEST_WEB_MODEM`: its path), run with
  /// the toolchain's `wasmkit`.
  case webModem
  /// A QR code reader, zbar's `zbarimg` (`NEARBY_TEST_QR_READER`: its path).
  case qrReader

  /// The variable that says the service runs.
  public var variable: String {
    switch self {
    case .postgres: "NEARBY_TEST_POSTGRES_URL"
    case .dbus: "NEARBY_TEST_DBUS_SYSTEM_ADDRESS"
    case .bluezDouble: "NEARBY_TEST_BLUEZ_DOUBLE"
    case .notifications: "NEARBY_TEST_NOTIFICATIONS"
    case .pulseaudio: "NEARBY_TEST_PULSE_SERVER"
    case .networkNamespaces: "NEARBY_TEST_NETNS"
    case .bluezVM: "NEARBY_BLUEZ_VM"
    case .webModem: "NEARBY_TEST_WEB_MODEM"
    case .qrReader: "NEARBY_TEST_QR_READER"
    }
  }

  /// What starts it.
  public var script: String {
    switch self {
    case .postgres: "Tools/scripts/services/postgres.sh"
    case .dbus: "Tools/scripts/services/dbus.sh"
    case .bluezDouble: "Tools/scripts/services/double-bluez.sh"
    case .notifications: "Tools/scripts/services/notifications.sh"
    case .pulseaudio: "Tools/scripts/services/pulseaudio.sh"
    case .networkNamespaces: "Tools/scripts/services/netns.sh"
    case .bluezVM: "Tools/scripts/bluez-vm/run.sh"
    case .webModem: "Tools/scripts/build-web-modem.sh"
    case .qrReader: "Tools/scripts/test.sh (zbar-tools, Tools/scripts/deps/test/apt-web.txt)"
    }
  }

  /// Whether the environment says it runs.
  public var isAvailable: Bool {
    guard let value = ProcessInfo.processInfo.environment[variable] else { return false }
    return !value.isEmpty && value != "0"
  }

  /// Whether the run must not skip for a missing service (the test command's runs).
  public static var skipsAreFailures: Bool {
    ProcessInfo.processInfo.environment["NEARBY_TEST_REQUIRE_SERVICES"] == "1"
  }

  /// Why a test that needs it is skipped.
  public var skipReason: String {
    var reason =
      "needs \(rawValue) (\(variable) is not set): \(script) starts it; "
      + "Tools/scripts/test.sh runs every test with every service"
    if self == .networkNamespaces,
      let why = ProcessInfo.processInfo.environment["NEARBY_TEST_NETNS_SKIP"]
    {
      reason += " (\(why))"
    }
    return reason
  }
}

#if canImport(Testing)
  extension Trait where Self == ConditionTrait {
    /// Runs the test only where `services` run, else skips it naming them and the scripts that
    /// start them; under `NEARBY_TEST_REQUIRE_SERVICES=1` (the test command) it always runs, so
    /// a missing service fails it instead.
    public static func requires(_ services: TestService...) -> Self {
      let missing = services.filter { !$0.isAvailable }
      return .enabled(
        if: missing.isEmpty || TestService.skipsAreFailures,
        Comment(rawValue: missing.map(\.skipReason).joined(separator: "; ")))
    }
  }
#endif
