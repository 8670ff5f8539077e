import AudioPulse
import BLEBlueZ
import Core
import Foundation
import LANMulticast
import Strategy

/// The mediums `nearby publish` and `nearby subscribe` know, each with an availability probe.
/// A plugin plugs in with one line in ``entries`` (and an extension like ``lan`` below).
struct MediumCatalog {
  /// Whether a medium can be used on this machine now, and why not.
  enum Availability: Sendable, Equatable {
    case available(String)
    case unavailable(String)
  }

  /// One medium: its kind, how to tell whether this machine has it, and how to make it.
  struct Entry: Sendable {
    var kind: DiscoveryMediums
    var probe: @Sendable (MediumOptions) -> Availability
    var provider: @Sendable (MediumOptions) -> MediumProvider
  }

  /// Every medium, in `--mediums` order.
  static let entries: [Entry] = [
    .bluez,
    .pulseAudio,
    .lan,
  ]

  /// The outcome of choosing mediums: what runs, and what was left out with the reason.
  struct Choice {
    var kinds: DiscoveryMediums = []
    /// The chosen mediums' providers, by kind, in ``entries`` order.
    var chosen: [(kind: DiscoveryMediums, provider: MediumProvider)] = []
    var report: [(kind: DiscoveryMediums, availability: Availability)] = []

    var providers: [MediumProvider] { chosen.map(\.provider) }

    /// The providers of the chosen mediums but those of `kinds` (peer mode makes those with
    /// their transports).
    func providers(except kinds: DiscoveryMediums) -> [MediumProvider] {
      chosen.filter { !kinds.contains($0.kind) }.map(\.provider)
    }
  }

  /// Chooses `requested` (every available medium when `nil`).
  /// - Throws: ``ExitFailure`` (69) when a requested medium is unavailable, or none is.
  static func choose(_ requested: DiscoveryMediums?, options: MediumOptions) throws -> Choice {
    var choice = Choice()
    for entry in entries where requested?.contains(entry.kind) ?? true {
      let availability = entry.probe(options)
      choice.report.append((entry.kind, availability))
      switch availability {
      case .available:
        choice.kinds.insert(entry.kind)
        choice.chosen.append((entry.kind, entry.provider(options)))
      case .unavailable(let reason):
        // A medium asked for by name (--mediums, or --ble-adapter for BLE) must be there.
        if requested != nil || (entry.kind == .ble && options.bleAdapter != nil) {
          throw ExitFailure(
            "the \(entry.kind) medium is not available: \(reason)", code: ExitCodes.unavailable)
        }
      }
    }
    if choice.kinds.isEmpty {
      throw ExitFailure(
        "no medium is available here: "
          + choice.report.map { "\($0.kind): \(describe($0.availability))" }.joined(
            separator: "; "), code: ExitCodes.unavailable)
    }
    return choice
  }

  static func describe(_ availability: Availability) -> String {
    switch availability {
    case .available(let detail): "available (\(detail))"
    case .unavailable(let reason): "not available: \(reason)"
    }
  }
}

extension MediumCatalog.Entry {
  /// Bluetooth LE through BlueZ, when the kernel has an adapter (the one `--ble-adapter`
  /// names, if given); whether it is powered and whether this user may use it, the medium
  /// reports once it starts (power and permission errors, with the fix).
  static let bluez = Self(
    kind: .ble,
    probe: { options in
      let adapters =
        ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth")) ?? [])
        .filter(DiscoveryOptions.isAdapterName).sorted {
          $0.count == $1.count ? $0 < $1 : $0.count < $1.count
        }
      if let wanted = options.bleAdapter {
        guard adapters.contains(wanted) else {
          return .unavailable(
            "no Bluetooth adapter \"\(wanted)\"; adapters here: "
              + (adapters.isEmpty
                ? "none (/sys/class/bluetooth is empty)" : adapters.joined(separator: ", ")))
        }
        return .available("adapter \(wanted); power and access are checked when it starts")
      }
      guard let first = adapters.first else {
        return .unavailable("no Bluetooth adapter (/sys/class/bluetooth is empty)")
      }
      return .available("adapter \(first); power and access are checked when it starts")
    },
    // Peer mode makes this medium with its GATT transport (PeerCarrier.bluez, connectable).
    provider: { options in .bluez(BlueZConfiguration(adapter: options.bleAdapter)) })

  /// Near-ultrasonic audio through PulseAudio, when a server socket is there.
  static let pulseAudio = Self(
    kind: .audio,
    probe: { _ in
      let environment = ProcessInfo.processInfo.environment
      if let server = environment["PULSE_SERVER"], !server.isEmpty {
        return .available("PULSE_SERVER=\(server)")
      }
      let runtime = environment["XDG_RUNTIME_DIR"] ?? "/run/user/\(getuid())"
      let socket = runtime + "/pulse/native"
      guard FileManager.default.fileExists(atPath: socket) else {
        return .unavailable(
          "no PulseAudio server at \(socket): start one (`pulseaudio --start`) or set PULSE_SERVER")
      }
      return .available("server \(socket)")
    },
    provider: { _ in .pulseAudio() })

  /// UDP multicast on the local network: always available unless the named interface is
  /// missing.
  static let lan = Self(
    kind: .lan,
    probe: { options in
      guard let name = options.lanInterfaceName else {
        return .available("the interface the routing table picks; set --lan-interface to choose")
      }
      guard NetworkInterfaces.exists(name) else {
        return .unavailable(
          "no network interface \"\(name)\"; interfaces here: "
            + NetworkInterfaces.names().joined(separator: ", "))
      }
      return .available("interface \(name)")
    },
    provider: { options in .lan(options.lanConfiguration) })
}
