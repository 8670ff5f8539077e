import ArgumentParser

/// The development tool beside `nearby`: benchmarks, and the demo's simulated devices. It
/// links what the user CLI does not (the server, the in-memory air of MediumTestKit, the audio
/// channel simulator); `nearby bench …` and `nearby demo …` run it.
@main
struct NearbyBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "nearby-bench",
    abstract: "Benchmarks and the simulated demo; build with `swift build -c release` for numbers.",
    discussion: """
      Examples:
        nearby-bench dispatch             found-event throughput and latency
        nearby-bench beacon-found --json  beacon seen → attachment found, cold and warm
        nearby-bench lan-peer             LAN publish → found, peer resolution against the server
        nearby-bench demo                 simulated devices publish, subscribe, find and lose
      """,
    subcommands: [
      DispatchBench.self, StoreBench.self, RestoreBench.self, ServerBench.self, DBusBench.self,
      BLEBench.self, AudioBench.self, AudioPulseBench.self, AudioCrowdBench.self,
      AudioCrowdPeerBench.self, BeaconsBench.self,
      BLEVMBench.self, BeaconFoundBench.self, LANBench.self, LANPeerBench.self, GattPeerBench.self,
      IdentifierBench.self, WebBench.self,
      DemoCommand.self,
    ])
}
