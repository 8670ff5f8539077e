import ArgumentParser
import CommandLineSupport

@main
struct Nearby: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "nearby",
    abstract: "Nearby Messages for Linux: publish and subscribe to the messages of nearby devices.",
    discussion: """
      Exit codes: 0 success; 1 the command ran but its checks failed; 64 bad arguments.

      Examples:
        nearby demo                 simulated devices publish, subscribe, find and lose
        nearby demo --json          the same, one JSON event a line
        nearby bench dispatch       found-event throughput and latency (build with -c release)
        nearby server               the resolver server on 127.0.0.1:7171 (SQLite, no set-up)
        nearby publish hello        publish until Ctrl-C (peer resolution: no server needed)
        nearby subscribe            a live table of the messages nearby
        nearby ble scan --json      every BLE advertisement BlueZ hears, one JSON object a line
        nearby audio encode --token 0123456789abcdef --out t.wav && nearby audio decode t.wav
        nearby audio selftest       does this speaker → microphone path carry 18.5–20 kHz?
      """,
    version: NearbyVersion.current,
    subcommands: [
      DemoAlias.self, BenchAlias.self, ServerAlias.self, PublishCommand.self,
      SubscribeCommand.self, PermissionCommand.self, BackgroundCommand.self, BLECommand.self,
      AudioCommand.self, BeaconsCommand.self, NamespacesCommand.self,
    ]
  )
}
