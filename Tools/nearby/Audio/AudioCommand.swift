import ArgumentParser

struct AudioCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "audio",
    abstract:
      "The near-ultrasonic token modem: write tokens to WAV files and find them in WAV files.",
    subcommands: [
      AudioEncodeCommand.self, AudioDecodeCommand.self, AudioSendCommand.self,
      AudioListenCommand.self, AudioSelftestCommand.self,
    ])
}
