import Core
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
    .notBuiltIn(.ble, plugin: "BlueZ (BLE)"),
    .notBuiltIn(.audio, plugin: "PulseAudio (audio)"),
    .lan,
  ]

  /// The outcome of choosing mediums: what runs, and what was left out with the reason.
  struct Choice {
    var kinds: DiscoveryMediums = []
    var providers: [MediumProvider] = []
    var report: [(kind: DiscoveryMediums, availability: Availability)] = []
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
        choice.providers.append(entry.provider(options))
      case .unavailable(let reason):
        if requested != nil {
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
  /// A medium whose plugin is not in this build yet.
  static func notBuiltIn(_ kind: DiscoveryMediums, plugin: String) -> Self {
    Self(
      kind: kind,
      probe: { _ in .unavailable("the \(plugin) plugin is not built into this nearby yet") },
      provider: { _ in MediumProvider(name: "\(kind)") { _ in throw MediumNotBuiltIn() } })
  }

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

struct MediumNotBuiltIn: Error {}
