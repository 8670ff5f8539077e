import CommandLineSupport
import ArgumentParser
import BackgroundPersistence
import Core
import Foundation
import PermissionStore
import Strategy

/// `nearby background status|on|off|publish|subscribe|remove|install`.
struct BackgroundCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "background",
    abstract: "An app's background mode and background publications/subscriptions (BLE only).",
    discussion: """
      Background work is recorded in the app's store and kept alive by nearby-restore (a \
      systemd user service: `nearby background install --app ID`).
      """,
    subcommands: [
      Status.self, On.self, Off.self, Publish.self, Subscribe.self, Remove.self,
      InstallCommand.self,
    ])

  struct Output: Encodable {
    var app: String
    var backgroundMode: Bool
    var publications: [BackgroundPublication]
    var subscriptions: [BackgroundSubscription]
  }

  static func report(_ background: BackgroundPersistence, _ options: StoreOptions) -> String {
    let output = Output(
      app: options.app, backgroundMode: background.isEnabled,
      publications: background.publications, subscriptions: background.subscriptions)
    if options.json { return JSONLine.encode(output) }
    var lines = ["\(options.app): background mode \(output.backgroundMode ? "on" : "off")"]
    for publication in output.publications {
      lines.append(
        "  publication \(publication.id): \(publication.message) ttl \(publication.strategy.ttl)")
    }
    for subscription in output.subscriptions {
      lines.append(
        "  subscription \(subscription.id)\(subscription.beaconStrategy == nil ? "" : " to beacons"): "
          + "namespace \"\(subscription.namespace)\" type \(subscription.type ?? "*") "
          + "ttl \(subscription.strategy.ttl)")
    }
    return lines.joined(separator: "\n")
  }

  static func open(_ options: StoreOptions) async throws -> BackgroundPersistence {
    BackgroundPersistence(store: try await options.openStore())
  }

  struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Show the mode and the recorded background work.")
    @OptionGroup var options: StoreOptions
    func run() async throws {
      print(BackgroundCommand.report(try await BackgroundCommand.open(options), options))
    }
  }

  struct On: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turn background mode on.")
    @OptionGroup var options: StoreOptions
    func run() async throws {
      let background = try await BackgroundCommand.open(options)
      try await background.setEnabled(true)
      print(BackgroundCommand.report(background, options))
    }
  }

  struct Off: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turn background mode off.")
    @OptionGroup var options: StoreOptions
    func run() async throws {
      let background = try await BackgroundCommand.open(options)
      try await background.setEnabled(false)
      print(BackgroundCommand.report(background, options))
    }
  }

  /// The TTL option shared by publish and subscribe.
  struct TTLOption: ParsableArguments {
    @Option(help: "Seconds the work stays active (max 86400), or 'infinite'.")
    var ttl: String = "infinite"

    func strategy() throws -> Strategy {
      var strategy = Strategy.bleOnly
      if ttl == "infinite" {
        strategy.ttl = .infinite
      } else if let seconds = Double(ttl) {
        strategy.ttl = try TTL(seconds: seconds)
      } else {
        throw ValidationError("--ttl takes seconds (up to 86400) or 'infinite', got \(ttl)")
      }
      return strategy
    }
  }

  struct Publish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Record a background publication of TEXT (restored by nearby-restore).")
    @OptionGroup var options: StoreOptions
    @OptionGroup var ttl: TTLOption
    @Argument(help: "The message text.") var text: String
    @Option(help: "The message type (≤ 32 characters).") var type = ""
    @Option(help: "The message namespace.") var namespace = ""
    func run() async throws {
      let background = try await BackgroundCommand.open(options)
      let recorded = try await background.add(
        BackgroundPublication(
          message: Message(text: text, type: type, namespace: namespace),
          strategy: try ttl.strategy()))
      print(options.json ? JSONLine.encode(recorded) : "recorded publication \(recorded.id)")
    }
  }

  struct Subscribe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Record a background subscription (restored by nearby-restore).")
    @OptionGroup var options: StoreOptions
    @OptionGroup var ttl: TTLOption
    @Option(help: "Messages of this type only (default: every type).") var type: String?
    @Option(help: "Messages of this namespace.") var namespace = ""
    func run() async throws {
      let background = try await BackgroundCommand.open(options)
      let recorded = try await background.add(
        BackgroundSubscription(namespace: namespace, type: type, strategy: try ttl.strategy()))
      print(options.json ? JSONLine.encode(recorded) : "recorded subscription \(recorded.id)")
    }
  }

  struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Forget a background publication or subscription by id.")
    @OptionGroup var options: StoreOptions
    @Argument(help: "The id printed by publish/subscribe or status.") var id: String
    func run() async throws {
      let background = try await BackgroundCommand.open(options)
      guard try await background.remove(id: id) else {
        throw ValidationError("no background publication or subscription has id \(id)")
      }
      print(options.json ? JSONLine.encode(["removed": id]) : "removed \(id)")
    }
  }
}
