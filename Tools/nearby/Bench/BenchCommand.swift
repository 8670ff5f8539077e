import ArgumentParser

struct BenchCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "bench",
    abstract: "Benchmarks; build with `swift build -c release` for meaningful numbers.",
    subcommands: [
      DispatchBench.self, StoreBench.self, RestoreBench.self, ServerBench.self, DBusBench.self,
      BLEBench.self, AudioBench.self, AudioPulseBench.self, BeaconsBench.self,
      BeaconFoundBench.self,
      LANBench.self,
    ])
}
