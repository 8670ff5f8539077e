import ArgumentParser

/// `nearby server …`: runs `nearby-server …` (the resolver server and its keys).
struct ServerAlias: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "server",
    abstract: "Run the resolver server or manage its keys (runs `nearby-server`).",
    discussion: "Every argument goes to nearby-server; `nearby server --help` shows its help.")

  @Argument(parsing: .captureForPassthrough, help: "Arguments for nearby-server.")
  var arguments: [String] = []

  func run() throws { try SiblingTool.server.exec(arguments) }
}

/// `nearby bench …`: runs `nearby-bench …` (the benchmarks, a development tool).
struct BenchAlias: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "bench",
    abstract: "Benchmarks (runs `nearby-bench`); build with -c release for meaningful numbers.",
    discussion: "Every argument goes to nearby-bench; `nearby bench --help` lists the benchmarks.")

  @Argument(parsing: .captureForPassthrough, help: "Arguments for nearby-bench.")
  var arguments: [String] = []

  func run() throws { try SiblingTool.bench.exec(arguments) }
}

/// `nearby demo …`: runs `nearby-bench demo …` (simulated devices in one process).
struct DemoAlias: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "demo",
    abstract: "Simulated devices publish, subscribe, find and lose (runs `nearby-bench demo`).",
    discussion: "Every argument goes to `nearby-bench demo`; `--json` prints one event a line.")

  @Argument(parsing: .captureForPassthrough, help: "Arguments for nearby-bench demo.")
  var arguments: [String] = []

  func run() throws { try SiblingTool.bench.exec(["demo"] + arguments) }
}
