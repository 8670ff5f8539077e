import CommandLineSupport
import ArgumentParser
import BackgroundPersistence
import Core
import Foundation
import PermissionStore
import Strategy

/// `nearby publish`: publishes one message and stays up, showing the publication's status,
/// until Ctrl-C (which unpublishes) or the TTL runs out.
struct PublishCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "publish",
    abstract: "Publish a message to nearby devices until Ctrl-C.",
    discussion: """
      Publishes TEXT (or the bytes of --file) and shows the publication's status; Ctrl-C or \
      SIGTERM unpublishes and exits 0, so subscribers see it lost at once. Mediums default \
      to every one this machine has (BLE, audio, LAN), each reported at start (with the \
      reason when one is missing).

      Resolver: with no --server (or $NEARBY_SERVER), peer resolution: no server anywhere. \
      Each device resolves tokens itself and asks a token's owner over the LAN: a token \
      heard on the LAN is asked of its sender, one heard on BLE or audio by a who-has \
      multicast (UDP port 7173, --peer-group-port; hop limit 1), so the devices need a \
      network segment in common. The exchange is sealed under a key derived from the \
      project key (--api-key, $NEARBY_API_KEY, else the open default key that every keyless \
      `nearby` shares); the key itself is never sent. --resolver server uses --server; \
      --resolver local the server on 127.0.0.1:7171, started in the background when none \
      answers.

      \(ExitCodes.help)

      Examples:
        nearby publish hello               # peer resolution: no server anywhere
        nearby publish hello --api-key "our project" --lan-interface eth0
        nearby publish "Menu of the day" --type menu --namespace com.example.cafe
        nearby publish --file card.vcf --type vcard --mediums lan --lan-interface eth0
        nearby publish hello --mediums ble --ble-adapter hci1
        nearby publish hello --ttl 600 --server http://resolver.local:7171 --api-key KEY
        nearby publish hello --resolver local   # the server on this host, started if needed
        nearby publish hello --json        # one JSON object a line: medium, status, note
        nearby publish hi --background --mediums ble --app com.example.kiosk
      """)

  @Argument(help: "The message text (or use --file).") var text: String?
  @Option(help: ArgumentHelp("Publish the bytes of this file (up to 102400).", valueName: "path"))
  var file: String?
  @Option(help: "The message type (up to 32 characters; default empty).") var type = ""
  @Option(help: "The namespace ([A-Za-z0-9._-], up to 64; default: the project's).")
  var namespace = ""
  @Flag(
    help: """
      Record the publication for background restore (nearby-restore) instead of running it \
      here; BLE-only, as in the original API.
      """)
  var background = false
  @Option(help: "The app id whose store keeps --background work.") var app = StoreOptions.defaultApp
  @OptionGroup var options: DiscoveryOptions

  func validate() throws {
    if (text == nil) == (file == nil) {
      throw ValidationError("give the message as TEXT or --file PATH (exactly one)")
    }
    do { try Message.validate(type: type) } catch { throw ValidationError("--type: \(error)") }
    do { try Message.validate(namespace: namespace) } catch {
      throw ValidationError("--namespace: \(error)")
    }
    if background, options.bleAdapter != nil {
      throw ValidationError(
        "--ble-adapter is not recorded for --background work (nearby-restore picks the adapter)")
    }
    if background, try options.requestedMediums() != .ble {
      throw ValidationError(
        "--background work is BLE-only (as in the original API): add --mediums ble")
    }
  }

  func message() throws -> Message {
    var content = Data((text ?? "").utf8)
    if let file {
      guard let data = FileManager.default.contents(atPath: file) else {
        throw ExitFailure("cannot read --file \(file)", code: ExitCodes.usage)
      }
      content = data
    }
    let message = Message(content: content, type: type, namespace: namespace)
    do { try message.validate() } catch {
      throw ExitFailure("\(error)", code: ExitCodes.usage)
    }
    return message
  }

  func run() async throws {
    do {
      try await publish()
    } catch let failure as ExitFailure {
      StandardStreams.error("error: \(failure.description)\n")
      throw failure.code
    }
  }

  private func publish() async throws {
    let message = try message()
    if background {
      var strategy = try options.strategy()
      strategy.mediums = .ble
      let store = BackgroundPersistence(store: try await DefaultsStore(appID: app))
      let recorded = try await store.add(
        BackgroundPublication(message: message, strategy: strategy))
      EventOutput(json: options.json).note(
        "recorded background publication \(recorded.id) for app \(app); nearby-restore "
          + "--app \(app) runs it (`nearby background on --app \(app)` enables restore)")
      return
    }
    let signals = SignalStream.make()
    let session = try await DiscoverySession.start(options, label: "nearby.publish")
    let output = session.output
    let strategy = try session.strategy(options)
    let publication: Publication
    do {
      publication = try await session.manager.publish(message) { $0.strategy = strategy }
    } catch {
      await session.manager.shutdown()
      throw ExitFailure("cannot publish: \(error)", code: ExitCodes.failure)
    }
    let web: Task<Void, Never>?
    do {
      web = try await WebSession.start(
        options, session: session, logger: options.logger(label: "nearby.web"))
    } catch {
      await publication.cancel()
      await session.shutdown()
      throw error
    }
    let errors = session.followMediumErrors()
    let preview = EventOutput.preview(message)
    let statuses = publication.statusUpdates
    let (ends, end) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(2))
    let watcher = Task {
      for await status in statuses {
        if output.json {
          output.message("status", message, mediums: strategy.mediums, status: status.rawValue)
        } else {
          StandardStreams.error(
            "nearby: \"\(preview)\" (type \"\(message.type)\", \(strategy.mediums), TTL \(strategy.ttl)): \(status.rawValue)\n"
          )
        }
      }
      end.yield("expired")
    }
    let waiter = Task {
      for await number in signals {
        end.yield(number == SIGINT ? "interrupted" : "terminated")
        return
      }
    }
    var iterator = ends.makeAsyncIterator()
    let reason = await iterator.next() ?? "stopped"
    waiter.cancel()
    await publication.cancel()
    watcher.cancel()
    errors.cancel()
    web?.cancel()
    await web?.value
    await session.shutdown()
    output.note(reason == "expired" ? "the publication's TTL ran out" : "unpublished (\(reason))")
  }
}
