import TestSupport
import Core
import Strategy
import MediumTestKit
import Testing
import Tokens

/// The simulated mediums the tests run on.
typealias Kind = DiscoveryMediums

extension DiscoveryMediums {
  static let allCases: [DiscoveryMediums] = [.ble, .audio]

  /// A medium of this kind for `device` on `air`.
  func medium(on air: Air, device: String) async -> AirMedium {
    await air.makeMedium(device: device, kind: self)
  }

  /// Whether `sighting` was made on this medium.
  func matches(_ sighting: Sighting) -> Bool { sighting.medium == self }

  /// Reports `status` on this medium of `device`.
  func setStatus(_ status: MediumStatus, on air: Air, device: String) async {
    await air.setStatus(status, device: device, medium: self)
  }

  /// Whether `hearer` can hear `speaker` on this medium now.
  func canHear(_ hearer: String, _ speaker: String, on air: Air) async -> Bool {
    await air.canHear(hearer, speaker, on: self)
  }

  /// This medium's range in `configuration`, in metres.
  func range(in configuration: Air.Configuration) -> Double {
    self == .audio ? configuration.audioRange : configuration.bleRange
  }
}

/// An air with a short advertising interval, so that tests run fast.
func makeAir(
  interval: Duration = .milliseconds(20),
  _ configure: (inout Air.Configuration) -> Void = { _ in }
) -> Air {
  var configuration = Air.Configuration()
  configuration.advertiseInterval = interval
  configure(&configuration)
  return Air(configuration: configuration)
}

typealias Recorder = StreamRecorder
